import DiffableCore
import Foundation
import TestSupport
import Testing

/// `listctl watch` names every item and section a stage touches, also where the event gives only a
/// position (deletes, moves, reloads, and sections deleted, moved or reloaded).
@Suite("listctl watch names what changed", .serialized)
struct WatchNamesTests {
    @Test func everyStageIsPrintedWithItsItemsNames() throws {
        let daemon = try Daemon()
        let snapshot: JSONValue = ["sections": [["id": "today", "items": ["milk", "eggs", "tea"]], ["id": "later", "items": ["bread"]], ["id": "done", "items": []]]]
        _ = try daemon.request(["cmd": "apply", "dataSource": "todo", "snapshot": snapshot]).result()
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listctl")
        process.arguments = ["--socket", daemon.socketPath, "watch", "todo", "--view", "watcher", "--reconnect-seconds", "0", "--width", "0"]
        let output = makePipe()
        process.standardOutput = output
        let collected = PipeCollector(output)
        try process.start()
        defer { killAndWait(process) }
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["views"] == 1 })
        for line: JSONValue in [
            ["cmd": "reloadItems", "dataSource": "todo", "items": ["eggs"]],
            ["cmd": "moveItem", "dataSource": "todo", "item": "milk", "afterItem": "tea"],
            ["cmd": "deleteItems", "dataSource": "todo", "items": ["tea"]],
            ["cmd": "reloadSections", "dataSource": "todo", "sections": ["later"]],
            ["cmd": "moveSection", "dataSource": "todo", "section": "done", "beforeSection": "today"],
            ["cmd": "deleteSections", "dataSource": "todo", "sections": ["later"]],
        ] {
            _ = try daemon.request(line).result()
        }
        // The last stage's line, not only its version's: the two may arrive in separate reads of the pipe.
        #expect(try eventually { collected.text.contains(" v7\n  1 delete section") }, "\(collected.text)")
        let text = collected.text
        for expected in [
            " v2\n  1 reload          [0,1] eggs\n", " v3\n  1 move            [0,0]→[0,2] milk\n", " v4\n  1 delete          [0,1] tea\n",
            " v5\n  1 reload section  1 later\n", " v6\n  1 move section    2→0 done\n", " v7\n  1 delete section  2 later\n",
        ] {
            #expect(text.contains(expected), "\(expected) in \(text)")
        }
    }
}
