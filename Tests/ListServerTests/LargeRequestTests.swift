import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// Requests longer than 256 KiB are decoded, and `apply`'s snapshot built and diffed, off the event
/// loop (see LargeRequests.swift): the replies and events are what a small request gets, a change made
/// meanwhile is taken into account, malformed large lines get the same errors, and the connection's
/// later requests are answered after it, in order.
@Suite struct LargeRequestTests {
    func applyRequest(_ ids: [String], dataSource: String = "big", id: Int? = nil) -> JSONValue {
        var request: [String: JSONValue] = [
            "cmd": "apply", "dataSource": .string(dataSource),
            "snapshot": ["sections": [["id": "S", "items": .array(ids.map { ["id": .string($0), "data": ["n": .int($0.count)]] })]]],
        ]
        if let id { request["id"] = .int(id) }
        return .object(request)
    }

    func ids(_ count: Int, prefix: String) -> [String] { (0..<count).map { "\(prefix)-item-\($0)" } }

    /// Large applies, one after the other: a view's events replay to the served snapshot, and the replies'
    /// changes are those events' changes.
    @Test func largeAppliesReplayToTheServedSnapshot() throws {
        let daemon = try Daemon()
        let writer = try daemon.connect()
        let first = ids(20_000, prefix: "a")
        var second = first
        second.removeSubrange(1_000..<3_000)
        second.insert(contentsOf: ids(2_500, prefix: "b"), at: 10_000)
        second.swapAt(5, 15_000)
        try #require(applyRequest(first).jsonBytes.count > 256 << 10, "the line is a large one")
        let created = try writer.request(applyRequest(first)).result()
        #expect(created["version"] == 1)
        let viewer = try daemon.connect()
        let attached = try viewer.request(["cmd": "attach", "dataSource": "big"]).result()
        var mirror = try mirrorSnapshot(attached["sections"]!)
        for (version, target) in [(2, second), (3, first), (4, second.reversed())] {
            let reply = try writer.request(applyRequest(Array(target))).result()
            #expect(reply["version"] == .int(version))
            let event = try #require(try viewer.readJSON(timeout: .seconds(60)))
            #expect(event["event"] == "changes" && event["version"] == .int(version))
            #expect(event["changes"] == reply["changes"], "the reply and the event carry the same changes")
            try mirror.apply(WireDecoding.changes(event["changes"]!))
            #expect(mirror.itemIdentifiers == Array(target))
        }
        let served = try writer.request(["cmd": "snapshot", "dataSource": "big"]).result()
        #expect(try mirrorSnapshot(served["sections"]!) == mirror)
    }

    /// A change that lands while the large apply is being prepared (from another connection) is not
    /// lost: the apply is diffed against what the data source holds when it commits.
    @Test func aChangeMadeMeanwhileIsTakenIntoAccount() throws {
        let daemon = try Daemon()
        let writer = try daemon.connect()
        let other = try daemon.connect()
        _ = try writer.request(applyRequest(ids(20_000, prefix: "a"))).result()
        let viewer = try daemon.connect()
        var mirror = try mirrorSnapshot(try viewer.request(["cmd": "attach", "dataSource": "big"]).result()["sections"]!)
        let target = ids(20_000, prefix: "c")
        for round in 0..<5 {
            try writer.send(applyRequest(target + ["round-\(round)"], id: round))
            _ = try other.request(["cmd": "appendItems", "dataSource": "big", "items": [.string("extra-\(round)")]]).result()
            let reply = try #require(try writer.readJSON(timeout: .seconds(60)))
            #expect(reply["ok"] == true && reply["id"] == .int(round), "\(reply["error"] ?? "")")
        }
        var version = 1
        let final = try writer.request(["cmd": "snapshot", "dataSource": "big"]).result()
        while version < final["version"]!.intValue! {
            let event = try #require(try viewer.readJSON(timeout: .seconds(60)))
            #expect(event["version"] == .int(version + 1))
            try mirror.apply(WireDecoding.changes(event["changes"]!))
            version += 1
        }
        #expect(mirror == (try mirrorSnapshot(final["sections"]!)), "the view's events replay to the served snapshot")
    }

    /// Malformed large lines get the errors small ones get; the connection goes on.
    @Test func malformedLargeLinesGetTheUsualErrors() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        let padding = String(repeating: "x", count: 300_000)
        try connection.send(bytes: Array("{\"cmd\":\"apply\",\"dataSource\":\"d\",\"pad\":\"\(padding)\"".utf8) + [0x0A])
        #expect(try connection.readJSON(timeout: .seconds(30))?["error"]?["code"] == "invalid-json")
        try connection.send(bytes: Array("[\"\(padding)\"]".utf8) + [0x0A])
        #expect(try connection.readJSON(timeout: .seconds(30))?["error"]?["code"] == "invalid-request")
        let unknown = try connection.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": []], "pad": .string(padding)])
        #expect(unknown.errorCode == "invalid-argument" && unknown["error"]?["message"]?.stringValue?.contains("pad") == true, "\(unknown)")
        var duplicated = ids(15_000, prefix: "d")
        duplicated.append(duplicated[7])
        #expect(try connection.request(applyRequest(duplicated)).errorCode == "duplicate-item")
        #expect(try connection.request(["cmd": "ping"])["ok"] == true)
        #expect(try connection.request(["cmd": "snapshot", "dataSource": "big"]).errorCode == "data-source-not-found", "nothing was applied")
    }

    /// Outline changes of a data source of 50,000 items or more are worked out off the loop: the view's
    /// events replay to the served snapshot, a change made meanwhile is not lost, and what was stored
    /// is what a restart serves.
    @Test func outlineChangesOfALargeDataSource() throws {
        let state = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        var daemon: Daemon? = try Daemon(arguments: ["--state-directory", state + "/state"])
        let writer = try daemon!.connect()
        let parents = 6_000
        let outline: [JSONValue] = (0..<parents).map { parent in
            ["id": .string("p\(parent)"), "children": .array((0..<9).map { .string("c\(parent)-\($0)") })]
        }
        _ = try writer.request(["cmd": "applySectionSnapshot", "dataSource": "tree", "section": "s", "snapshot": ["items": .array(outline)]]).result()
        let viewer = try daemon!.connect()
        var mirror = try mirrorSnapshot(try viewer.request(["cmd": "attach", "dataSource": "tree"]).result()["sections"]!)
        let other = try daemon!.connect()
        var version = 1
        func follow() throws {
            let served = try writer.request(["cmd": "snapshot", "dataSource": "tree"]).result()
            while version < served["version"]!.intValue! {
                let event = try #require(try viewer.readJSON(timeout: .seconds(60)))
                #expect(event["version"] == .int(version + 1))
                try mirror.apply(WireDecoding.changes(event["changes"]!))
                version += 1
            }
            #expect(mirror == (try mirrorSnapshot(served["sections"]!)), "the view's events replay to the served snapshot")
        }
        let all: [JSONValue] = (0..<parents).map { .string("p\($0)") }
        let expanded = try writer.request(["cmd": "expand", "dataSource": "tree", "section": "s", "items": .array(all)]).result()
        #expect(expanded["version"] == 2)
        try follow()
        #expect(mirror.numberOfItems == parents * 10)
        // A collapse while another connection appends a section: both land, in some order.
        try writer.send(["cmd": "collapse", "dataSource": "tree", "section": "s", "items": .array(Array(all[..<3_000])), "id": 1])
        _ = try other.request(["cmd": "appendSections", "dataSource": "tree", "sections": ["later"]]).result()
        #expect(try writer.readJSON(timeout: .seconds(60))?["ok"] == true)
        try follow()
        #expect(mirror.numberOfItems == parents * 10 - 3_000 * 9)
        let before = try writer.request(["cmd": "sectionSnapshot", "dataSource": "tree", "section": "s"]).result()
        try daemon!.stop()
        daemon = try Daemon(arguments: ["--state-directory", state + "/state"])
        #expect(try daemon!.request(["cmd": "sectionSnapshot", "dataSource": "tree", "section": "s"]).result() == before, "the store has it")
    }

    /// Requests sent after a large one on the same connection are answered after it, in order.
    @Test func laterRequestsOfTheConnectionAreAnsweredInOrder() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        try connection.send(applyRequest(ids(20_000, prefix: "a"), id: 1))
        try connection.send(["cmd": "numberOfItems", "dataSource": "big", "id": 2])
        try connection.send(["cmd": "ping", "id": 3])
        let replies = try (0..<3).map { _ in try #require(try connection.readJSON(timeout: .seconds(60))) }
        #expect(replies.map { $0["id"] } == [1, 2, 3])
        #expect(replies[1]["result"]?["count"] == 20_000, "the read after the apply sees it")
    }
}
