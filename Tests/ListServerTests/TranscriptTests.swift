import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// The repository's `protocol/` directory.
let protocolDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("protocol")

/// Whether `actual` matches `expected`, where the string `"<any>"` in `expected` matches any value.
func matches(_ actual: JSONValue, _ expected: JSONValue) -> Bool {
    switch (actual, expected) {
    case (_, .string("<any>")): return true
    case (.object(let a), .object(let e)):
        return a.count == e.count && e.allSatisfy { key, value in a[key].map { matches($0, value) } ?? false }
    case (.array(let a), .array(let e)):
        return a.count == e.count && zip(a, e).allSatisfy { matches($0, $1) }
    default:
        return actual == expected
    }
}

@Suite("protocol/ transcripts replayed against listd", .serialized)
struct TranscriptTests {
    static var transcripts: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: protocolDirectory.appendingPathComponent("transcripts").path)) ?? [])
            .filter { $0.hasSuffix(".txt") }.sorted()
    }

    @Test func thereAreTranscripts() {
        #expect(Self.transcripts.count >= 5)
    }

    @Test(arguments: transcripts)
    func replay(_ name: String) throws {
        let text = try String(contentsOf: protocolDirectory.appendingPathComponent("transcripts/\(name)"), encoding: .utf8)
        try replayTranscript(text, name: name)
    }
}

/// Replays a transcript against a new listd: `>` lines are sent (`name>` on connection `name`), `<`
/// lines must be what that connection reads next (`"<any>"` matches any value); at the end nothing
/// unexpected is left to read. Lines starting with `#` and empty ones are skipped.
func replayTranscript(_ text: String, name: String, lineOffsets: [Int]? = nil) throws {
    let daemon = try Daemon()
    var connections: [String: LineConnection] = [:]
    func connection(_ name: String) throws -> LineConnection {
        if let existing = connections[name] { return existing }
        let new = try daemon.connect()
        connections[name] = new
        return new
    }
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let number = lineOffsets?[index] ?? index + 1
        guard !line.isEmpty, !line.hasPrefix("#") else { continue }
        guard let marker = line.firstIndex(where: { $0 == ">" || $0 == "<" }) else {
            Issue.record("\(name):\(number): no '>' or '<'")
            continue
        }
        let who = String(line[..<marker])
        let body = line[line.index(after: marker)...].drop { $0 == " " }
        if line[marker] == ">" {
            try connection(who).send(line: String(body))
        } else {
            let expected = try JSONParser.parse(String(body))
            let actual = try #require(try connection(who).readJSON(), "\(name):\(number): the connection closed")
            #expect(matches(actual, expected), "\(name):\(number)\n  expected \(expected)\n  actual   \(actual)")
        }
    }
    // Nothing unexpected is left to read on any connection.
    for (who, open) in connections {
        try open.send(line: #"{"cmd":"ping","id":"end"}"#)
        #expect(try open.readJSON() == ["id": "end", "ok": true, "result": [:]], "\(name): connection \(who) has unread lines")
    }
}

@Suite("protocol/PROTOCOL.md matches describe", .serialized)
struct ProtocolDocumentTests {
    /// Every command (with each of its arguments), error code and event that the daemon describes is
    /// documented, so the contract cannot silently drift from the code.
    @Test func documentCoversDescribe() throws {
        let document = try String(contentsOf: protocolDirectory.appendingPathComponent("PROTOCOL.md"), encoding: .utf8)
        let daemon = try Daemon()
        let described = try daemon.request(["cmd": "describe"]).result()
        for command in described["commands"]!.arrayValue {
            let name = command["name"]!.stringValue!
            let heading = "#### `\(name)`"
            guard let start = document.range(of: heading) else {
                Issue.record("PROTOCOL.md does not document \(name)")
                continue
            }
            let rest = document[start.upperBound...]
            let section = rest[..<(rest.range(of: "\n### ")?.lowerBound ?? rest.range(of: "\n#### ")?.lowerBound ?? rest.endIndex)]
            let end = rest.range(of: "\n#### ")?.lowerBound ?? rest.endIndex
            let body = rest[..<min(end, section.endIndex)]
            for argument in command["arguments"]!.arrayValue {
                let argumentName = argument["name"]!.stringValue!
                #expect(body.contains("`\(argumentName)`"), "PROTOCOL.md: \(name) lacks argument \(argumentName)")
            }
        }
        for error in described["errors"]!.arrayValue {
            #expect(document.contains("| `\(error["code"]!.stringValue!)` |"), "PROTOCOL.md lacks error \(error)")
        }
        for event in described["events"]!.arrayValue {
            #expect(document.contains("| `\(event["name"]!.stringValue!)` |"), "PROTOCOL.md lacks event \(event)")
        }
    }
}
