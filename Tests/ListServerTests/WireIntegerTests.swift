import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// Every integer a request can carry, at the extremes of `Int` and beyond, against a real listd: each
/// line gets a reply (an error naming the field, or a result), the daemon stays up, and the state is
/// what it was. Before range checks, `snapshot` with `offset` + `limit` past `Int.max` killed the
/// process with an arithmetic trap.
@Suite("Integers from the wire at their extremes", .serialized)
struct WireIntegerTests {
    static let extremes = ["9223372036854775807", "-9223372036854775808", "-1", "9007199254740993", "1e300", "-1e300", "99999999999999999999"]

    /// Request lines with `N` standing for each extreme value in turn.
    static let templates = [
        #"{"cmd":"snapshot","dataSource":"d","section":"A","offset":N,"limit":10}"#,
        #"{"cmd":"snapshot","dataSource":"d","section":"A","offset":1,"limit":N}"#,
        #"{"cmd":"snapshot","dataSource":"d","section":"A","offset":N,"limit":N}"#,
        #"{"cmd":"itemIdentifier","dataSource":"d","indexPath":[N,0]}"#,
        #"{"cmd":"itemIdentifier","dataSource":"d","indexPath":[0,N]}"#,
        #"{"cmd":"itemIdentifier","dataSource":"d","indexPath":[N,N]}"#,
        #"{"cmd":"sectionIdentifier","dataSource":"d","index":N}"#,
        #"{"cmd":"appendItems","dataSource":"d","items":["new"],"ifVersion":N}"#,
        #"{"cmd":"batch","dataSource":"d","ifVersion":N,"operations":[{"cmd":"appendItems","items":["x"]}]}"#,
        #"{"cmd":"expand","dataSource":"d","items":["a0"],"ifVersion":N}"#,
        #"{"cmd":"attach","dataSource":"d","view":"w","fromVersion":N,"incarnation":"x"}"#,
        #"{"cmd":"hello","protocol":N}"#,
        #"{"cmd":"configured","request":N,"cells":[]}"#,
        #"{"cmd":"dequeue","view":"v","indexPaths":[[N,0]]}"#,
        #"{"cmd":"dequeue","view":"v","indexPaths":[[0,N]]}"#,
        #"{"cmd":"dequeueSupplementary","view":"v","elementKind":"header","indexPath":[N,N]}"#,
        #"{"cmd":"setLayout","dataSource":"d","layout":{"sections":{"A":{"group":{"axis":"horizontal","width":{"absolute":N},"height":{"absolute":N}},"interGroupSpacing":N}}}}"#,
        #"{"cmd":"setLayout","dataSource":"d","layout":{"sections":{"A":{"item":{"width":{"fractionalWidth":N},"height":{"fractionalHeight":1}},"group":{"axis":"vertical","width":{"fractionalWidth":1},"height":{"absolute":3},"count":N}}}}}"#,
        #"{"cmd":"register","registration":"r2","contentConfiguration":{"type":"cell","text":"{{title}}","textProperties":{"numberOfLines":N}}}"#,
        #"{"cmd":"setState","view":"v","item":"a0","state":{"selected":N}}"#,
    ]

    @Test func extremeIntegersAreRefusedAndNothingChanges() throws {
        let daemon = try Daemon()
        let setup = try daemon.connect()
        _ = try setup.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "A", "items": ["a0", "a1", "a2"]]]]]).result()
        _ = try setup.request(["cmd": "register", "registration": "r", "contentConfiguration": ["type": "cell", "text": "{{item}}"]]).result()
        _ = try setup.request(["cmd": "setCellProvider", "dataSource": "d", "rules": [["section": "A", "registration": "r"]], "default": "r"]).result()
        _ = try setup.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()
        let before = try setup.request(["cmd": "snapshot", "dataSource": "d"]).result()

        let client = try daemon.connect()
        let watcher = try daemon.connect()
        for template in Self.templates {
            for extreme in Self.extremes {
                let line = template.replacingOccurrences(of: "N", with: extreme)
                try client.send(line: line)
                let reply = try #require(try client.readJSON(timeout: .seconds(10)), "no reply to \(line)")
                if reply["ok"] == false {
                    let code = reply["error"]?["code"]?.stringValue ?? ""
                    #expect(!["internal", ""].contains(code), "\(line) → \(reply)")
                }
                // The daemon is alive and answers another connection.
                #expect(try watcher.request(["cmd": "ping"])["ok"] == true, "after \(line)")
            }
        }
        let after = try setup.request(["cmd": "snapshot", "dataSource": "d"]).result()
        #expect(after["sections"] == before["sections"], "no extreme value changed the snapshot")
    }

    /// The answers name the field and the range.
    @Test func outOfRangeAnswersNameTheField() throws {
        let daemon = try Daemon()
        let client = try daemon.connect()
        _ = try client.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "A", "items": ["a0"]]]]]).result()
        try client.send(line: #"{"cmd":"snapshot","dataSource":"d","section":"A","offset":9223372036854775807,"limit":10}"#)
        let offset = try #require(try client.readJSON())
        #expect(offset["error"]?["code"] == "invalid-argument")
        #expect(offset["error"]?["message"]?.stringValue?.contains("\"offset\"") == true, "\(offset)")
        try client.send(line: #"{"cmd":"sectionIdentifier","dataSource":"d","index":-1}"#)
        let index = try #require(try client.readJSON())
        #expect(index["error"]?["code"] == "invalid-argument")
        #expect(index["error"]?["message"]?.stringValue?.contains("\"index\"") == true, "\(index)")
        try client.send(line: #"{"cmd":"itemIdentifier","dataSource":"d","indexPath":[0,9007199254740991]}"#)
        let path = try #require(try client.readJSON())
        #expect(path["error"]?["code"] == "index-out-of-range", "\(path)")
    }
}
