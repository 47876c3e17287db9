import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// A view's model as a client keeps it: the snapshot from `attach`, then every `changes` and
/// `expansionChanged` event applied in order.
struct ClientView {
    var snapshot: Snapshot
    var version: Int

    init(attached result: JSONValue) throws {
        snapshot = try Snapshot(try WireDecoding.snapshot(["sections": result["sections"] ?? []], field: "attach"))
        version = result["version"]?.intValue ?? -1
    }

    /// Applies one event; returns whether it was one the view applies.
    mutating func apply(_ event: JSONValue) throws -> Bool {
        switch event["event"]?.stringValue {
        case "changes":
            #expect(event["version"]?.intValue == version + 1, "versions are contiguous: \(event)")
            try snapshot.apply(try WireDecoding.changes(event["changes"] ?? [:]))
            version += 1
        case "expansionChanged":
            #expect(event["version"]?.intValue == version, "an own expansion keeps the version: \(event)")
            try snapshot.apply(try WireDecoding.changes(event["changes"] ?? [:]))
        default:
            return false
        }
        return true
    }

    func items(_ section: String) -> [String] { (try? snapshot.itemIdentifiers(inSection: section)) ?? [] }
}

@Suite("Expansion per view over the socket: readers expand in their own views", .serialized)
struct ViewExpansionServerTests {
    /// The outline of section O: a (a1, a2), b (b1), c; nothing expanded.
    static let outline: JSONValue = [
        "items": [["id": "a", "children": ["a1", "a2"]], ["id": "b", "children": ["b1"]], "c"]
    ]

    /// The next event on `connection` (those read while waiting for replies first).
    func nextEvent(on connection: LineConnection) throws -> JSONValue {
        if !connection.events.isEmpty { return connection.events.removeFirst() }
        return try #require(try connection.readJSON(timeout: .seconds(10)))
    }

    /// Applies events to `view` until one named `name` was applied; returns it.
    @discardableResult
    func follow(_ view: inout ClientView, on connection: LineConnection, until name: String) throws -> JSONValue {
        for _ in 0..<50 {
            let event = try nextEvent(on: connection)
            _ = try view.apply(event)
            if event["event"]?.stringValue == name { return event }
        }
        throw ClientError("no \(name) event")
    }

    @Test func aReaderExpandsAndCollapsesInItsOwnViewOnly() throws {
        let daemon = try sharedDaemon()
        let root = try daemon.connect()
        _ = try root.request(["cmd": "applySectionSnapshot", "dataSource": "tree", "section": "O", "snapshot": Self.outline]).result()
        #expect(try root.request(["cmd": "setExpansionScope", "dataSource": "tree", "scope": "perView"]).result()["expansionScope"] == "perView")
        let rootView = try daemon.connect()
        var roots = try ClientView(attached: try rootView.request(["cmd": "attach", "dataSource": "tree", "view": "roots"]).result())

        let other = try connect(daemon)
        let attached = try other.request(["cmd": "attach", "dataSource": "tree", "view": "mine"]).result()
        #expect(attached["expansionScope"] == "perView")
        var mine = try ClientView(attached: attached)
        #expect(mine.items("O") == ["a", "b", "c"])

        // The shared expansion is the owner's; the reader's own view is its own.
        #expect(try other.request(["cmd": "expand", "dataSource": "tree", "section": "O", "items": ["a"]]).errorCode == "permission-denied")
        let expanded = try other.request(["cmd": "expandInView", "view": "mine", "section": "O", "items": ["a"]]).result()
        #expect(expanded["version"] == attached["version"])
        let event = try follow(&mine, on: other, until: "expansionChanged")
        #expect(event["view"] == "mine")
        #expect(mine.items("O") == ["a", "a1", "a2", "b", "c"])
        let cells = try other.request(["cmd": "dequeue", "view": "mine", "indexPaths": [[0, 0], [0, 1]]]).result()["cells"]?.arrayValue ?? []
        #expect(cells.map { $0["item"] } == ["a", "a1"])
        #expect(cells.first?["state"]?["expanded"] == true)
        #expect(cells.last?["indentationLevel"] == 1)
        // The outline queries answer as a view shows it when asked about one.
        let asShown = try other.request(["cmd": "outlineItem", "dataSource": "tree", "section": "O", "item": "a1", "view": "mine"]).result()["item"]
        #expect(asShown?["visible"] == true)
        #expect(try other.request(["cmd": "outlineItem", "dataSource": "tree", "section": "O", "item": "a1"]).result()["item"]?["visible"] == false)
        let items = try other.request(["cmd": "sectionSnapshot", "dataSource": "tree", "section": "O", "view": "mine"]).result()["items"]
        #expect(items?.arrayValue.first?["expanded"] == true, "\(String(describing: items))")
        // Nothing reached root's view (it would have arrived before this reply).
        _ = try rootView.request(["cmd": "ping"]).result()
        #expect(rootView.events.isEmpty)

        // The owner's changes reach the reader's view as its own changes, in version order.
        _ = try root.request([
            "cmd": "editSectionSnapshot", "dataSource": "tree", "section": "O",
            "operations": [["op": "append", "items": ["a3"], "parent": "a"], ["op": "expand", "items": ["b"]]],
        ]).result()
        let own = try follow(&mine, on: other, until: "changes")
        #expect(own["view"] == "mine")
        #expect(mine.items("O") == ["a", "a1", "a2", "a3", "b", "b1", "c"])
        let shared = try follow(&roots, on: rootView, until: "changes")
        #expect(shared["view"] == nil)
        #expect(roots.items("O") == ["a", "b", "b1", "c"])

        // The reader collapses b, which the owner expanded: only in its own view.
        _ = try other.request(["cmd": "collapseInView", "view": "mine", "section": "O", "items": ["b"]]).result()
        try follow(&mine, on: other, until: "expansionChanged")
        #expect(mine.items("O") == ["a", "a1", "a2", "a3", "b", "c"])

        // A view attached anew with what it expanded and collapsed shows what the events made.
        let again = try connect(daemon)
        let reattached = try again.request([
            "cmd": "attach", "dataSource": "tree", "view": "mine-again", "expansion": ["O": ["expanded": ["a"], "collapsed": ["b", "gone"]]],
        ]).result()
        #expect(try ClientView(attached: reattached).snapshot == mine.snapshot)

        // Others' views are not the reader's to expand.
        #expect(try other.request(["cmd": "expandInView", "view": "roots", "section": "O", "items": ["c"]]).errorCode == "permission-denied")
        #expect(try other.request(["cmd": "expandInView", "view": "mine", "section": "O", "items": ["zz"]]).errorCode == "item-not-found")
        #expect(try other.request(["cmd": "expandInView", "view": "mine", "section": "Q", "items": ["a"]]).errorCode == "section-not-found")
        #expect(try other.request(["cmd": "setExpansionScope", "dataSource": "tree", "scope": "shared"]).errorCode == "permission-denied")

        // Shared again: the reader's view shows the owner's expansion, in the version that made it so.
        _ = try root.request(["cmd": "setExpansionScope", "dataSource": "tree", "scope": "shared"]).result()
        let back = try follow(&mine, on: other, until: "changes")
        #expect(back["view"] == "mine")
        #expect(mine.items("O") == ["a", "b", "b1", "c"])
        #expect(try other.request(["cmd": "expandInView", "view": "mine", "section": "O", "items": ["a"]]).errorCode == "invalid-argument")
    }

    /// Each view with an expansion of its own holds a copy of the snapshot: a user has a bounded number
    /// of them (root is exempt); detaching one frees its place.
    @Test func viewsWithTheirOwnExpansionAreBoundedPerUser() throws {
        let daemon = try sharedDaemon(arguments: ["--demo"], configuration: ["maxOwnExpansionViewsPerUser": 2])
        let other = try connect(daemon)
        for name in ["v1", "v2", "v3"] { _ = try other.request(["cmd": "attach", "dataSource": "emoji", "view": .string(name)]).result() }
        let expand: (String) throws -> JSONValue = { view in
            try other.request(["cmd": "expandInView", "view": .string(view), "section": "outline", "items": ["smileys"]])
        }
        #expect(try expand("v1")["ok"] == true)
        #expect(try expand("v2")["ok"] == true)
        #expect(try expand("v1")["ok"] == true, "a view that has its own expansion already takes no further place")
        let refused = try expand("v3")
        #expect(refused.errorCode == "quota-exceeded" && refused["error"]?["quota"] == "maxOwnExpansionViewsPerUser", "\(refused)")
        let attachRefused = try other.request(["cmd": "attach", "dataSource": "emoji", "view": "v4", "expansion": ["outline": ["expanded": ["food"]]]])
        #expect(attachRefused.errorCode == "quota-exceeded")
        _ = try other.request(["cmd": "detach", "view": "v1"]).result()
        #expect(try expand("v3")["ok"] == true)
        let root = try daemon.connect()
        for name in ["r1", "r2", "r3"] {
            _ = try root.request(["cmd": "attach", "dataSource": "emoji", "view": .string(name), "expansion": ["outline": ["expanded": ["food"]]]]).result()
        }
    }

    /// With a store, changes are published once durable while the next ones are being made: a view's own
    /// expansion waits its turn, and its events still turn what it showed into what it shows. The scope
    /// lasts across a restart.
    @Test func aViewsOwnExpansionStaysInStepWithDurableChangesAndTheScopeLasts() throws {
        let state = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let daemon = try Daemon(arguments: ["--state-directory", state])
        let owner = try daemon.connect()
        _ = try owner.request(["cmd": "applySectionSnapshot", "dataSource": "tree", "section": "O", "snapshot": Self.outline]).result()
        _ = try owner.request(["cmd": "setExpansionScope", "dataSource": "tree", "scope": "perView"]).result()
        let viewer = try daemon.connect()
        var view = try ClientView(attached: try viewer.request(["cmd": "attach", "dataSource": "tree", "view": "v"]).result())

        // The owner sends a burst without waiting; the viewer expands and collapses meanwhile.
        let burst = 60
        for index in 0..<burst {
            let parent = ["a", "b", "c"][index % 3]
            try owner.send([
                "id": .int(index), "cmd": "editSectionSnapshot", "dataSource": "tree", "section": "O",
                "operations": [["op": "append", "items": [.string("n\(index)")], "parent": .string(parent)]],
            ])
            if index % 10 == 0 {
                let reply = try viewer.request([
                    "cmd": index % 20 == 10 ? "expandInView" : "collapseInView", "view": "v", "section": "O", "items": ["a", "c"],
                ])
                #expect(reply["ok"] == true, "\(reply)")
            }
        }
        var replies = 0
        while replies < burst, let line = try owner.readJSON(timeout: .seconds(20)) {
            #expect(line["ok"] == true, "\(line)")
            replies += 1
        }
        // Everything the viewer was sent, up to the last version.
        let last = try owner.request(["cmd": "numberOfItems", "dataSource": "tree"]).result()["version"]?.intValue ?? -1
        while view.version < last { _ = try view.apply(try nextEvent(on: viewer)) }
        let fresh = try daemon.connect().request([
            "cmd": "attach", "dataSource": "tree", "view": "check", "expansion": ["O": ["expanded": ["a", "c"]]],
        ]).result()
        // The last own expansion (at 50) expanded a and c.
        #expect(try ClientView(attached: fresh).snapshot == view.snapshot)
        // a, b, c; a1, a2 and a's 20 new children; c's 20 (b stays collapsed).
        #expect(view.items("O").count == 3 + 2 + 20 + 20)

        try daemon.stop()
        let restarted = try Daemon(arguments: ["--state-directory", state], directory: daemon.directory)
        let listed = try restarted.request(["cmd": "listDataSources"]).result()["dataSources"]?.arrayValue.first
        #expect(listed?["expansionScope"] == "perView")
        let resumed = try restarted.connect().request([
            "cmd": "attach", "dataSource": "tree", "view": "v", "expansion": ["O": ["expanded": ["a"]]],
        ]).result()
        #expect(resumed["expansionScope"] == "perView" && resumed["resumed"] == false)
    }
}
