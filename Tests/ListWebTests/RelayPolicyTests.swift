import DiffableCore
@testable import ListWeb
import ListWire
import Testing

@Suite("listweb: what a page may ask listd")
struct RelayPolicyTests {
    func decide(_ policy: inout RelayPolicy, _ request: JSONValue) -> (forwarded: JSONValue?, refusal: JSONValue?) {
        switch policy.decide(request.jsonBytes) {
        case .forward(let bytes, _, _): return (try? JSONParser.parse(bytes), nil)
        case .refuse(let bytes): return (nil, try? JSONParser.parse(bytes))
        }
    }

    @Test func aPageAttachesToItsDataSourceUnderANameListwebGives() throws {
        var policy = RelayPolicy(dataSource: "home", allowsActions: false, viewPrefix: "web-1")
        let attached = decide(&policy, ["id": 1, "cmd": "attach", "dataSource": "home", "view": "someone-elses", "selectionEvents": true])
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
        _ = decide(&readOnly, ["cmd": "attach", "dataSource": "emoji"])
        var acting = RelayPolicy(dataSource: "emoji", allowsActions: true, viewPrefix: "web-b")
        _ = decide(&acting, ["cmd": "attach", "dataSource": "emoji"])
        let actions: [(JSONValue, JSONValue)] = [
            (["cmd": "setState", "view": "web-a-1", "item": "x", "state": ["selected": true]], ["cmd": "setState", "view": "web-b-1", "item": "x", "state": ["selected": true]]),
            (["cmd": "expandInView", "view": "web-a-1", "section": "outline", "items": ["smileys"]], ["cmd": "expandInView", "view": "web-b-1", "section": "outline", "items": ["smileys"]]),
            (["cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["smileys"]], ["cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["smileys"]]),
            (["cmd": "reorder", "view": "web-a-1", "item": "a", "beforeItem": "b"], ["cmd": "reorder", "view": "web-b-1", "item": "a", "beforeItem": "b"]),
        ]
        for (refused, passed) in actions {
            #expect(decide(&readOnly, refused).refusal?["error"]?["message"]?.stringValue?.contains("--allow-actions") == true)
            #expect(decide(&acting, passed).forwarded != nil)
        }
    }

    /// A view's own expansion is an action: read-only, an attach's `expansion` does not pass.
    @Test func anAttachsExpansionIsAnAction() {
        var readOnly = RelayPolicy(dataSource: "emoji", allowsActions: false, viewPrefix: "web-d")
        var acting = RelayPolicy(dataSource: "emoji", allowsActions: true, viewPrefix: "web-e")
        let attach: JSONValue = ["cmd": "attach", "dataSource": "emoji", "expansion": ["outline": ["expanded": ["smileys"]]]]
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
