import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// Runs listctl with `arguments` (and `input` on stdin); returns its exit status, stdout and stderr.
func listctl(_ daemon: Daemon, _ arguments: [String], input: String? = nil) throws -> (status: Int32, out: String, err: String) {
    try runExecutable("listctl", arguments, daemon: daemon, input: input)
}

@Suite("listctl against a real listd", .serialized)
struct ListctlTests {
    /// `listctl show A --json | listctl apply B -` copies a snapshot (payloads and all).
    @Test func showJSONIsAcceptedByApply() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let shown = try listctl(daemon, ["--json", "show", "home"])
        #expect(shown.status == 0)
        let copied = try listctl(daemon, ["apply", "copy", "-"], input: shown.out)
        #expect(copied.status == 0, "\(copied.err)")
        let original = try daemon.request(["cmd": "snapshot", "dataSource": "home"]).result()["sections"]
        #expect(try daemon.request(["cmd": "snapshot", "dataSource": "copy"]).result()["sections"] == original)
        let failed = try listctl(daemon, ["apply", "other", "-"], input: #"{"ok":false,"error":{"code":"data-source-not-found"}}"#)
        #expect(failed.status != 0 && failed.err.contains("a reply without a snapshot"), "\(failed.err)")
    }

    @Test func tablesMutationsAndExitStatus() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let list = try listctl(daemon, ["ls"])
        #expect(list.status == 0)
        #expect(list.out.contains("home") && list.out.contains("emoji") && list.out.hasPrefix("DATA SOURCE"))

        let append = try listctl(daemon, ["append-items", "home", #"c9={"title":"새 상담"}"#, "--to-section", "consult"])
        #expect(append.status == 0)
        #expect(append.out == "version 1\n  1 insert          [0,2] c9\n", "\(append)")
        #expect(try daemon.request(["cmd": "item", "dataSource": "home", "item": "c9"]).result()["data"] == ["title": "새 상담"])

        let missing = try listctl(daemon, ["move-item", "home", "nope", "--before", "c9"])
        #expect(missing.status == 1)
        #expect(missing.err.contains("item-not-found"))

        let json = try listctl(daemon, ["--json", "index-path", "home", "c9"])
        #expect(try JSONParser.parse(json.out.trimmingCharacters(in: .whitespacesAndNewlines))["result"]?["indexPath"] == [0, 2])

        let apply = try listctl(daemon, ["apply", "scratch", "-"], input: #"{"sections":[{"id":"a","items":["x","y"]}]}"#)
        #expect(apply.status == 0 && apply.out == "version 1\n  1 insert section  0 a (2 items)\n", "\(apply)")
        let show = try listctl(daemon, ["show", "scratch"])
        #expect(show.out.contains("  0  x") && show.out.contains("  1  y"))

        // --no-animation on any mutation: the change is marked, and listctl says so.
        let still = try listctl(daemon, ["append-items", "scratch", "z", "--no-animation"])
        #expect(still.status == 0 && still.out == "version 2 without animation\n  1 insert          [0,2] z\n", "\(still)")
        #expect(!append.out.contains("without animation"))

        let edited = try listctl(daemon, ["edit-section-snapshot", "scratch", "a", "-"], input: #"[{"op":"append","parent":"x","items":["x1"]},{"op":"expand","items":["x"]}]"#)
        #expect(edited.status == 0 && edited.out == "version 3\n  1 insert          [0,1] x1\n  2 reconfigure     [0,0] x\n", "\(edited)")
        let deleted = try listctl(daemon, ["edit-section-snapshot", "scratch", "a", "-"], input: #"[{"op":"delete","items":["x1"]}]"#)
        #expect(deleted.out == "version 4\n  1 delete          [0,1] x1\n", "\(deleted)")

        let call = try listctl(daemon, ["call", "numberOfItems", "dataSource=scratch", "section=a"])
        #expect(call.status == 0 && call.out.contains("\"count\":3"))
    }

    /// `register --replace` changes a definition in place, `registration` reads one back; repeating an
    /// identical register (the seeds' pitfall) is warned about on stderr and counted in stats.
    @Test func registrationsAreReplacedAndReadBack() throws {
        let daemon = try Daemon()
        let definition = #"{"contentConfiguration":{"type":"cell","text":"{{title}}"}}"#
        #expect(try listctl(daemon, ["register", "row", "-"], input: definition).out == "created row (cell, cell)\n")
        let refused = try listctl(daemon, ["register", "row", "-"], input: #"{"contentConfiguration":{"type":"valueCell"}}"#)
        #expect(refused.status == 1 && refused.err.contains("register it with replace: true"), "\(refused)")
        let replaced = try listctl(daemon, ["register", "row", "-", "--replace"], input: #"{"contentConfiguration":{"type":"valueCell"}}"#)
        #expect(replaced.status == 0 && replaced.out == "replaced row (cell, valueCell)\n", "\(replaced)")
        let shown = try listctl(daemon, ["registration", "row"])
        #expect(shown.status == 0 && shown.out.hasPrefix("row (cell, valueCell), owner uid ") && shown.out.contains(#""type":"valueCell""#), "\(shown)")
        #expect(try listctl(daemon, ["registration", "nope"]).status == 1)
        // One connection repeating the same register: the reply warns (listctl prints it) past 3 in 10 s.
        let connection = try daemon.connect()
        let request: JSONValue = ["cmd": "register", "registration": "row", "contentConfiguration": ["type": "valueCell"]]
        var warnings: [JSONValue] = []
        for _ in 0..<5 { warnings.append(try connection.request(request).result()["warnings"] ?? .null) }
        #expect(warnings.prefix(3).allSatisfy { $0 == .null } && warnings[3].arrayValue.first?["code"] == "registration-repeated", "\(warnings)")
        #expect(try daemon.request(["cmd": "stats"]).result()["cells"]?["registrationsRepeated"] == 2)
    }

    /// `expansion-scope` reads and sets whose expansion views show; `expand --view` expands in one view.
    @Test func expansionScopeAndExpandingInOneView() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        #expect(try listctl(daemon, ["expansion-scope", "emoji"]).out == "perView\n")
        #expect(try listctl(daemon, ["expansion-scope", "home"]).out == "shared\n")
        let view = try daemon.connect()
        _ = try view.request(["cmd": "attach", "dataSource": "emoji", "view": "side"]).result()
        let expanded = try listctl(daemon, ["expand", "emoji", "outline", "smileys", "--view", "side"])
        #expect(expanded.status == 0 && expanded.out.hasPrefix("expanded in view side only (version "), "\(expanded)")
        let event = try #require(try view.readJSON(timeout: .seconds(10)))
        #expect(event["event"] == "expansionChanged" && event["changes"]?["stages"]?.arrayValue.first?["itemInserts"]?.arrayValue.count == 3, "\(event)")
        let set = try listctl(daemon, ["expansion-scope", "emoji", "shared"])
        #expect(set.status == 0 && set.out.hasPrefix("expansion scope shared (version "), "\(set)")
        let refused = try listctl(daemon, ["collapse", "emoji", "outline", "smileys", "--view", "side"])
        #expect(refused.status == 1 && refused.err.contains("shares one expansion"), "\(refused)")
        #expect(try listctl(daemon, ["expansion-scope", "emoji", "sideways"]).status != 0)
    }

    /// Every snapshot edit listd knows has a listctl subcommand (one table, written with the router's
    /// codec), and each form of arguments reaches the data source as meant.
    @Test func everyEditHasASubcommand() throws {
        let daemon = try Daemon(arguments: ["--ephemeral"])
        let help = try listctl(daemon, ["--help"]).out
        for kind in EditCodec.Kind.allCases where kind != .replaceItems {
            let name = kind.rawValue.reduce(into: "") { $0 += $1.isUppercase ? "-" + $1.lowercased() : String($1) }
            #expect(help.contains("  \(name) "), "\(name) is missing from listctl --help")
        }
        let steps: [[String]] = [
            ["append-sections", "d", "s", #"t={"title":"T"}"#],
            ["insert-sections", "d", "r", "--before", "s"],
            ["update-sections", "d", #"s={"title":"S"}"#],
            ["append-items", "d", "a", "b", "--to-section", "s"],
            ["append-items", "d", "z"],
            ["insert-items", "d", #"c={"n":1}"#, "--after", "a"],
            ["move-item", "d", "b", "--before", "a"],
            ["move-section", "d", "t", "--before", "r"],
            ["update-items", "d", #"a={"n":2}"#],
            ["reload-items", "d", "a"],
            ["reconfigure-items", "d", "c"],
            ["reload-sections", "d", "s"],
            ["delete-items", "d", "c", "--if-version", "12"],
            ["delete-sections", "d", "r"],
        ]
        for step in steps {
            let run = try listctl(daemon, step)
            #expect(run.status == 0, "\(step): \(run.err)")
        }
        let snapshot = try daemon.request(["cmd": "snapshot", "dataSource": "d"]).result()
        #expect(snapshot["version"] == 14)
        #expect(
            snapshot["sections"]
                == [
                    ["id": "t", "data": ["title": "T"], "items": ["z"]],
                    ["id": "s", "data": ["title": "S"], "items": ["b", ["id": "a", "data": ["n": 2]]]],
                ], "\(snapshot)")
        let stale = try listctl(daemon, ["delete-all-items", "d", "--if-version", "3"])
        #expect(stale.status == 1 && stale.err.contains("version-conflict"), "\(stale.err)")
        let placement = try listctl(daemon, ["move-item", "d", "a"])
        #expect(placement.status != 0 && placement.err.contains("--before"), "\(placement.err)")
        #expect(try listctl(daemon, ["delete-all-items", "d"]).status == 0)
        #expect(try daemon.request(["cmd": "snapshot", "dataSource": "d"]).result()["sections"] == [])
    }

    /// Every command prints a human form (JSON with --json), and tables line up by display width: a
    /// Korean name takes two columns a character.
    @Test func humanFormsAndWideCharacters() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        #expect(try listctl(daemon, ["create", "상담목록"]).out == "created 상담목록 at version 0\n")
        #expect(try listctl(daemon, ["create", "ab"]).out == "created ab at version 0\n")
        let table = try listctl(daemon, ["ls"]).out.split(separator: "\n").map(String.init).dropFirst()  // (the header has a space in a name)
        func columns(_ text: Substring) -> Int { text.unicodeScalars.reduce(0) { $0 + ((0xAC00...0xD7A3).contains($1.value) ? 2 : 1) } }
        let starts = table.map { line -> Int in
            let name = line.prefix { $0 != " " }
            let rest = line.dropFirst(name.count).prefix { $0 == " " }
            return columns(name) + rest.count
        }
        #expect(Set(starts).count == 1, "the second column starts at one display column: \(table)")
        #expect(try listctl(daemon, ["drop", "ab"]).out == "dropped ab (it was at version 0)\n")
        let hello = try listctl(daemon, ["hello"]).out
        #expect(hello.hasPrefix("listd/") && hello.contains("\nyou are ") && hello.contains("maxLineBytes"), "\(hello)")
        let layout = try listctl(daemon, ["layout", "home"]).out
        #expect(layout.contains("(default)  group horizontal 1.0 wide × 5 high, 1 per group"), "\(layout)")
        #expect(layout.contains("company    group horizontal 56 wide × 5 high, scrolls continuousGroupLeadingBoundary, spacing 2"), "\(layout)")
        let json = try listctl(daemon, ["--json", "create", "c"]).out
        #expect(try JSONParser.parse(json.trimmingCharacters(in: .whitespacesAndNewlines))["result"]?["dataSource"] == "c", "\(json)")
    }

    /// What one can set, one can read back in the shape that sets it: copying a provider and a layout.
    @Test func cellProviderAndLayoutReadBackAndCopy() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        _ = try listctl(daemon, ["apply", "copy", "-"], input: #"{"sections":[{"id":"consult","items":["x"]}]}"#)
        let empty = try listctl(daemon, ["cell-provider", "copy"])
        #expect(empty.status == 0 && empty.out == "no rules: every item shows the default presentation\n", "\(empty)")
        let rules = try listctl(daemon, ["--json", "cell-provider", "home"])
        #expect(rules.out.hasPrefix(#"{"rules":[{"registration":"consultCell","section":"consult"}"#), "\(rules)")
        #expect(try listctl(daemon, ["cell-provider", "copy", "-"], input: rules.out).status == 0)
        #expect(try listctl(daemon, ["--json", "cell-provider", "copy"]).out == rules.out)
        let table = try listctl(daemon, ["cell-provider", "copy"])
        #expect(table.out.contains("consult  -      consultCell"), "\(table)")
        let layout = try listctl(daemon, ["--json", "layout", "home"])
        #expect(layout.status == 0 && layout.out.hasPrefix(#"{"default":"#), "\(layout)")
        #expect(try listctl(daemon, ["layout", "copy", "-"], input: layout.out).status == 0)
        #expect(try listctl(daemon, ["--json", "layout", "copy"]).out == layout.out)
        // Only a default: the rules stay, and listctl says so.
        let defaultOnly = try listctl(daemon, ["cell-provider", "copy", "-"], input: #"{"default":"consultCell"}"#)
        #expect(defaultOnly.status == 0 && defaultOnly.out == "3 rules kept; default: consultCell\n", "\(defaultOnly)")
        #expect(try listctl(daemon, ["cell-provider", "copy"]).out.hasSuffix("consult  -      consultCell\ncompany  -      companyCard\nexpert   -      expertCell\ndefault: consultCell\n"))
        let replaced = try listctl(daemon, ["cell-provider", "copy", "-"], input: #"{"rules":[]}"#)
        #expect(replaced.out == "0 rules set (replacing 3); default: none (the default presentation)\n", "\(replaced)")
    }

    @Test func payloadsThatLookLikeJSONMustBeJSON() throws {
        let daemon = try Daemon()
        _ = try listctl(daemon, ["append-sections", "d", "S"])
        let bad = try listctl(daemon, ["append-items", "d", "k={bad json"])
        #expect(bad.status == 1 && bad.err.contains("k={bad json: the payload looks like JSON but is not valid JSON"), "\(bad)")
        #expect(try listctl(daemon, ["append-items", "d", "k=[1,", "w=x"]).status == 1)
        let fine = try listctl(daemon, ["append-items", "d", "w=hello world", #"j={"a":1}"#, #"q="{not json}""#])
        #expect(fine.status == 0, "\(fine)")
        let items = try daemon.request(["cmd": "snapshot", "dataSource": "d"]).result()["sections"]?.arrayValue.first?["items"]
        #expect(items == [["id": "w", "data": "hello world"], ["id": "j", "data": ["a": 1]], ["id": "q", "data": "{not json}"]], "nothing of the refused commands was stored")
    }

    @Test func everyProgramHasAVersion() throws {
        for program in ["listd", "listctl", "listview"] {
            let result = try runExecutable(program, ["--version"])
            #expect(result.status == 0 && result.out == "0.1.0\n", "\(program): \(result)")
        }
        #expect(try Daemon().request(["cmd": "hello"]).result()["server"] == "listd/0.1.0")
    }

    @Test func accessShowsAUsersLevelAndWhy() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let mine = try listctl(daemon, ["access", "home"])
        #expect(mine.status == 0 && mine.out.contains("root (uid 0) has admin access to home (administrator); owner root (uid 0)"), "\(mine)")
        let other = try listctl(daemon, ["access", "home", "--user", "nobody"])
        #expect(other.out.contains("nobody (uid 65534) has read access to home (default)"), "\(other)")
        #expect(other.out.contains("owns 0 of 1000 data sources, 0 of 10000000 items, 0 of 100 registrations"), "\(other)")
        let listed = try listctl(daemon, ["ls"])
        #expect(listed.out.contains("OWNER") && listed.out.contains("root"), "\(listed)")
        #expect(try listctl(daemon, ["access", "home", "--user", "no-such-user-here"]).status != 0)
    }

    /// Data sources named to pass for another one (a Cyrillic letter, a zero-width space, a
    /// right-to-left override) are listed with those characters escaped, never as the name they imitate.
    @Test func lookalikeNamesAreListedEscaped() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        for name in ["h\u{43E}me", "home\u{200B}", "\u{202E}emoh"] {
            _ = try daemon.request(["cmd": "appendSections", "dataSource": .string(name), "sections": ["S"]]).result()
        }
        let listed = try listctl(daemon, ["ls"])
        #expect(listed.status == 0)
        let names = listed.out.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != " " }) }
        #expect(names.filter { $0 == "home" }.count == 1, "\(listed.out)")
        for escaped in [#"h\u{43e}me"#, #"home\u{200b}"#, #"\u{202e}emoh"#] { #expect(names.contains(escaped), "\(listed.out)") }
        let watch = try startWatch(daemon, ["h\u{43E}me", "--reconnect-seconds", "0"])
        try daemon.stop()
        watch.process.waitUntilExit(within: .seconds(60))
        #expect(watch.output.text.contains(#"watching h\u{43e}me as"#), "\(watch.output.text)")
    }

    @Test func unreachableDaemonIsExitStatusTwo() throws {
        let daemon = try Daemon()
        #expect(try daemon.stop() == 0)
        let result = try listctl(daemon, ["ping"])
        #expect(result.status == 2)
        #expect(result.err.contains("cannot connect"))
    }

    /// What a program wrote to its standard output, in a file of its own that can be read while it runs.
    final class CapturedOutput {
        private let directory: String
        let handle: FileHandle
        init() throws {
            directory = try makeTemporaryDirectory()
            let path = directory + "/stdout"
            guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
                throw ClientError("cannot make \(path)")
            }
            self.handle = handle
        }
        deinit {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
        /// Everything written so far.
        var text: String { (try? String(contentsOfFile: directory + "/stdout", encoding: .utf8)) ?? "" }
    }

    /// Starts `listctl watch` with `arguments` and waits until its view is attached.
    func startWatch(_ daemon: Daemon, _ arguments: [String]) throws -> (process: Process, output: CapturedOutput) {
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listctl")
        process.arguments = ["--socket", daemon.socketPath, "watch"] + arguments
        let output = try CapturedOutput()
        process.standardOutput = output.handle
        try process.start()
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["views"] == 1 })
        return (process, output)
    }

    @Test func watchPrintsEventsAsTheyCome() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let (process, out) = try startWatch(daemon, ["home", "--view", "watcher", "--reconnect-seconds", "0"])
        #expect(try daemon.request(["cmd": "deleteItems", "dataSource": "home", "items": ["expert-2"]])["ok"] == true)
        // Another layout (setting the one it has changes nothing and sends no event): wider spacing
        // between company cards, which the summary line does not show.
        let layout = try daemon.request(["cmd": "layout", "dataSource": "home"]).result()["layout"]
        guard case .object(var members)? = layout, case .object(var sections)? = members["sections"], case .object(var company)? = sections["company"] else {
            Issue.record("home's layout has no company section: \(String(describing: layout))")
            return
        }
        #expect(company["interGroupSpacing"] != 4)
        company["interGroupSpacing"] = 4
        sections["company"] = .object(company)
        members["sections"] = .object(sections)
        let set = try daemon.request(["cmd": "setLayout", "dataSource": "home", "layout": .object(members)]).result()
        #expect(set["version"] == 2 && set["unchanged"] == nil, "\(set)")
        #expect(try daemon.stop() == 0)
        process.waitUntilExit(within: .seconds(60))
        let text = out.text
        #expect(text.contains("watching home as watcher from version 0"))
        #expect(text.contains(" v1\n  1 delete          [2,1] expert-2\n"), "\(text)")
        #expect(text.contains(" v2 layout: grid; company band (continuousGroupLeadingBoundary), expert band (continuousGroupLeadingBoundary)\n"), "docs/listctl.md's line, a version of its own")
        #expect(text.contains("shutdown: listd is stopping"))
        #expect(process.terminationStatus == 0)
    }

    /// listd restarts on its state: watch says so, reconnects, resumes after the last version it
    /// printed (nothing repeated, nothing missed).
    @Test func watchReconnectsAndResumes() throws {
        let state = try makeTemporaryDirectory() + "/state"
        defer { try? FileManager.default.removeItem(atPath: (state as NSString).deletingLastPathComponent) }
        let first = try Daemon(arguments: ["--demo", "--state-directory", state])
        let (process, out) = try startWatch(first, ["home", "--view", "watcher", "--reconnect-seconds", "60", "--width", "0"])
        #expect(try first.request(["cmd": "deleteItems", "dataSource": "home", "items": ["expert-2"]])["ok"] == true)
        #expect(try first.stop() == 0)
        let second = try Daemon(arguments: ["--demo", "--state-directory", state], directory: first.directory)
        #expect(try eventually { try second.request(["cmd": "stats"]).result()["views"] == 1 })
        #expect(try second.request(["cmd": "deleteItems", "dataSource": "home", "items": ["expert-1"]])["ok"] == true)
        #expect(try eventually { try second.request(["cmd": "stats"]).result()["events"]?["sent"]?.intValue ?? 0 >= 1 })
        #expect(try second.stop() == 0)
        // Without listd, watch keeps trying (once it printed the second event and went to reconnect
        // again): stop it (SIGKILL: the test process's children may inherit a blocked SIGTERM).
        #expect(try eventually { out.text.contains(" v2\n") && out.text.components(separatedBy: "listd went away; reconnecting…").count == 3 }, "\(out.text)")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit(within: .seconds(60))
        let text = out.text
        #expect(text.contains("shutdown: listd is stopping\nlistd went away; reconnecting…\nreconnected; resuming after version 1\n"), "\(text)")
        #expect(text.components(separatedBy: " v1\n").count == 2, "v1 printed once: \(text)")
        #expect(text.contains(" v2\n  1 delete"), "\(text)")
    }

    /// Without listd for longer than --reconnect-seconds, watch gives up with exit status 1.
    @Test func watchGivesUpWithoutListd() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let (process, out) = try startWatch(daemon, ["home", "--reconnect-seconds", "0.5"])
        #expect(try daemon.stop(signal: SIGKILL) == SIGKILL)
        process.waitUntilExit(within: .seconds(60))
        let text = out.text
        #expect(text.contains("listd went away; reconnecting…"), "\(text)")
        #expect(process.terminationStatus == 2, "listd unreachable, as the man page says")
    }

    /// Beside listview in a narrow pane: every line fits the width, long lists say how much is left
    /// out, and each event starts with its time and version.
    @Test func watchFitsItsLinesToTheWidth() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let (process, out) = try startWatch(daemon, ["emoji", "--width", "42"])
        let items: [JSONValue] = (0..<50).map { .string("new-\($0)") }
        #expect(try daemon.request(["cmd": "appendItems", "dataSource": "emoji", "items": .array(items), "toSection": "numbers"])["ok"] == true)
        #expect(try daemon.request(["cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["food"]])["ok"] == true)
        #expect(try daemon.request([
            "cmd": "setLayout", "dataSource": "emoji",
            "layout": ["default": ["list": ["appearance": "grouped"]], "sections": ["numbers": ["list": ["appearance": "sidebar"]]]],
        ])["ok"] == true)
        #expect(try daemon.request(["cmd": "dropDataSource", "dataSource": "emoji"])["ok"] == true)
        process.waitUntilExit(within: .seconds(60))
        let text = out.text
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.unicodeScalars.count <= 42 }, "\(text)")
        // 50 inserts: the first ones, then how many more.
        let inserts = try #require(lines.first { $0.hasPrefix("  1 insert") && $0.contains("new-0") }, "\(text)")
        let shown = inserts.components(separatedBy: "new-").count - 1
        #expect(shown >= 1 && inserts.hasSuffix(", … +\(50 - shown)"), "\(inserts)")
        #expect(lines.contains { $0.range(of: #"^\d\d:\d\d:\d\d v2$"#, options: .regularExpression) != nil })
        #expect(lines.contains("  1 insert          [0,3] food/🍎, … +2"))
        #expect(lines.contains("  2 reconfigure     [0,2] food"))
        #expect(lines.contains { $0.contains(" v3 layout: grouped list; numbe") && $0.hasSuffix("…") }, "\(text)")
        #expect(lines.last?.hasSuffix(" dropped: the data source is gone") == true)
        #expect(process.terminationStatus == 0)

        // A negative width is refused before anything is sent.
        let full = try runExecutable("listctl", ["--socket", daemon.socketPath, "watch", "missing", "--width=-1"])
        #expect(full.status != 0 && full.err.contains("--width must not be negative"))
    }
}
