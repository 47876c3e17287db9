import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

@Suite("Concurrent clients and views", .serialized)
struct ConcurrencyTests {
    /// 50 clients mutate one data source while 5 views watch it: versions strictly increase by one,
    /// every view gets every change in order, and each view's copy (its attach snapshot plus the
    /// stages, applied with the core library) equals the daemon's snapshot at the end.
    @Test func fiftyWritersFiveViews() throws {
        let daemon = try Daemon()
        let setup = try daemon.connect()
        #expect(try setup.request(["cmd": "appendSections", "dataSource": "shared", "sections": ["A", "B", "C"]])["ok"] == true)

        var views: [(connection: LineConnection, mirror: Snapshot, version: Int)] = []
        for index in 0..<5 {
            let connection = try daemon.connect()
            let attached = try connection.request(["cmd": "attach", "dataSource": "shared", "view": .string("v\(index)")]).result()
            views.append((connection, try mirrorSnapshot(attached["sections"]!), attached["version"]!.intValue!))
        }

        let writers = 50
        let operationsPerWriter = 40
        let failures = Failures()
        let socketPath = daemon.socketPath
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            do {
                let connection = try LineConnection(path: socketPath)
                var random = SystemRandomNumberGenerator()
                var mine: [String] = []
                for step in 0..<operationsPerWriter {
                    let request: JSONValue
                    if mine.count > 2 && step % 4 == 3 {
                        request = ["cmd": "moveItem", "dataSource": "shared", "item": .string(mine.randomElement(using: &random)!),
                                   "afterItem": .string(mine.randomElement(using: &random)!)]
                    } else if mine.count > 3 && step % 5 == 4 {
                        let victim = mine.removeLast()
                        request = ["cmd": "deleteItems", "dataSource": "shared", "items": [.string(victim)]]
                    } else {
                        let id = "w\(writer)-\(step)"
                        mine.append(id)
                        request = ["cmd": "appendItems", "dataSource": "shared", "items": [.string(id)],
                                   "toSection": .string(["A", "B", "C"].randomElement(using: &random)!)]
                    }
                    let reply = try connection.request(request)
                    // Moving an item relative to itself is the only refusal this load can cause.
                    if reply["ok"] != true && reply.errorCode != "invalid-move" { failures.add("\(request) → \(reply)") }
                }
            } catch {
                failures.add("writer \(writer): \(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")

        let final = try setup.request(["cmd": "snapshot", "dataSource": "shared"]).result()
        let finalVersion = final["version"]!.intValue!
        let expected = try mirrorSnapshot(final["sections"]!)
        for index in views.indices {
            while views[index].version < finalVersion {
                let event = try #require(try views[index].connection.readJSON(timeout: .seconds(30)))
                #expect(event["event"] == "changes")
                let version = event["version"]!.intValue!
                #expect(version == views[index].version + 1, "versions arrive in order, none skipped")
                try views[index].mirror.apply(WireDecoding.changes(event["changes"]!))
                views[index].version = version
            }
            #expect(views[index].mirror == expected, "view \(index) mirrors the daemon")
        }
        #expect(expected.numberOfItems > 0)
    }

    /// One change fanned out to 1,000 attached views.
    @Test func fanOutToAThousandViews() throws {
        let daemon = try Daemon()
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "wide", "sections": ["S"]])["ok"] == true)
        var views: [LineConnection] = []
        for _ in 0..<1_000 {
            let view = try daemon.connect()
            try view.send(["cmd": "attach", "dataSource": "wide"])
            views.append(view)
        }
        for view in views { #expect(try view.readJSON()?["ok"] == true) }
        #expect(try daemon.request(["cmd": "appendItems", "dataSource": "wide", "items": ["x"]])["ok"] == true)
        // How fast is measured by the benchmarks; here every view gets the event.
        for view in views { #expect(try view.readJSON(timeout: .seconds(60))?["event"] == "changes") }
    }

    @Test func droppingADataSourceTellsItsViews() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let view = try daemon.connect()
        #expect(try view.request(["cmd": "attach", "dataSource": "home", "view": "v"])["ok"] == true)
        #expect(try daemon.request(["cmd": "dropDataSource", "dataSource": "home"]).result()["dataSource"] == "home")
        #expect(try view.readJSON() == ["event": "dropped", "dataSource": "home", "view": "v"])
        #expect(try view.request(["cmd": "detach", "view": "v"]).errorCode == "not-attached", "the view was detached")
        #expect(try daemon.request(["cmd": "stats"]).result()["views"] == 0)
    }

    @Test func aViewThatDoesNotReadIsDisconnected() throws {
        let daemon = try Daemon(arguments: ["--max-view-queue-bytes", "200000"])
        let writer = try daemon.connect()
        #expect(try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]])["ok"] == true)
        let lazy = try daemon.connect()
        #expect(try lazy.request(["cmd": "attach", "dataSource": "d"])["ok"] == true)
        // Each change event is ~1 KB; the lazy view never reads.
        let padding = String(repeating: "p", count: 900)
        var overflowed = false
        for index in 0..<3_000 {
            let reply = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": [.string("\(padding)\(index)")]])
            #expect(reply["ok"] == true)
            let stats = try writer.request(["cmd": "stats"]).result()
            if stats["events"]?["viewsOverflowed"] == 1 {
                overflowed = true
                break
            }
        }
        #expect(overflowed)
        let stats = try writer.request(["cmd": "stats"]).result()
        #expect(stats["views"] == 0)
        // The lazy view finds its events, then a final overflow event, then the end.
        var last: JSONValue?
        while let line = try lazy.readJSON(timeout: .seconds(10)) { last = line }
        #expect(last?["event"] == "overflow")
    }
}

/// A snapshot of identifiers only (payloads left out), from the wire's `sections`.
func mirrorSnapshot(_ sections: JSONValue) throws -> Snapshot {
    try Snapshot(sections.arrayValue.map { section in
        (Section(section["id"]!.stringValue!), section["items"]!.arrayValue.map { Item(($0.stringValue ?? $0["id"]!.stringValue)!) })
    })
}

/// Failures collected from several threads.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
