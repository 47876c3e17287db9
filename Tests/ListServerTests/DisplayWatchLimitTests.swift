import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// Display events to watchers go through the view queue limit (issue 46, finding 6): a reader that
/// floods `prefetch` cannot build up output on the owner's `watchDisplay` connection. Repeated signals
/// merge while unsent, a watcher past `maxViewQueueBytes` gets `overflow` and stays connected, an event
/// is bounded whatever the identifiers, and views signal at a bounded rate.
@Suite("Display watch limits", .serialized)
struct DisplayWatchLimitTests {
    static let queueLimit = 1 << 20
    /// Identifiers near the 4,096-byte limit: 1,000 index paths (about 10 KB) name 4 MB of them.
    static let longID = String(repeating: "x", count: 4_000)

    /// A daemon others can reach, with a 1 MiB view queue; data source "big" (root's) of `items` items
    /// with long identifiers, and root's connection watching it (which then reads nothing).
    func setUp(items: Int = 1_000) throws -> (daemon: Daemon, owner: LineConnection) {
        let daemon = try sharedDaemon(configuration: ["maxViewQueueBytes": .int(Self.queueLimit), "maxOutputBytes": 65_536])
        let ids: [JSONValue] = (0..<items).map { .string("\($0)-" + Self.longID) }
        _ = try daemon.request(["cmd": "apply", "dataSource": "big", "snapshot": ["sections": [["id": "s", "items": .array(ids)]]]]).result()
        let owner = try daemon.connect()
        #expect(try owner.request(["cmd": "watchDisplay", "dataSource": "big"]).result()["watching"] == true)
        return (daemon, owner)
    }

    /// `paths` prefetch requests (index paths [0, 0]…) on each of `views`, pipelined a view at a time;
    /// returns the replies' error codes ("ok" for successes).
    func flood(_ reader: LineConnection, views: [String], rounds: Int, paths: Int) throws -> [String: Int] {
        let indexPaths: [JSONValue] = (0..<paths).map { [0, .int($0)] }
        var outcomes: [String: Int] = [:]
        for _ in 0..<rounds {
            for view in views { try reader.send(["cmd": "prefetch", "view": .string(view), "indexPaths": .array(indexPaths)]) }
            for _ in views {
                let reply = try #require(try reader.readJSON(timeout: .seconds(30)))
                outcomes[reply.errorCode ?? "ok", default: 0] += 1
            }
        }
        return outcomes
    }

    /// listd's unsent output held for connections above maxOutputBytes (`stats`).
    func heldOutput(_ daemon: Daemon) throws -> Int {
        try daemon.request(["cmd": "stats"]).result()["connections"]?["heldOutputBytes"]?.intValue ?? -1
    }

    /// Reads `connection` up to the reply to a ping; returns the events before it.
    func eventsUntilPing(_ connection: LineConnection) throws -> [JSONValue] {
        try connection.send(["cmd": "ping", "id": "last"])
        var events: [JSONValue] = []
        while let line = try connection.readJSON(timeout: .seconds(30)) {
            if line["id"] == "last" {
                #expect(line["ok"] == true)
                return events
            }
            events.append(line)
        }
        Issue.record("the connection ended before the ping's reply; events: \(events.count)")
        return events
    }

    @Test func aReadersPrefetchFloodStopsTheOwnersWatchWithOverflowAndKeepsItsOutputBounded() throws {
        let (daemon, owner) = try setUp()
        let reader = try connect(daemon)
        let views = (0..<50).map { "v\($0)" }
        for view in views { #expect(try reader.request(["cmd": "attach", "dataSource": "big", "view": .string(view)])["ok"] == true) }
        var worst = 0
        for _ in 0..<10 {
            let outcomes = try flood(reader, views: views, rounds: 2, paths: 1_000)
            #expect(outcomes["ok", default: 0] > 0, "\(outcomes)")
            worst = max(worst, try heldOutput(daemon))
        }
        // Bounded by the view queue (and an event or two past it), not the 128 MiB hard limit.
        #expect(worst <= Self.queueLimit + 256 << 10, "held \(worst) bytes")
        let events = try eventsUntilPing(owner)
        let overflow = events.last { $0["event"] == "overflow" }
        #expect(overflow?["dataSource"] == "big" && overflow?["watch"] == "display" && overflow?["limit"] == .int(Self.queueLimit), "\(events.map { $0["event"] })")
        #expect(events.last?["event"] == "overflow", "nothing follows the overflow")
        // Each event is bounded whatever its request named (1,000 identifiers of 4 KB: 4 MB before).
        let largest = events.map { $0.jsonBytes.count }.max() ?? 0
        #expect(largest <= 2 * DisplaySignalsBounds.itemBytesPerEvent + 4_096, "largest event \(largest) bytes")
        #expect(events.contains { ($0["more"]?.intValue ?? 0) > 0 }, "what does not fit is counted in more")
        // Still connected, and may watch again (it hears what the views show now: nothing dequeued).
        #expect(try owner.request(["cmd": "watchDisplay", "dataSource": "big"]).result()["watching"] == true)
        _ = try flood(reader, views: ["v0"], rounds: 1, paths: 3)
        let again = try #require(try owner.readJSON(timeout: .seconds(20)))
        #expect(again["event"] == "display" && again["view"] == "v0" && again["prefetch"]?.arrayValue.count == 3, "\(again)")
    }

    @Test func repeatedPrefetchesOfTheSameItemsMergeWhileTheOwnerDoesNotRead() throws {
        let (daemon, owner) = try setUp(items: 64)
        let reader = try connect(daemon)
        _ = try reader.request(["cmd": "attach", "dataSource": "big", "view": "v"]).result()
        // 16 identifiers of 4 KB: a 64 KB event each time; 300 of them would be 19 MB unsent.
        var accepted = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while accepted < 300, ContinuousClock.now < deadline {
            accepted += try flood(reader, views: ["v"], rounds: 1, paths: 16)["ok", default: 0]
            #expect(try heldOutput(daemon) <= Self.queueLimit, "held output grows with repeats")
        }
        #expect(accepted >= 300)
        let events = try eventsUntilPing(owner)
        #expect(!events.contains { $0["event"] == "overflow" }, "repeats merged; the watch stays")
        #expect(events.count < 300, "\(events.count) events for \(accepted) prefetches")
        #expect(events.allSatisfy { $0["event"] == "display" && $0["prefetch"]?.arrayValue.count == 16 })
    }

    @Test func prefetchRequestsAreRateLimitedPerView() throws {
        let daemon = try sharedDaemon()
        _ = try daemon.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": ["a", "b"]]]]]).result()
        let reader = try connect(daemon)
        _ = try reader.request(["cmd": "attach", "dataSource": "d", "view": "fast"]).result()
        _ = try reader.request(["cmd": "attach", "dataSource": "d", "view": "other"]).result()
        var refusal: JSONValue?
        var outcomes: [String: Int] = [:]
        for _ in 0..<600 { try reader.send(["cmd": "prefetch", "view": "fast", "indexPaths": [[0, 0]]]) }
        for _ in 0..<600 {
            let reply = try #require(try reader.readJSON(timeout: .seconds(30)))
            outcomes[reply.errorCode ?? "ok", default: 0] += 1
            if reply["ok"] == false, refusal == nil { refusal = reply }
        }
        // 120 a second, a second's worth at once (and what refills while the burst is read).
        #expect(outcomes["ok", default: 0] >= 120 && outcomes["ok", default: 0] < 300, "\(outcomes)")
        #expect(outcomes[ErrorCode.limitExceeded.rawValue, default: 0] > 300, "\(outcomes)")
        #expect(refusal?["error"]?["limit"] == "maxDisplaySignalsPerViewPerSecond", "\(refusal.map { "\($0)" } ?? "")")
        #expect(refusal?["error"]?["message"]?.stringValue?.contains("View \"fast\"") == true)
        // Per view: another view of the same connection signals on.
        #expect(try reader.request(["cmd": "prefetch", "view": "other", "indexPaths": [[0, 1]]])["ok"] == true)
    }
}

/// The event bound the tests check against (`DisplaySignals.maximumItemBytesPerEvent`).
enum DisplaySignalsBounds {
    static let itemBytesPerEvent = 64 << 10
}
