import Foundation
import ListWire
import Testing

/// `scripts/install --prefix` into a temporary directory, with the binaries under test
/// (`LISTD_INSTALL_BIN`; a nested release build would wait on this build's lock) and the man pages of
/// man/, then `scripts/uninstall`.
@Suite("scripts/install and scripts/uninstall", .serialized)
struct InstallTests {
    static let repository = protocolDirectory.deletingLastPathComponent()

    static let programs = ["listd", "listctl", "listview", "listweb"]

    /// Runs `scripts/NAME` from the repository with the binaries under test.
    static func script(_ name: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try runProgram(
            repository.appendingPathComponent("scripts/\(name)"), arguments,
            extraEnvironment: ["LISTD_INSTALL_BIN": binaryDirectory.path])
    }

    /// Installs into a fresh prefix; returns the prefix (its parent is the test's to remove).
    static func install() throws -> String {
        let prefix = try makeTemporaryDirectory() + "/usr"
        let result = try script("install", ["--prefix", prefix])
        #expect(result.status == 0, "scripts/install failed: \(result.err)")
        return prefix
    }

    /// Every file the README promises is where it should be, and the manifest names exactly those.
    @Test func installsEveryPartAndRecordsIt() throws {
        let prefix = try Self.install()
        defer { try? FileManager.default.removeItem(atPath: (prefix as NSString).deletingLastPathComponent) }
        var expected = Self.programs.map { "bin/\($0)" } + ["lib/listd/plugins/emoji-plugin", "lib/listd/plugins/card-plugin"]
        expected += ["lib/systemd/system/listd.service", "lib/systemd/system/listweb.service", "lib/systemd/system/listd.socket", "lib/sysusers.d/listd.conf"]
        expected += ["share/man/man8/listd.8", "share/man/man1/listctl.1", "share/man/man1/listview.1", "share/man/man1/listweb.1"]
        for program in Self.programs {
            expected += [
                "share/bash-completion/completions/\(program)", "share/zsh/site-functions/_\(program)",
                "share/fish/vendor_completions.d/\(program).fish",
            ]
        }
        expected += ["share/doc/listd/listd.conf.example", "share/doc/listd/README.md", "share/doc/listd/PROTOCOL.md"]
        let docs = Self.repository.appendingPathComponent("docs").path
        let guides = try FileManager.default.contentsOfDirectory(atPath: docs).filter { $0.hasSuffix(".md") }
        let screens = try FileManager.default.contentsOfDirectory(atPath: docs + "/screens")
        #expect(!guides.isEmpty && screens.contains("home-phone.png"))
        expected += guides.map { "share/doc/listd/docs/\($0)" } + screens.map { "share/doc/listd/docs/screens/\($0)" }
        expected += ["share/listd/installed-files"]
        let manifest = try String(contentsOfFile: prefix + "/share/listd/installed-files", encoding: .utf8)
        let files = manifest.split(separator: "\n").filter { $0.hasPrefix("f ") }.map { String($0.dropFirst(2)) }
        #expect(Set(files) == Set(expected.map { prefix + "/" + $0 }))
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "\(file) is missing") }
        for program in Self.programs {
            let version = try runProgram(URL(fileURLWithPath: prefix + "/bin/" + program), ["--version"])
            #expect(version.status == 0 && version.out == ListdVersion.number + "\n", "\(program) --version: \(version)")
            #expect(FileManager.default.isExecutableFile(atPath: prefix + "/bin/" + program))
        }
        let sysusers = try String(contentsOfFile: prefix + "/lib/sysusers.d/listd.conf", encoding: .utf8)
        #expect(sysusers.contains("u listd"))
    }

    /// The installed unit names the installed programs; started the way the unit starts it (plus a
    /// private socket and no state), listd runs the installed plugins and answers the installed listctl.
    @Test func theInstalledUnitStartsTheInstalledPrograms() throws {
        let prefix = try Self.install()
        defer { try? FileManager.default.removeItem(atPath: (prefix as NSString).deletingLastPathComponent) }
        let unitDirectory = prefix + "/lib/systemd/system"
        let service = try String(contentsOfFile: unitDirectory + "/listd.service", encoding: .utf8)
        let execStart = try #require(service.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let command = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(command == [prefix + "/bin/listd", "--plugin-directory", prefix + "/lib/listd/plugins"])
        #expect(!service.contains("/usr/local/"), "every path is under the prefix")

        // Clean, and the man page the units name (man:listd(8)) is found among the installed pages.
        let verify = try UnitFileTests.run(
            ["verify", "./listd.service", "./listd.socket", "./listweb.service"], in: unitDirectory, manualPath: prefix + "/share/man")
        let web = try String(contentsOfFile: unitDirectory + "/listweb.service", encoding: .utf8)
        #expect(web.contains("ExecStart=\(prefix)/bin/listweb ") && !web.contains("/usr/local/"))
        #expect(verify.status == 0 && verify.output.isEmpty, "systemd-analyze verify: \(verify.output)")

        let daemon = try Daemon(arguments: Array(command.dropFirst()), executable: URL(fileURLWithPath: command[0]))
        let listctl = URL(fileURLWithPath: prefix + "/bin/listctl")
        let ping = try runProgram(listctl, ["ping"], daemon: daemon)
        #expect(ping.status == 0, "listctl ping: \(ping.err)")
        // Both installed plugins connect and announce their cell types.
        var provided: Set<String> = []
        for _ in 0..<100 {
            let stats = try daemon.request(["cmd": "stats"]).result()
            provided = Set((stats["plugins"]?.arrayValue ?? []).flatMap { $0["provides"]?.arrayValue ?? [] }.compactMap(\.stringValue))
            if provided.isSuperset(of: ["emoji", "card"]) { break }
            usleep(100_000)
        }
        #expect(provided.isSuperset(of: ["emoji", "card"]), "plugins: \(provided)")
        #expect(try daemon.stop() == 0)
    }

    /// Each installed page is man/'s with the prefix's paths in place of /usr/local's, and renders with
    /// `man -l` (ManPageTests checks the pages themselves).
    @Test(arguments: [("listd", "8", "--ephemeral"), ("listctl", "1", "append-items"), ("listview", "1", "--reconnect-seconds"), ("listweb", "1", "--allow-actions")])
    func manPagesRender(program: String, section: String, option: String) throws {
        let prefix = try Self.install()
        defer { try? FileManager.default.removeItem(atPath: (prefix as NSString).deletingLastPathComponent) }
        let page = "\(prefix)/share/man/man\(section)/\(program).\(section)"
        let man = try runProgram(URL(fileURLWithPath: "/usr/bin/man"), ["-l", page], extraEnvironment: ["MANPAGER": "cat", "MANWIDTH": "100"])
        #expect(man.status == 0, "man -l \(page): \(man.err)")
        let text = man.out.replacingOccurrences(of: "‐\n", with: "").replacingOccurrences(of: "\u{2010}", with: "-")
        #expect(text.hasPrefix("\(program.uppercased())(\(section))"))
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SIGNALS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"] {
            #expect(text.contains("\n\(heading)\n"), "\(program).\(section) has no \(heading) section")
        }
        #expect(text.contains(option), "\(program).\(section) does not show \(option)")
        #expect(text.contains("LISTD_SOCKET"))
        #expect(!text.contains("/usr/local/"), "every path is under the prefix")
        let installed = try String(contentsOfFile: page, encoding: .utf8)
        let source = try String(contentsOf: Self.repository.appendingPathComponent("man/\(program).\(section).mdoc"), encoding: .utf8)
        #expect(installed == source.replacingOccurrences(of: "/usr/local/", with: prefix + "/"))
        if program == "listd" { #expect(text.contains(prefix + "/lib/listd/plugins")) }
        if program == "listweb" { #expect(text.contains(prefix + "/lib/systemd/system/listweb.service")) }
    }

    /// The completions are valid scripts for their shells; bash's completes listctl's commands.
    @Test func completionsLoad() throws {
        let prefix = try Self.install()
        defer { try? FileManager.default.removeItem(atPath: (prefix as NSString).deletingLastPathComponent) }
        let bash = URL(fileURLWithPath: "/bin/bash")
        for program in Self.programs {
            let file = "\(prefix)/share/bash-completion/completions/\(program)"
            let loaded = try runProgram(bash, ["-c", "source \(file) && complete -p \(program)"])
            #expect(loaded.status == 0 && loaded.out.contains(program), "bash completion for \(program): \(loaded.err)")
            let zsh = try String(contentsOfFile: "\(prefix)/share/zsh/site-functions/_\(program)", encoding: .utf8)
            #expect(zsh.hasPrefix("#compdef \(program)"))
            let fish = try String(contentsOfFile: "\(prefix)/share/fish/vendor_completions.d/\(program).fish", encoding: .utf8)
            #expect(fish.contains("complete -c '\(program)'") || fish.contains("complete -c \(program)"))
        }
        // bash offers listctl's commands after "listctl ".
        let file = "\(prefix)/share/bash-completion/completions/listctl"
        let offered = try runProgram(bash, [
            "-c",
            "source \(file); COMP_WORDS=(listctl app); COMP_CWORD=1; COMP_LINE='listctl app'; COMP_POINT=11; "
                + "$(complete -p listctl | sed -E 's/.*-F ([^ ]+).*/\\1/') listctl app listctl; printf '%s\\n' \"${COMPREPLY[@]}\"",
        ])
        #expect(offered.out.split(separator: "\n").contains("apply") && offered.out.contains("append-items"), "offered: \(offered)")
    }

    /// Uninstall removes every file and directory install made, and nothing else: a file someone added
    /// stays, with the directories holding it.
    @Test func uninstallRemovesExactlyWhatWasInstalled() throws {
        let prefix = try Self.install()
        let top = (prefix as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: top) }
        try "mine\n".write(toFile: prefix + "/share/doc/listd/notes.txt", atomically: true, encoding: .utf8)
        // A second install over the first (an upgrade) records the same files.
        let again = try Self.script("install", ["--prefix", prefix])
        #expect(again.status == 0, "\(again.err)")

        let removed = try Self.script("uninstall", ["--prefix", prefix])
        #expect(removed.status == 0, "\(removed.err)")
        #expect(removed.err.contains("kept \(prefix)/share/doc/listd"))
        let left = try FileManager.default.subpathsOfDirectory(atPath: top).sorted()
        #expect(left == ["usr", "usr/share", "usr/share/doc", "usr/share/doc/listd", "usr/share/doc/listd/notes.txt"])

        try FileManager.default.removeItem(atPath: prefix + "/share/doc/listd/notes.txt")
        let nothing = try Self.script("uninstall", ["--prefix", prefix])
        #expect(nothing.status == 1 && nothing.err.contains("nothing to remove"))
    }

    /// With --destdir the files are staged under it while the units name the final prefix.
    @Test func destdirStagesWithTheFinalPaths() throws {
        let stage = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stage) }
        let result = try Self.script("install", ["--prefix", "/usr", "--destdir", stage])
        #expect(result.status == 0, "\(result.err)")
        let service = try String(contentsOfFile: stage + "/usr/lib/systemd/system/listd.service", encoding: .utf8)
        #expect(service.contains("ExecStart=/usr/bin/listd --plugin-directory /usr/lib/listd/plugins"))
        let manifest = try String(contentsOfFile: stage + "/usr/share/listd/installed-files", encoding: .utf8)
        #expect(manifest.contains("f /usr/bin/listd\n") && !manifest.contains(stage))
        #expect(try Self.script("uninstall", ["--prefix", "/usr", "--destdir", stage]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: stage).isEmpty)
    }
}
