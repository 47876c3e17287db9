import DiffableCore
import Foundation
import ListServer
import ListServerTestKit
import ListEngine
import ListStore
import ListWire
import StoreTestKit
import TestSupport
import Testing

/// The whole command path over a store that fails on demand: an in-process server (embedded loop,
/// writes inline) takes random requests while writes fail at random. After every request the store
/// holds exactly the state served (nothing acknowledged lost, nothing undone kept), a failed request
/// changed nothing, and a view's events replay to the served snapshot.
@Suite struct DurableInProcessTests {
    func randomRequest(_ random: inout SeededGenerator, serial: Int) -> JSONValue {
        let item = "i\(Int.random(in: 0..<12, using: &random))"
        let other = "i\(Int.random(in: 0..<12, using: &random))"
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return ["cmd": "appendSections", "dataSource": "d", "sections": [.string("s\(Int.random(in: 0..<3, using: &random))")]]
        case 1, 2: return ["cmd": "appendItems", "dataSource": "d", "items": [["id": .string(item), "data": ["n": .int(serial)]]]]
        case 3: return ["cmd": "deleteItems", "dataSource": "d", "items": [.string(item)]]
        case 4: return ["cmd": "moveItem", "dataSource": "d", "item": .string(item), "afterItem": .string(other)]
        case 5:
            let items: [JSONValue] = (0..<Int.random(in: 0..<6, using: &random)).map { .string("i\($0 * 2 + serial % 2)") }
            return ["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s0", "items": .array(items)]]]]
        case 6: return ["cmd": "reconfigureItems", "dataSource": "d", "items": [.string(item)]]
        case 7: return ["cmd": "register", "registration": .string("r\(serial % 3)"), "contentConfiguration": ["type": "cell", "text": .string("{{n}} \(serial % 2)")]]
        case 8: return ["cmd": "unregister", "registration": .string("r\(serial % 3)")]
        default: return ["cmd": "appendItems", "dataSource": "e", "items": [.string(item)]]
        }
    }

    @Test func randomRequestsWithFailingWritesLoseNothingAcknowledged() throws {
        let store = try FaultInjectingStore()
        let server = try InProcessServer(configuration: ServerConfiguration(listener: .path("/unused")), store: store)
        let client = try server.connect()
        let viewer = try server.connect()
        func send(_ connection: InProcessConnection, _ request: JSONValue) throws -> [JSONValue] {
            try connection.send(request.jsonBytes + [0x0A]).map { try JSONParser.parse($0) }
        }
        #expect(try send(client, ["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s0", "items": []]]]]).first?["ok"] == true)
        _ = try send(client, ["cmd": "apply", "dataSource": "e", "snapshot": ["sections": [["id": "s0", "items": []]]]])
        let attached = try #require(try send(viewer, ["cmd": "attach", "dataSource": "d", "view": "v"]).first?["result"])
        var mirror = try Snapshot(
            attached["sections"]!.arrayValue.map { section in (Section(section["id"]!.stringValue!), section["items"]!.arrayValue.map { Item($0.stringValue!) }) })
        var mirrorVersion = attached["version"]!.intValue!
        var random = SeededGenerator(seed: 11)
        var counts: [String: Int] = [:]
        for serial in 0..<600 {
            let failing = Int.random(in: 0..<6, using: &random) == 0
            if failing { store.fail(.write) }
            let before = String(decoding: server.stateEncoding, as: UTF8.self)
            let request = randomRequest(&random, serial: serial)
            let replies = try send(client, request)
            #expect(server.isIdle)
            let reply = try #require(replies.first { $0["ok"] != nil }, "\(request) got no reply")
            let code = reply["error"]?["code"]?.stringValue ?? "ok"
            counts[code, default: 0] += 1
            if reply["ok"] != true {
                #expect(String(decoding: server.stateEncoding, as: UTF8.self) == before, "a failed request (\(code)) changed nothing: \(request)")
            }
            store.heal()  // a request that wrote nothing leaves its fault unused: not for the next one
            #expect(
                String(decoding: try store.storedEncoding(), as: UTF8.self) == String(decoding: server.stateEncoding, as: UTF8.self),
                "the store holds the state served, after \(request) (\(code))")
            // The view's events so far replay to the served snapshot.
            for line in try viewer.send([]) {
                let event = try JSONParser.parse(line)
                guard event["event"] == "changes" else { continue }
                #expect(event["version"]?.intValue == mirrorVersion + 1, "versions without gaps")
                mirrorVersion = event["version"]!.intValue!
                if event["changes"]?["reloadData"] == true { continue }
                try mirror.apply(WireDecoding.changes(event["changes"]!))
            }
        }
        let served = try #require(try send(viewer, ["cmd": "snapshot", "dataSource": "d"]).first?["result"])
        #expect(served["version"]?.intValue == mirrorVersion)
        #expect(mirror.itemIdentifiers == served["sections"]!.arrayValue.flatMap { $0["items"]!.arrayValue.map { $0.stringValue ?? $0["id"]!.stringValue! } })
        #expect(counts["storage-failed", default: 0] > 30 && counts["ok", default: 0] > 200, "\(counts)")
        server.closeStore()
        // What a restart would serve is what was served.
        let reopened = try FaultInjectingStore(reopening: store)
        let restarted = try InProcessServer(configuration: ServerConfiguration(listener: .path("/unused")), store: reopened)
        #expect(restarted.stateEncoding == server.stateEncoding)
        restarted.closeStore()
    }

    /// The server's part of undoing a failed write (`ServerState.react(to:)`, which
    /// `CommitPipeline(engine:…)` calls once the engine's part is done): an unregister whose write
    /// failed gives the registration back, and the views whose provider names it are told it was made
    /// again (their cells of it are to be dequeued again).
    @Test func viewsAreToldWhatUndoingAFailedWriteDidToARegistration() throws {
        let store = try FaultInjectingStore()
        let server = try InProcessServer(configuration: ServerConfiguration(listener: .path("/unused")), store: store)
        let client = try server.connect()
        let viewer = try server.connect()
        func send(_ connection: InProcessConnection, _ request: JSONValue) throws -> [JSONValue] {
            try connection.send(request.jsonBytes + [0x0A]).map { try JSONParser.parse($0) }
        }
        for request: JSONValue in [
            ["cmd": "register", "registration": "r", "contentConfiguration": ["type": "cell", "text": "{{n}}"]],
            ["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s0", "items": ["a"]]]]],
            ["cmd": "setCellProvider", "dataSource": "d", "rules": [], "default": "r"],
        ] {
            #expect(try send(client, request).first?["ok"] == true, "\(request)")
        }
        #expect(try send(viewer, ["cmd": "attach", "dataSource": "d", "view": "v"]).first?["ok"] == true)
        store.fail(.write)
        let failed = try send(client, ["cmd": "unregister", "registration": "r"])
        #expect(failed.first?["error"]?["code"] == "storage-failed", "\(failed)")
        let events = try viewer.send([]).map { try JSONParser.parse($0) }
        #expect(events == [["event": "registrationChanged", "dataSource": "d", "view": "v", "registration": "r", "change": "created"]])
        #expect(String(decoding: try store.storedEncoding(), as: UTF8.self) == String(decoding: server.stateEncoding, as: UTF8.self))
        server.closeStore()
    }
}
