import Foundation
import DiffableCore
import ListClient
import ListWire
import Testing

/// The view queue limit (`maxViewQueueBytes`) holds for every kind of event: a connection whose views
/// never read is cut (a last `overflow` event, then the end) whatever it is sent, and everything it was
/// sent counts in `stats`. `changes` and `layoutChanged` have their own tests (ConcurrencyTests,
/// ConnectionHardeningTests); these are the other kinds.
@Suite struct ViewQueueLimitTests {
    /// A daemon whose view queue is small (the kernel's socket buffer takes about 200 KB before it).
    func daemon(_ more: [String: JSONValue] = [:]) throws -> Daemon {
        var configuration: [String: JSONValue] = ["maxViewQueueBytes": 16_384, "maxOutputBytes": 16_384]
        for (key, value) in more { configuration[key] = value }
        return try Daemon(configuration: .object(configuration))
    }

    /// Runs `round` until listd counts an overflowed view (at most `rounds` times), then reads what the
    /// lazy connection was sent: events of the `kind` (and `others`) only, ending with `overflow`.
    func expectCut(
        _ lazy: LineConnection, by observer: LineConnection, kind: String, others: Set<String> = [], rounds: Int = 20_000,
        _ round: (Int) throws -> Void
    ) throws {
        var overflowed = false
        for index in 0..<rounds {
            try round(index)
            if index % 50 == 49 || index == rounds - 1, try observer.request(["cmd": "stats"]).result()["events"]?["viewsOverflowed"] == 1 {
                overflowed = true
                break
            }
        }
        #expect(overflowed, "a view that never reads \(kind) events was not cut")
        var kinds: [String: Int] = [:]
        var last: String?
        while let event = try lazy.readJSON(timeout: .seconds(20)) {
            last = event["event"]?.stringValue
            kinds[last ?? "?", default: 0] += 1
        }
        #expect(last == "overflow", "\(kinds)")
        #expect(kinds[kind, default: 0] > 0, "\(kinds)")
        #expect(Set(kinds.keys).subtracting(others.union([kind, "overflow"])).isEmpty, "\(kinds)")
        let stats = try observer.request(["cmd": "stats"]).result()
        #expect(stats["events"]?["sent"]?.intValue ?? 0 >= kinds[kind, default: 0], "what was sent is counted")
    }

    /// `changes` events that tell views to reload everything (`apply` with `reloadData`).
    @Test func reloads() throws {
        let daemon = try daemon()
        let writer = try daemon.connect()
        _ = try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]]).result()
        let lazy = try daemon.connect()
        _ = try lazy.request(["cmd": "attach", "dataSource": "d"]).result()
        try expectCut(lazy, by: writer, kind: "changes") { index in
            let snapshot: JSONValue = ["sections": [["id": "S", "items": [.string("item-\(index % 7)")]]]]
            _ = try writer.request(["cmd": "apply", "dataSource": "d", "snapshot": snapshot, "reloadData": true]).result()
        }
    }

    /// `cellUpdated` events: a displayed cell reconfigured by a change (its text rendered large from a
    /// small payload, so these events are most of what the view is sent).
    @Test func cellUpdates() throws {
        let daemon = try daemon()
        let writer = try daemon.connect()
        let text = String(repeating: "{{t}} ", count: 100)
        _ = try writer.request(["cmd": "register", "registration": "wide", "contentConfiguration": ["type": "cell", "text": .string(text)]]).result()
        _ = try writer.request([
            "cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "S", "items": [["id": "a", "data": ["t": "some words here"]]]]]],
        ]).result()
        _ = try writer.request(["cmd": "setCellProvider", "dataSource": "d", "rules": [], "default": "wide"]).result()
        let lazy = try daemon.connect()
        _ = try lazy.request(["cmd": "attach", "dataSource": "d", "view": "lazy"]).result()
        _ = try lazy.request(["cmd": "dequeue", "view": "lazy", "indexPaths": [[0, 0]]]).result()
        try expectCut(lazy, by: writer, kind: "cellUpdated", others: ["changes"]) { _ in
            _ = try writer.request(["cmd": "reconfigureItems", "dataSource": "d", "items": ["a"]]).result()
        }
    }

    /// `selectionChanged` events about another view's selection (`attach` with `selectionEvents`).
    @Test func selectionChanges() throws {
        let daemon = try daemon()
        let items: [JSONValue] = (0..<4).map { ["id": .string("t\($0)")] }
        _ = try daemon.request(["cmd": "apply", "dataSource": "tasks", "snapshot": ["sections": [["id": "today", "items": .array(items)]]]]).result()
        let screen = try daemon.connect()
        _ = try screen.request(["cmd": "attach", "dataSource": "tasks", "view": "screen"]).result()
        _ = try screen.request(["cmd": "dequeue", "view": "screen", "indexPaths": [[0, 0], [0, 1]]]).result()
        let lazy = try daemon.connect()
        _ = try lazy.request(["cmd": "attach", "dataSource": "tasks", "view": "lazy", "selectionEvents": true]).result()
        try expectCut(lazy, by: screen, kind: "selectionChanged") { index in
            _ = try screen.request(["cmd": "setState", "view": "screen", "item": "t0", "state": ["selected": .bool(index % 2 == 0)]]).result()
            screen.events.removeAll()
        }
    }

    /// `dropped` events: thousands of views on one connection whose data source is dropped.
    @Test func drops() throws {
        let daemon = try daemon(["maxViewsPerConnection": 10_000])
        let writer = try daemon.connect()
        _ = try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]]).result()
        let lazy = try daemon.connect()
        let padding = String(repeating: "v", count: 100)
        for index in 0..<4_000 { _ = try lazy.request(["cmd": "attach", "dataSource": "d", "view": .string("\(padding)-\(index)")]).result() }
        try expectCut(lazy, by: writer, kind: "dropped", rounds: 1) { _ in
            _ = try writer.request(["cmd": "dropDataSource", "dataSource": "d"]).result()
            _ = try writer.request(["cmd": "stats"]).result()
        }
    }

    /// A resumed view's backlog is sent as events too: one longer than half the view queue is not
    /// replayed (the reply carries the snapshot instead), so a resume cannot overflow by itself.
    @Test func aBacklogLongerThanHalfTheQueueIsAnsweredWithTheSnapshot() throws {
        let daemon = try daemon()
        let writer = try daemon.connect()
        _ = try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]]).result()
        let attached = try writer.request(["cmd": "attach", "dataSource": "d", "view": "w"]).result()
        let incarnation = try #require(attached["incarnation"])
        let padding = String(repeating: "p", count: 400)
        for index in 0..<10 { _ = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": [.string("\(padding)\(index)")]]).result() }
        let short = try daemon.connect().request(["cmd": "attach", "dataSource": "d", "fromVersion": 1, "incarnation": incarnation]).result()
        #expect(short["resumed"] == true, "ten events of about 500 bytes fit in half of 16 KiB")
        for index in 10..<40 { _ = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": [.string("\(padding)\(index)")]]).result() }
        let long = try daemon.connect().request(["cmd": "attach", "dataSource": "d", "fromVersion": 1, "incarnation": incarnation]).result()
        #expect(long["resumed"] == false && long["sections"]?.arrayValue.first?["items"]?.arrayValue.count == 40, "\(long)")
    }
}
