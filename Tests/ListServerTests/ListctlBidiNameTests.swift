import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// Names made to pass for other names (a right-to-left override, bidi isolates and marks, zero-width
/// characters, a Cyrillic letter among Latin ones) are never written raw by listctl: its text output
/// shows them as `\u{202e}`, its `--json` output as JSON escapes (`\u202e`) that decode to the exact
/// string (issue 46, finding 9).
@Suite("listctl escapes lookalike and bidi names", .serialized)
struct ListctlBidiNameTests {
    /// Reads as "invoiceexe.png" when written raw.
    static let dataSource = "invoice\u{202E}gnp.exe"
    static let section = "s\u{2066}x\u{2069}"
    static let items = ["a\u{200B}b", "h\u{43E}me", "m\u{200E}\u{200F}\u{061C}", "z\u{202A}\u{202B}\u{202C}\u{202D}\u{2067}\u{2068}\u{FEFF}"]
    /// A zero-width joiner that builds one emoji: text output keeps it.
    static let emoji = "\u{1F469}\u{200D}\u{1F4BB}"

    /// The invisible and direction-changing characters in `text` (a joiner inside an emoji aside).
    static func hidden(_ text: String) -> [UInt32] {
        let scalars = Array(text.replacingOccurrences(of: emoji, with: "").unicodeScalars)
        return scalars.filter {
            switch $0.value {
            case 0x061C, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2069, 0xFEFF: return true
            default: return false
            }
        }.map(\.value)
    }

    func makeData(_ daemon: Daemon) throws {
        let items: [JSONValue] = Self.items.map { ["id": .string($0), "data": ["title": .string("pay\u{202E}load"), "who": .string(Self.emoji), "city": "\u{41C}\u{43E}\u{441}\u{43A}\u{432}\u{430}"]] }
        _ = try daemon.request([
            "cmd": "apply", "dataSource": .string(Self.dataSource), "snapshot": ["sections": [["id": .string(Self.section), "items": .array(items)]]],
        ]).result()
    }

    @Test func textOutputShowsThemEscaped() throws {
        let daemon = try Daemon()
        try makeData(daemon)
        for arguments in [
            ["show", Self.dataSource], ["ls"], ["item", Self.dataSource, Self.items[3]], ["index-path", Self.dataSource, Self.items[0]],
            ["item-at", Self.dataSource, "0", "1"], ["outline", Self.dataSource, Self.section], ["access", Self.dataSource],
            ["append-items", Self.dataSource, "new\u{202E}one", "--to-section", Self.section],
        ] {
            let run = try listctl(daemon, arguments)
            #expect(run.status == 0, "\(arguments): \(run.err)")
            #expect(Self.hidden(run.out + run.err).isEmpty, "\(arguments) wrote \(Self.hidden(run.out + run.err)): \(run.out)")
        }
        let show = try listctl(daemon, ["show", Self.dataSource]).out
        for escaped in [#"s\u{2066}x\u{2069}"#, #"a\u{200b}b"#, #"h\u{43e}me"#, #"m\u{200e}\u{200f}\u{61c}"#, #"pay\u{202e}load"#, #"new\u{202e}one"#] {
            #expect(show.contains(escaped), "\(escaped): \(show)")
        }
        #expect(show.contains(Self.emoji), "an emoji's joiner stays: \(show)")
        #expect(try listctl(daemon, ["ls"]).out.contains(#"invoice\u{202e}gnp.exe"#))
        // listd's messages name the data source too.
        let missing = try listctl(daemon, ["show", "invoice\u{202E}gnp.ex"])
        #expect(missing.status == 1 && missing.err.contains(#"invoice\u{202e}gnp.ex"#) && Self.hidden(missing.err).isEmpty, "\(missing)")
    }

    @Test func jsonOutputEscapesThemAndDecodesToTheExactStrings() throws {
        let daemon = try Daemon()
        try makeData(daemon)
        let run = try listctl(daemon, ["--json", "show", Self.dataSource])
        #expect(run.status == 0)
        #expect(Self.hidden(run.out).isEmpty && !run.out.contains(Self.emoji), "raw \(Self.hidden(run.out)): \(run.out)")
        #expect(run.out.contains(#"\u2066"#) && run.out.contains(#"\u200b"#) && run.out.contains(#"\u202e"#) && run.out.contains(#"\u061c"#), "\(run.out)")
        // A Cyrillic letter among Latin ones is escaped too; a word wholly in Cyrillic is not.
        #expect(run.out.contains(#""h\u043eme""#) && run.out.contains("\"\u{41C}\u{43E}\u{441}\u{43A}\u{432}\u{430}\""), "\(run.out)")
        let sections = try JSONParser.parse(Array(run.out.utf8.dropLast()))["result"]?["sections"]?.arrayValue ?? []
        #expect(sections.first?["id"] == .string(Self.section))
        #expect(sections.first?["items"]?.arrayValue.map { $0["id"]?.stringValue ?? "" } == Self.items)
        #expect(sections.first?["items"]?.arrayValue.first?["data"]?["who"] == .string(Self.emoji))
        let listed = try listctl(daemon, ["--json", "ls"])
        #expect(Self.hidden(listed.out).isEmpty && listed.out.contains(#""invoice\u202egnp.exe""#), "\(listed.out)")
    }

    @Test func watchShowsThemEscaped() throws {
        let daemon = try Daemon()
        try makeData(daemon)
        let text = try startWatch(daemon, [Self.dataSource, "--reconnect-seconds", "0", "--width", "0"], views: 1)
        let json = try startWatch(daemon, ["--json", Self.dataSource, "--reconnect-seconds", "0"], views: 2)
        _ = try daemon.request(["cmd": "appendItems", "dataSource": .string(Self.dataSource), "items": ["w\u{202E}at\u{2066}ch", "c\u{43E}py"]]).result()
        #expect(try eventually { text.output.text.contains(#"w\u{202e}at\u{2066}ch"#) && json.output.text.contains(#"w\u202eat\u2066ch"#) })
        #expect(text.output.text.contains(#"c\u{43e}py"#) && json.output.text.contains(#"c\u043epy"#), "\(text.output.text)\n\(json.output.text)")
        try daemon.stop()
        text.process.waitUntilExit(within: .seconds(60))
        json.process.waitUntilExit(within: .seconds(60))
        #expect(text.output.text.contains(#"watching invoice\u{202e}gnp.exe as"#), "\(text.output.text)")
        #expect(Self.hidden(text.output.text).isEmpty && Self.hidden(json.output.text).isEmpty, "\(text.output.text)\n\(json.output.text)")
    }

    /// Starts `listctl watch` with `arguments` and waits until listd has `views` views attached.
    func startWatch(_ daemon: Daemon, _ arguments: [String], views: Int) throws -> (process: Process, output: ListctlTests.CapturedOutput) {
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listctl")
        process.arguments = ["--socket", daemon.socketPath, "watch"] + arguments
        let output = try ListctlTests.CapturedOutput()
        process.standardOutput = output.handle
        try process.start()
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["views"] == .int(views) })
        return (process, output)
    }
}
