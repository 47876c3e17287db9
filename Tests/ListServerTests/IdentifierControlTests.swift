import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// Identifiers with terminal control characters (ESC, BEL, an OSC 52 clipboard write, C1 CSI) are refused
/// by a real listd wherever a new identifier enters: sections, items, data sources, views, registrations,
/// outlines and applied snapshots; nothing of the refused command is applied.
@Suite("Control characters in identifiers, against a real listd", .serialized)
struct IdentifierControlTests {
    static let hostile = ["\u{1B}]52;c;aGVsbG8=\u{07}", "bell\u{07}", "csi\u{9B}2J", "nul\u{0}x", "del\u{7F}"]

    @Test func everyNewIdentifierIsChecked() throws {
        let daemon = try Daemon()
        let client = try daemon.connect()
        _ = try client.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "A", "items": ["a0"]]]]]).result()
        let before = try client.request(["cmd": "snapshot", "dataSource": "d"]).result()
        for bad in Self.hostile {
            let id = JSONValue.string(bad)
            let requests: [JSONValue] = [
                ["cmd": "appendItems", "dataSource": "d", "items": [id]],
                ["cmd": "appendSections", "dataSource": "d", "sections": [id]],
                ["cmd": "insertItems", "dataSource": "d", "items": [id], "beforeItem": "a0"],
                ["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "A", "items": ["a0", id]]]]],
                ["cmd": "apply", "dataSource": id, "snapshot": ["sections": []]],
                ["cmd": "createDataSource", "dataSource": id],
                ["cmd": "batch", "dataSource": "d", "operations": [["cmd": "appendItems", "items": ["fine"]], ["cmd": "appendItems", "items": [id]]]],
                ["cmd": "applySectionSnapshot", "dataSource": "d", "section": "A", "snapshot": ["items": [["id": "a0"], ["id": id]]]],
                ["cmd": "register", "registration": id, "contentConfiguration": ["type": "cell"]],
                ["cmd": "attach", "dataSource": "d", "view": id],
            ]
            for request in requests {
                let reply = try client.request(request)
                #expect(reply["error"]?["code"] == "invalid-argument", "\(request) → \(reply)")
                let message = reply["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains("control character"), "\(message)")
                #expect(!message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "the message escapes it")
            }
        }
        #expect(try client.request(["cmd": "snapshot", "dataSource": "d"]).result() == before)
        let sources = try client.request(["cmd": "listDataSources"]).result()
        #expect(sources["dataSources"]?.arrayValue.count == 1, "\(sources)")
        // Identifiers outside ASCII that are not controls stay fine.
        #expect(try client.request(["cmd": "appendItems", "dataSource": "d", "items": ["감기 ✓\u{A0}é"]])["ok"] == true)
    }
}
