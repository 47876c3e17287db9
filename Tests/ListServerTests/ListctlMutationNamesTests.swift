import DiffableCore
import Foundation
import ListClient
import Testing

/// listctl's changes print every stage as `listctl watch` does, with the names of what they touch,
/// also where listd's reply gives positions only (deletes, move sources, reloads): listctl reads the
/// data source first and pins the change to the version it read.
@Suite("listctl names what its changes touched", .serialized)
struct ListctlMutationNamesTests {
    @Test func reloadsDeletesAndMovesAreNamed() throws {
        let daemon = try Daemon()
        let snapshot: JSONValue = ["sections": [["id": "today", "items": ["milk", "eggs", "tea"]], ["id": "later", "items": ["bread"]]]]
        _ = try daemon.request(["cmd": "apply", "dataSource": "todo", "snapshot": snapshot]).result()
        let reload = try listctl(daemon, ["reload-items", "todo", "milk"])
        #expect(reload.status == 0 && reload.out == "version 2\n  1 reload          [0,0] milk\n", "\(reload)")
        let move = try listctl(daemon, ["move-item", "todo", "eggs", "--after", "bread"])
        #expect(move.out == "version 3\n  1 move            [0,1]→[1,1] eggs\n", "\(move)")
        let delete = try listctl(daemon, ["delete-items", "todo", "tea", "bread"])
        #expect(delete.out == "version 4\n  1 delete          [0,1] tea, [1,0] bread\n", "\(delete)")
        // The user's own --if-version is sent as given, and named when it is the version read.
        let pinned = try listctl(daemon, ["reload-items", "todo", "eggs", "--if-version", "4"])
        #expect(pinned.out == "version 5\n  1 reload          [1,0] eggs\n", "\(pinned)")
        let stale = try listctl(daemon, ["reload-items", "todo", "eggs", "--if-version", "4"])
        #expect(stale.status == 1 && stale.out.isEmpty && stale.err.contains("version-conflict"), "\(stale)")
        // A batch: each stage named from the data source as the stage before left it.
        let batch = try listctl(daemon, ["batch", "todo", "-"], input: #"[{"cmd":"deleteSections","sections":["today"]},{"cmd":"reloadItems","items":["eggs"]}]"#)
        #expect(batch.out.hasPrefix("version 6\n  1 delete section  0 today\n"), "\(batch)")
        #expect(batch.out.contains(" [0,0] eggs"), "\(batch)")
        // --json: listd's reply as it is.
        let json = try listctl(daemon, ["--json", "reload-items", "todo", "eggs"])
        #expect(json.out.hasPrefix(#"{"ok":true,"result":{"version":7,"changes":{"stages":[{"itemReloads":[[0,0]]}]}"#), "\(json)")
    }

    /// Over 100,000 items listctl does not read the data source first: positions only; at 100,000 it does.
    @Test func aLargeDataSourceIsNotReadFirst() throws {
        let daemon = try Daemon()
        let items: [JSONValue] = (0...100_000).map { .string("i\($0)") }
        _ = try daemon.request(["cmd": "apply", "dataSource": "big", "snapshot": ["sections": [["id": "all", "items": .array(items)]]]]).result()
        let over = try listctl(daemon, ["delete-items", "big", "i5"])
        #expect(over.out == "version 2\n  1 delete          [0,5]\n", "\(over)")
        let at = try listctl(daemon, ["delete-items", "big", "i7"])
        #expect(at.out == "version 3\n  1 delete          [0,6] i7\n", "\(at)")
    }

    /// Another client moving items all the time: a name listctl prints is always the one that went
    /// (pinning to the version read), never one read before the other client's change.
    @Test func aNameIsNeverStaleUnderAConcurrentWriter() throws {
        let daemon = try Daemon()
        let first: [JSONValue] = (0..<10).map { .string("i\($0)") }, last: [JSONValue] = (10..<20).map { .string("i\($0)") }
        let deleted: [JSONValue] = (0..<10).map { .string("d\($0)") }
        let sections: JSONValue = [["id": "s", "items": .array(first + deleted + last)]]
        _ = try daemon.request(["cmd": "apply", "dataSource": "busy", "snapshot": ["sections": sections]]).result()
        let stop = StopSignal()
        let failures = Failures()
        let finished = DispatchSemaphore(value: 0)
        let socketPath = daemon.socketPath
        defer {
            stop.set()
            finished.wait()
        }
        DispatchQueue.global().async {
            defer { finished.signal() }
            do {
                let writer = try LineConnection(path: socketPath)
                var toTheEnd = true
                while !stop.isSet {
                    // i0 to the end and back to the front: every d's position changes each time.
                    let move: JSONValue =
                        toTheEnd
                        ? ["cmd": "moveItem", "dataSource": "busy", "item": "i0", "afterItem": "i19"]
                        : ["cmd": "moveItem", "dataSource": "busy", "item": "i0", "beforeItem": "i1"]
                    let reply = try writer.request(move)
                    if reply["ok"] != true { failures.add("\(reply)") }
                    toTheEnd.toggle()
                }
            } catch {
                failures.add("writer: \(error)")
            }
        }
        for index in 0..<10 {
            let run = try listctl(daemon, ["delete-items", "busy", "d\(index)"])
            let line = run.out.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
            let entry = line.replacingOccurrences(of: #"^  1 delete          \[0,\d+\]"#, with: "", options: .regularExpression)
            #expect(run.status == 0 && entry != line && (entry.isEmpty || entry == " d\(index)"), "\(run)")
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
    }
}

/// A flag one thread sets and another reads.
final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
