import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// Issue 46's findings 1–4 replayed as `nobody` against a real listd: rendered cells, the retained
/// change log, per-view expansion copies and layouts are charged to someone's account, and the request
/// that would pass `maxBytesPerUser` is refused with `quota-exceeded` naming the part.
@Suite("User accounts: every byte charged to someone (real listd, another user)", .serialized)
struct UserAccountServerTests {
    /// The account `access` shows for the connection's own user.
    func account(_ connection: LineConnection) throws -> JSONValue {
        let access = try connection.request(["cmd": "access", "dataSource": "anything"]).result()
        return try #require(access["usage"]?["account"])
    }

    /// Finding 1: a template expands a 1 KB payload into a 20 KB cell, and a view keeps every dequeued
    /// cell's content. The viewer's account is charged for them; past the quota `dequeue` is refused
    /// (part `cells`); detaching gives them back; root's own connection is exempt.
    @Test func renderedCellsAreChargedToTheViewer() throws {
        let quota = 1_000_000
        let daemon = try sharedDaemon(configuration: ["maxBytesPerUser": .int(quota)])
        let root = try daemon.connect()
        let payload = JSONValue.string(String(repeating: "w", count: 1_000))
        let items: [JSONValue] = (0..<400).map { ["id": .string("i\($0)"), "data": ["t": payload]] }
        _ = try root.request(["cmd": "apply", "dataSource": "wide", "snapshot": ["sections": [["id": "S", "items": .array(items)]]]]).result()
        let text = String(repeating: "{{t}}", count: 20)
        _ = try root.request(["cmd": "register", "registration": "fat", "contentConfiguration": ["type": "cell", "text": .string(text)]]).result()
        _ = try root.request(["cmd": "setCellProvider", "dataSource": "wide", "rules": [], "default": "fat"]).result()

        let other = try connect(daemon)
        _ = try other.request(["cmd": "attach", "dataSource": "wide", "view": "v"]).result()
        var dequeued = 0
        var refusal: JSONValue?
        for batch in 0..<20 {
            let paths: [JSONValue] = (0..<20).map { [0, .int(batch * 20 + $0)] }
            let reply = try other.request(["cmd": "dequeue", "view": "v", "indexPaths": .array(paths)])
            guard reply["ok"] == true else {
                refusal = reply
                break
            }
            dequeued += 20
        }
        #expect(refusal?.errorCode == "quota-exceeded" && refusal?["error"]?["part"] == "cells", "\(String(describing: refusal))")
        #expect(dequeued >= 40 && dequeued <= 80, "\(dequeued) cells of 20 KB under a 1 MB quota")
        let held = try account(other)
        let cells = try #require(held["cells"]?.intValue)
        #expect(cells > 800_000 && cells < quota + 500_000, "\(held)")
        _ = try other.request(["cmd": "detach", "view": "v"]).result()
        #expect(try account(other)["cells"] == 0)
        // Root's own connection is exempt; a root relay is charged like any user.
        _ = try root.request(["cmd": "attach", "dataSource": "wide", "view": "r"]).result()
        let all: [JSONValue] = (0..<100).map { [0, .int($0)] }
        _ = try root.request(["cmd": "dequeue", "view": "r", "indexPaths": .array(all)]).result()
        let relay = try daemon.connect()
        _ = try relay.request(["cmd": "hello", "client": "relay-test", "relay": true]).result()
        _ = try relay.request(["cmd": "attach", "dataSource": "wide", "view": "page"]).result()
        #expect(try relay.request(["cmd": "dequeue", "view": "page", "indexPaths": .array(all)])["ok"] == true, "one request may carry it past")
        let relayRefused = try relay.request(["cmd": "dequeue", "view": "page", "indexPaths": [[0, 150]]])
        #expect(relayRefused.errorCode == "quota-exceeded" && relayRefused["error"]?["part"] == "cells", "\(relayRefused)")
        let stats = try root.request(["cmd": "stats"]).result()
        #expect((stats["access"]?["accounts"]?["0-relay"]?["cells"]?.intValue ?? 0) > quota, "\(stats["access"] ?? .null)")
    }

    /// Finding 2: alternating two 5,000-item snapshots kept up to `changeLogBytes` (64 MiB) of events per
    /// data source outside the quota. The events are charged to the owner and the oldest dropped at the
    /// quota; a view resuming from before them gets the whole snapshot.
    @Test func theRetainedChangeLogIsChargedToTheOwner() throws {
        let quota = 2_000_000
        let daemon = try sharedDaemon(configuration: ["maxBytesPerUser": .int(quota)])
        let other = try connect(daemon)
        let snapshots: [JSONValue] = ["a", "b"].map { prefix in
            ["sections": [["id": "S", "items": .array((0..<5_000).map { .string("\(prefix)\($0)") })]]]
        }
        for round in 0..<40 {
            _ = try other.request(["cmd": "apply", "dataSource": "flip", "snapshot": snapshots[round % 2]]).result()
        }
        let held = try account(other)
        let changeLog = try #require(held["changeLog"]?.intValue)
        let total = try #require(held["total"]?.intValue)
        #expect(changeLog > 0 && total <= quota, "\(held)")
        // The newest events are kept; a view from version 2 resumes from the snapshot.
        let now = try other.request(["cmd": "attach", "dataSource": "flip", "view": "now"]).result()
        let incarnation = try #require(now["incarnation"])
        let late = try other.request(["cmd": "attach", "dataSource": "flip", "view": "late", "fromVersion": 2, "incarnation": incarnation]).result()
        #expect(late["resumed"] == false && late["sections"] != nil, "\(late)")
        let recent = try other.request(["cmd": "attach", "dataSource": "flip", "view": "recent", "fromVersion": 39, "incarnation": incarnation]).result()
        #expect(recent["resumed"] == true, "\(recent)")
    }

    /// Finding 3: per-view expansion copies were capped by count: 64 copies of a 100,000-child outline.
    /// Each copy is charged to the viewer by size; the copy that would pass the quota is refused (part
    /// `expansions`), through a root relay too.
    @Test func expansionCopiesAreChargedBySize() throws {
        let daemon = try sharedDaemon(configuration: ["maxBytesPerUser": 5_000_000])
        let root = try daemon.connect()
        let children: [JSONValue] = (0..<20_000).map { .string("child-\($0)") }
        _ = try root.request([
            "cmd": "applySectionSnapshot", "dataSource": "tree", "section": "O",
            "snapshot": ["items": [["id": "parent", "children": .array(children)]]],
        ]).result()
        _ = try root.request(["cmd": "setExpansionScope", "dataSource": "tree", "scope": "perView"]).result()
        let other = try connect(daemon)
        for (viewer, prefix) in [(other, "nobody"), (try relayAsRoot(daemon), "relay")] {
            for name in ["v1", "v2", "v3"] { _ = try viewer.request(["cmd": "attach", "dataSource": "tree", "view": .string(prefix + name)]).result() }
            let expand = { (view: String) in
                try viewer.request(["cmd": "expandInView", "view": .string(prefix + view), "section": "O", "items": ["parent"]])
            }
            #expect(try expand("v1")["ok"] == true)
            let refused = try expand("v2")
            #expect(refused.errorCode == "quota-exceeded" && refused["error"]?["part"] == "expansions", "\(refused)")
            _ = try viewer.request(["cmd": "detach", "view": .string(prefix + "v1")]).result()
            #expect(try expand("v3")["ok"] == true, "detaching gave the copy back")
        }
        let held = try account(other)
        #expect((held["expansions"]?.intValue ?? 0) > 2_000_000, "\(held)")
    }

    /// Finding 4: five 8.5 MB layouts took 294 MB with `usage.bytes` 10. Layouts are charged to the data
    /// source's owner; one that would pass the quota is refused (part `layouts`).
    @Test func layoutsAreChargedToTheOwner() throws {
        let daemon = try sharedDaemon(configuration: ["maxBytesPerUser": 1_000_000])
        let other = try connect(daemon)
        _ = try other.request(["cmd": "appendSections", "dataSource": "styled", "sections": ["S"]]).result()
        func layout(_ count: Int) -> JSONValue {
            var sections: [String: JSONValue] = [:]
            for index in 0..<count { sections["a-rather-long-section-name-\(index)"] = ["list": ["appearance": "insetGrouped"]] }
            return ["sections": .object(sections)]
        }
        _ = try other.request(["cmd": "setLayout", "dataSource": "styled", "layout": layout(100)]).result()
        let layouts = try #require(try account(other)["layouts"]?.intValue)
        #expect(layouts > 5_000, "\(layouts)")
        let refused = try other.request(["cmd": "setLayout", "dataSource": "styled", "layout": layout(30_000)])
        #expect(refused.errorCode == "quota-exceeded" && refused["error"]?["part"] == "layouts", "\(refused)")
        #expect(try account(other)["layouts"]?.intValue == layouts, "nothing changed")
    }

    /// A root connection that says it relays (as listweb does).
    func relayAsRoot(_ daemon: Daemon) throws -> LineConnection {
        let relay = try daemon.connect()
        _ = try relay.request(["cmd": "hello", "client": "relay-test", "relay": true]).result()
        return relay
    }
}
