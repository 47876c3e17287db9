import Foundation
import Testing

/// The man pages in man/ are whole mdoc pages that read right straight from the checkout
/// (`man -l man/listd.8.mdoc`, as `scripts/man` shows them), and their OPTIONS are the programs' options:
/// every long option a program's `--help` lists (for listctl, every command's) is under OPTIONS, and
/// OPTIONS lists no option the program does not have. The rendering is man-db's (groff), as a user's
/// `man` shows it; mandoc's lint, when mandoc is installed, checks the macros too.
@Suite("man pages")
struct ManPageTests {
    static let pages = [("listd", "8"), ("listctl", "1"), ("listview", "1"), ("listweb", "1")]

    static func path(_ program: String, _ section: String) -> String {
        InstallTests.repository.appendingPathComponent("man/\(program).\(section).mdoc").path
    }

    static func source(_ program: String, _ section: String) throws -> String {
        try String(contentsOfFile: path(program, section), encoding: .utf8)
    }

    /// The lines of one `.Sh` section of a page's source, heading excluded.
    static func section(_ name: String, of source: String) -> [Substring] {
        var lines: [Substring] = []
        var inside = false
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".Sh ") {
                inside = line.dropFirst(4).trimmingCharacters(in: .whitespaces) == name
                continue
            }
            if inside { lines.append(line) }
        }
        return lines
    }

    /// The long options a macro line names with `Fl -NAME`.
    static func flags(in line: Substring) -> [String] {
        let words = line.split(separator: " ").map(String.init)
        return zip(words, words.dropFirst()).compactMap { macro, word in
            macro == "Fl" && word.hasPrefix("-") && word.count > 1 ? "-" + word.trimmingCharacters(in: CharacterSet(charactersIn: ",;")) : nil
        }
    }

    /// The long options of a `--help` text's OPTIONS block (the option column, not the prose).
    static func longOptions(inHelp help: String) -> Set<String> {
        var options: Set<String> = []
        var inOptions = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") { inOptions = line == "OPTIONS:" }
            guard inOptions, line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }
            for word in line.split(separator: " ").prefix(3) where word.hasPrefix("--") {
                options.insert(String(word).trimmingCharacters(in: CharacterSet(charactersIn: ",")))
            }
        }
        return options
    }

    static func help(_ program: String, _ arguments: [String] = []) throws -> String {
        let result = try runExecutable(program, arguments + ["--help"])
        #expect(result.status == 0, "\(program) \(arguments) --help: \(result.err)")
        return result.out
    }

    /// listctl's commands, from its `--help`.
    static func listctlCommands() throws -> [String] {
        let help = try help("listctl")
        let block = help.components(separatedBy: "SUBCOMMANDS:\n").last ?? ""
        return block.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.compactMap {
            $0.split(separator: " ").first.map(String.init)
        }.filter { $0.first?.isLetter == true && $0 != "See" }
    }

    /// Every long option of the program is under OPTIONS, and OPTIONS names no other.
    @Test(arguments: pages)
    func optionsAreTheProgramsOptions(program: String, section: String) throws {
        var options = Self.longOptions(inHelp: try Self.help(program))
        if program == "listctl" {
            let commands = try Self.listctlCommands()
            #expect(commands.count > 40 && commands.contains("append-items"), "\(commands)")
            for command in commands { options.formUnion(Self.longOptions(inHelp: try Self.help(program, [command]))) }
        }
        #expect(options.isSuperset(of: ["--version", "--help"]) && options.count > 2, "\(program): \(options)")
        let source = try Self.source(program, section)
        let listed = Set(Self.section("OPTIONS", of: source).filter { $0.hasPrefix(".It ") }.flatMap(Self.flags))
        for option in options.sorted() { #expect(listed.contains(option), "\(program).\(section): OPTIONS does not describe \(option)") }
        for option in listed.subtracting(options).sorted() {
            Issue.record("\(program).\(section): OPTIONS describes \(option), which \(program) --help does not list")
        }
    }

    /// Each of listctl's commands is under COMMANDS, its entry naming every option of its own (the
    /// ones every command takes, --socket and --json, are said once).
    @Test func listctlCommandsAreListedWithTheirOptions() throws {
        let source = try Self.source("listctl", "1")
        var entries: [String: [String]] = [:]
        for line in Self.section("COMMANDS", of: source) where line.hasPrefix(".It Cm ") {
            let name = String(line.split(separator: " ")[2])
            entries[name] = Self.flags(in: line)
        }
        let commands = try Self.listctlCommands()
        #expect(Set(entries.keys) == Set(commands), "COMMANDS lists \(entries.keys.sorted()); listctl has \(commands)")
        for command in commands {
            let own = Self.longOptions(inHelp: try Self.help("listctl", [command])).subtracting(["--socket", "--json", "--version", "--help"])
            for option in own.sorted() {
                #expect(entries[command]?.contains(option) == true, "listctl.1: the \(command) entry does not name \(option)")
            }
        }
    }

    /// `man -l` (man-db and groff, without hyphenation or justification so the words are as written)
    /// shows the page's sections with every option and the words the macros carry, without a warning.
    @Test(arguments: pages)
    func rendersWithMan(program: String, section: String) throws {
        let path = Self.path(program, section)
        let man = try runProgram(
            URL(fileURLWithPath: "/usr/bin/man"), ["--warnings=w", "--nh", "--nj", "-l", path],
            extraEnvironment: ["MANPAGER": "cat", "MANWIDTH": "80", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"])
        #expect(man.status == 0 && man.err.isEmpty, "man -l \(path): \(man.err)")
        let lines = man.out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix("\(program.uppercased())(\(section))") == true, "\(lines.first ?? "")")
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SIGNALS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"] {
            #expect(lines.contains(Substring(heading)), "\(program).\(section) has no \(heading) section")
        }
        #expect(lines.allSatisfy { $0.count <= 80 || $0.hasPrefix("           ") }, "a line wider than MANWIDTH outside an example")
        #expect(!lines.contains { $0.hasPrefix(".") || $0.contains("\\f") }, "roff leaked through")
        // Words as they read, whatever the line breaks.
        let text = man.out.replacingOccurrences(of: "\u{2010}", with: "-").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("NAME \(program) \u{2014} "), "the NAME line")
        for option in Self.longOptions(inHelp: try Self.help(program)) {
            #expect(text.contains(option), "\(program).\(section) does not show \(option)")
        }
        // Phrases that run from a text line through a macro line and on: where a page was not mdoc to
        // man's formatter, the macros' words went missing and these ran together.
        let phrases: [String: [String]] = [
            "listd": ["SIGTERM or SIGINT stops it gracefully; SIGHUP reloads --config.", "The socket path when --socket is not given."],
            "listctl": [
                "listctl writes to listd with MSG_NOSIGNAL: a connection listd closed is reported",
                "show data-source [--section section] [--offset n] [--limit n]", "The socket path when --socket is not given.",
            ],
            "listview": ["With --once it prints one frame as plain text and exits", "The socket path when --socket is not given."],
            "listweb": ["Pages are read-only unless --allow-actions, and then change only their own views.", "listd's socket when --socket is not given."],
        ]
        for phrase in phrases[program] ?? [] { #expect(text.contains(phrase), "\(program).\(section) does not read \"\(phrase)\"") }
        #expect(text.contains("LISTD_SOCKET"))
    }

    /// groff itself, every warning on: no undefined macro, no line it cannot fit, no bad character.
    @Test(arguments: pages)
    func groffHasNoWarnings(program: String, section: String) throws {
        let groff = try runProgram(
            URL(fileURLWithPath: "/usr/bin/groff"), ["-k", "-mandoc", "-ww", "-z", "-Tutf8", "-rLL=78n", Self.path(program, section)],
            extraEnvironment: ["LANG": "C.UTF-8"])
        #expect(groff.status == 0 && groff.err.isEmpty, "groff: \(groff.err)")
    }

    /// mandoc's lint, at warning level (its style notes, such as a referenced page not being installed
    /// on this machine, are not mistakes in the page).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/mandoc"), "mandoc is not installed"), arguments: pages)
    func mandocLintsClean(program: String, section: String) throws {
        let lint = try runProgram(URL(fileURLWithPath: "/usr/bin/mandoc"), ["-Tlint", "-Wwarning", Self.path(program, section)])
        #expect(lint.status == 0 && lint.out.isEmpty && lint.err.isEmpty, "mandoc -Tlint: \(lint.out)\(lint.err)")
    }

    /// scripts/man shows each page from the checkout, without building; anything else is a usage error.
    @Test func scriptsManShowsEveryPage() throws {
        let script = InstallTests.repository.appendingPathComponent("scripts/man")
        for (program, section) in Self.pages {
            let shown = try runProgram(script, [program], extraEnvironment: ["MANPAGER": "cat", "MANWIDTH": "80"])
            #expect(shown.status == 0 && shown.out.hasPrefix("\(program.uppercased())(\(section))"), "scripts/man \(program): \(shown.err)")
        }
        let wrong = try runProgram(script, ["listx"])
        #expect(wrong.status == 64 && wrong.err.contains("listd|listctl|listview|listweb"))
    }
}
