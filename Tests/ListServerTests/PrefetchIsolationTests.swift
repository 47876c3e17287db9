import DiffableCore
import ListClient
import ListWire
import Testing

/// `prefetch` names a view by name and data source: two data sources each with a view of the same name
/// keep their signals apart (issue 45, point 7; caught: `prefetch` ignoring its `dataSource`, which sent
/// one data source's positions, read in the other's snapshot, to the other's watchers).
@Suite("Prefetch: a view's signals reach its own data source's watchers", .serialized)
struct PrefetchIsolationTests {
    @Test func sameNamedViewsOfTwoDataSourcesKeepTheirPrefetchesApart() throws {
        let daemon = try Daemon()
        for name in ["a", "b"] {
            let items: [JSONValue] = (0..<4).map { .string("\(name)\($0)") }
            _ = try daemon.request(["cmd": "apply", "dataSource": .string(name), "snapshot": ["sections": [["id": "s", "items": .array(items)]]]]).result()
        }
        let watchers = try ["a", "b"].map { name in
            let watcher = try daemon.connect()
            #expect(try watcher.request(["cmd": "watchDisplay", "dataSource": .string(name)]).result()["watching"] == true)
            return watcher
        }
        // One connection shows both, each in a view named "v" ("a"'s first: the one a lookup by name alone finds).
        let viewer = try daemon.connect()
        _ = try viewer.request(["cmd": "attach", "dataSource": "a", "view": "v"]).result()
        _ = try viewer.request(["cmd": "attach", "dataSource": "b", "view": "v"]).result()

        #expect(try viewer.request(["cmd": "prefetch", "view": "v", "dataSource": "b", "indexPaths": [[0, 2]]]).result()["prefetched"] == 1)
        #expect(try viewer.request(["cmd": "prefetch", "view": "v", "dataSource": "a", "indexPaths": [[0, 1]]]).result()["prefetched"] == 1)

        let heardByA = try #require(try watchers[0].readJSON(timeout: .seconds(10)))
        #expect(heardByA["event"] == "display" && heardByA["dataSource"] == "a" && heardByA["view"] == "v", "\(heardByA)")
        #expect(heardByA["prefetch"] == ["a1"], "a's watcher hears a's prefetch alone: \(heardByA)")
        let heardByB = try #require(try watchers[1].readJSON(timeout: .seconds(10)))
        #expect(heardByB["event"] == "display" && heardByB["dataSource"] == "b" && heardByB["view"] == "v", "\(heardByB)")
        #expect(heardByB["prefetch"] == ["b2"], "b's watcher hears b's prefetch: \(heardByB)")
        // Nothing else came to either watcher by the time it answers a ping.
        for watcher in watchers {
            _ = try watcher.request(["cmd": "ping"]).result()
            #expect(watcher.events.isEmpty, "\(watcher.events)")
        }
    }
}
