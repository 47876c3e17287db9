import DiffableCore
@testable import ListWeb
import ListWire
import Testing

@Suite("listweb: what a page may ask listd")
struct RelayPolicyTests {
    /// The policy's decision; a forwarded attach is answered as listd would (accepted, or with `refusing`).
    func decide(_ policy: inout RelayPolicy, _ request: JSONValue, refusing: Bool = false) -> (forwarded: JSONValue?, refusal: JSONValue?) {
        switch policy.decide(request.jsonBytes) {
        case .forward(let bytes, let command, let id):
            if command == "attach", let id {
                let reply = refusing ? #","ok":false,"error":{"code":"permission-denied"}}"# : #","ok":true,"result":{}}"#
                policy.listdReplied(Array(#"{"id":"#.utf8) + id + Array(reply.utf8))
            }
            return (try? JSONParser.parse(bytes), nil)
        case .refuse(let bytes): return (nil, try? JSONParser.parse(bytes))
        }
    }

    @Test func aPageAttachesToItsDataSourceUnderANameListwebGives() throws {
        var policy = RelayPolicy(dataSource: "home", allowsActions: false, viewPrefix: "web-1")
        let attached = decide(&policy, ["id": 1, "cmd": "attach", "dataSource": "home", "view": "someone-elses", "selectionEvents": true])
        #expect(policy.views == ["web-1-1"] && policy.pendingAttaches.isEmpty)
        #expect(attached.forwarded?["view"] == "web-1-1" && attached.forwarded?["selectionEvents"] == nil)
        #expect(decide(&policy, ["id": 2, "cmd": "attach", "dataSource": "emoji"]).refusal?["error"]?["code"] == "permission-denied")
        #expect(decide(&policy, ["id": 3, "cmd": "dequeue", "view": "web-1-1", "indexPaths": [[0, 0]]]).forwarded != nil)
        // Another page's (or another client's) view is not this page's.
        let other = decide(&policy, ["id": 4, "cmd": "dequeue", "view": "web-2-1", "indexPaths": [[0, 0]]])
        #expect(other.refusal?["id"] == 4 && other.refusal?["error"]?["code"] == "permission-denied")
        #expect(decide(&policy, ["cmd": "snapshot", "dataSource": "home"]).forwarded != nil)
        #expect(decide(&policy, ["cmd": "snapshot", "dataSource": "secret"]).refusal != nil)
    }

    @Test func readOnlyUnlessActionsAreAllowed() {
        var readOnly = RelayPolicy(dataSource: "emoji", allowsActions: false, viewPrefix: "web-a")
        _ = decide(&readOnly, ["id": 1, "cmd": "attach", "dataSource": "emoji"])
        var acting = RelayPolicy(dataSource: "emoji", allowsActions: true, viewPrefix: "web-b")
        _ = decide(&acting, ["id": 1, "cmd": "attach", "dataSource": "emoji"])
        let actions: [(JSONValue, JSONValue)] = [
            (["cmd": "setState", "view": "web-a-1", "item": "x", "state": ["selected": true]], ["cmd": "setState", "view": "web-b-1", "item": "x", "state": ["selected": true]]),
            (["cmd": "expandInView", "view": "web-a-1", "section": "outline", "items": ["smileys"]], ["cmd": "expandInView", "view": "web-b-1", "section": "outline", "items": ["smileys"]]),
            (["cmd": "collapseInView", "view": "web-a-1", "section": "outline", "items": ["smileys"]], ["cmd": "collapseInView", "view": "web-b-1", "section": "outline", "items": ["smileys"]]),
        ]
        for (refused, passed) in actions {
            #expect(decide(&readOnly, refused).refusal?["error"]?["message"]?.stringValue?.contains("--allow-actions") == true)
            #expect(decide(&acting, passed).forwarded != nil)
        }
    }

    /// Even with --allow-actions, nothing that changes the data source for every view passes: the shared
    /// outline's expand and collapse, reorder (it moves items of the data source's snapshot).
    @Test func aPageNeverChangesSharedState() {
        var acting = RelayPolicy(dataSource: "emoji", allowsActions: true, viewPrefix: "web-s")
        _ = decide(&acting, ["id": 1, "cmd": "attach", "dataSource": "emoji"])
        let shared: [JSONValue] = [
            ["id": 2, "cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["smileys"]],
            ["id": 3, "cmd": "collapse", "dataSource": "emoji", "section": "outline", "items": ["smileys"]],
            ["id": 4, "cmd": "reorder", "view": "web-s-1", "item": "a", "beforeItem": "b"],
        ]
        for request in shared {
            let refusal = decide(&acting, request).refusal
            #expect(refusal?["error"]?["code"] == "permission-denied" && refusal?["error"]?["message"]?.stringValue?.contains("own view") == true, "\(request)")
        }
    }

    /// Attaches listd refuses leave nothing recorded (900,000 of them grew listweb by 114 MB): a view is
    /// the page's once listd accepted it, and a page holds a bounded number of views and waiting attaches.
    @Test func refusedAttachesAreNotRecorded() {
        var policy = RelayPolicy(dataSource: "home", allowsActions: false, viewPrefix: "web-r")
        for id in 0..<30_000 {
            _ = decide(&policy, ["id": .int(id), "cmd": "attach", "dataSource": "home"], refusing: true)
        }
        #expect(policy.views.isEmpty && policy.pendingAttaches.isEmpty)
        // Unanswered attaches stop at the limit; accepted ones at the views' limit.
        for id in 0..<100 { _ = policy.decide((["id": .int(id), "cmd": "attach", "dataSource": "home"] as JSONValue).jsonBytes) }
        #expect(policy.pendingAttaches.count == RelayPolicy.maximumPendingAttaches)
        var accepting = RelayPolicy(dataSource: "home", allowsActions: false, viewPrefix: "web-q")
        for id in 0..<100 { _ = decide(&accepting, ["id": .int(id), "cmd": "attach", "dataSource": "home"]) }
        #expect(accepting.views.count == RelayPolicy.maximumViews)
        let over = decide(&accepting, ["id": 101, "cmd": "attach", "dataSource": "home"]).refusal
        #expect(over?["error"]?["code"] == "limit-exceeded")
        // An attach listweb could not recognise in the reply (no id, a long or odd one) is refused.
        #expect(decide(&accepting, ["cmd": "attach", "dataSource": "home"]).refusal?["error"]?["code"] == "invalid-argument")
        #expect(decide(&accepting, ["id": "a,\"ok\":true", "cmd": "attach", "dataSource": "home"]).refusal?["error"]?["code"] == "invalid-argument")
    }

    /// A view's own expansion is an action: read-only, an attach's `expansion` does not pass.
    @Test func anAttachsExpansionIsAnAction() {
        var readOnly = RelayPolicy(dataSource: "emoji", allowsActions: false, viewPrefix: "web-d")
        var acting = RelayPolicy(dataSource: "emoji", allowsActions: true, viewPrefix: "web-e")
        let attach: JSONValue = ["id": 1, "cmd": "attach", "dataSource": "emoji", "expansion": ["outline": ["expanded": ["smileys"]]]]
        #expect(decide(&readOnly, attach).forwarded?["expansion"] == nil)
        #expect(decide(&acting, attach).forwarded?["expansion"] != nil)
    }

    @Test func everythingElseIsRefused() {
        var policy = RelayPolicy(dataSource: "home", allowsActions: true, viewPrefix: "web-c")
        for command in ["appendItems", "apply", "dropDataSource", "register", "setLayout", "backup", "watchDisplay", "stats", "hello", "batch"] {
            #expect(decide(&policy, ["id": "x", "cmd": .string(command), "dataSource": "home"]).refusal?["error"]?["code"] == "permission-denied", "\(command)")
        }
        #expect(decide(&policy, ["nocmd": 1]).refusal?["error"]?["code"] == "invalid-argument")
        switch policy.decide(Array("{not json".utf8)) {
        case .refuse(let bytes): #expect(String(decoding: bytes, as: UTF8.self).contains("invalid-json"))
        case .forward: Issue.record("forwarded")
        }
    }
}
