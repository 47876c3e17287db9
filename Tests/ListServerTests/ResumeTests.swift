import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// Views that lost their connection resume: `attach` with `fromVersion` and `incarnation` replays exactly
/// the events they missed, in the same process or after a restart; otherwise they get the snapshot.
@Suite("Resuming views", .serialized)
struct ResumeTests {
    /// The lines a connection received until `count` events arrived.
    func events(_ connection: LineConnection, count: Int) throws -> [String] {
        var lines: [String] = []
        while lines.count < count {
            guard let line = try connection.readLine(timeout: .seconds(20)) else { throw ClientError("closed") }
            lines.append(String(decoding: line, as: UTF8.self))
        }
        return lines
    }

    func mutate(_ daemon: Daemon, from first: Int, to last: Int) throws {
        let connection = try daemon.connect()
        for index in first...last {
            let request: JSONValue =
                index % 3 == 0
                ? ["cmd": "setLayout", "dataSource": "live", "layout": ["default": ["list": ["appearance": index % 2 == 0 ? "plain" : "grouped"]]]]
                : ["cmd": "appendItems", "dataSource": "live", "items": [["id": .string("i\(index)"), "data": ["n": .int(index)]]],
                   "animatingDifferences": .bool(index % 4 != 1)]
            #expect(try connection.request(request)["ok"] == true)
        }
    }

    /// A view attached throughout and a view that left at version 2 and resumes: the resumed one gets
    /// exactly the lines the other received after version 2.
    @Test(arguments: [false, true])
    func aResumedViewGetsExactlyTheMissedEvents(restart: Bool) throws {
        let state = try makeTemporaryDirectory() + "/state"
        defer { try? FileManager.default.removeItem(atPath: (state as NSString).deletingLastPathComponent) }
        var daemon = try Daemon(arguments: ["--state-directory", state])
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "live", "sections": ["S"]])["ok"] == true)
        let steady = try daemon.connect()
        let attached = try steady.request(["cmd": "attach", "dataSource": "live", "view": "steady"]).result()
        let incarnation = try #require(attached["incarnation"]?.stringValue)
        #expect(attached["resumed"] == false && attached["version"] == 1)
        try mutate(daemon, from: 2, to: 2)
        var seen = try events(steady, count: 1)
        try mutate(daemon, from: 3, to: 7)
        seen += try events(steady, count: 5)
        if restart {
            #expect(try daemon.stop() == 0)
            daemon = try Daemon(arguments: ["--state-directory", state])
        }
        let resuming = try daemon.connect()
        let resumed = try resuming.request([
            "cmd": "attach", "dataSource": "live", "view": "again", "fromVersion": 2, "incarnation": .string(incarnation),
        ]).result()
        #expect(resumed["resumed"] == true && resumed["version"] == 7 && resumed["sections"] == nil, "\(resumed)")
        #expect(try events(resuming, count: 5) == Array(seen.suffix(5)))
        // What the change said about animation travels with its version (stored, replayed after a restart).
        #expect(seen.suffix(5).filter { $0.contains("\"animatingDifferences\":false") }.count == 1, "\(seen)")
        // Live events follow the replayed ones.
        try mutate(daemon, from: 8, to: 8)
        let live = try events(resuming, count: 1)
        #expect(live.first?.contains(#""version":8"#) == true)
        // Already up to date: resumed, nothing replayed.
        let current = try daemon.connect().request(["cmd": "attach", "dataSource": "live", "fromVersion": 8, "incarnation": .string(incarnation)])
        #expect(current.result()["resumed"] == true)
    }

    @Test func aRecreatedDataSourceDoesNotResume() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "appendSections", "dataSource": "live", "sections": ["S"]])["ok"] == true)
        let old = try #require(try connection.request(["cmd": "snapshot", "dataSource": "live"]).result()["incarnation"]?.stringValue)
        #expect(try connection.request(["cmd": "dropDataSource", "dataSource": "live"])["ok"] == true)
        #expect(try connection.request(["cmd": "appendSections", "dataSource": "live", "sections": ["T"]])["ok"] == true)
        let reply = try connection.request(["cmd": "attach", "dataSource": "live", "fromVersion": 0, "incarnation": .string(old)]).result()
        #expect(reply["resumed"] == false)
        #expect(reply["incarnation"] != .string(old))
        #expect(reply["sections"]?.arrayValue.first?["id"] == "T")
    }

    @Test func versionsNoLongerKeptGiveTheSnapshot() throws {
        let daemon = try Daemon(configuration: ["changeLogVersions": 3])
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "appendSections", "dataSource": "live", "sections": ["S"]])["ok"] == true)
        let incarnation = try #require(try connection.request(["cmd": "snapshot", "dataSource": "live"]).result()["incarnation"]?.stringValue)
        for index in 0..<6 { #expect(try connection.request(["cmd": "appendItems", "dataSource": "live", "items": [.string("i\(index)")]])["ok"] == true) }
        // Version 7 is the newest; 5, 6 and 7 are kept: resuming from 4 works, from 3 does not.
        let fromFour = try daemon.connect()
        #expect(try fromFour.request(["cmd": "attach", "dataSource": "live", "fromVersion": 4, "incarnation": .string(incarnation)]).result()["resumed"] == true)
        #expect(try events(fromFour, count: 3).last?.contains(#""version":7"#) == true)
        let fromThree = try daemon.connect().request(["cmd": "attach", "dataSource": "live", "fromVersion": 3, "incarnation": .string(incarnation)])
        #expect(fromThree.result()["resumed"] == false && fromThree.result()["sections"] != nil)
        let alone = try daemon.connect().request(["cmd": "attach", "dataSource": "live", "fromVersion": 3])
        #expect(alone.errorCode == "invalid-argument")
    }
}
