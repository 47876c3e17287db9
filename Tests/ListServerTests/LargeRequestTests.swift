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
