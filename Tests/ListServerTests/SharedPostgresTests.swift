import DiffableCore
import Foundation
import ListClient
import ListWire
import PostgresTestServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two listd instances on one PostgreSQL database (started per test): every change made through one
/// reaches the other's views, in order, with the same events; registrations are shared; concurrent
/// writers through both converge; an instance killed under load loses nothing and catches up; the
/// database stopped and started again.
@Suite("Several listd instances on one PostgreSQL", .serialized)
struct SharedPostgresTests {
    /// The `changes` and `layoutChanged` events a view received until `version`.
    func events(on connection: LineConnection, until version: Int) throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var latest = -1
        while latest < version {
            guard let line = try connection.readLine(timeout: .seconds(30)) else { throw ClientError("the view's connection closed") }
            let event = try JSONParser.parse(line)
            guard let eventVersion = event["version"]?.intValue else { continue }
            lines.append(line)
            latest = eventVersion
        }
        return lines
    }

    func snapshot(_ daemon: Daemon, _ name: String) throws -> JSONValue? {
        try daemon.request(["cmd": "snapshot", "dataSource": .string(name)])["result"]
    }

    /// A data source applied and changed through one instance is followed through the other: its view
    /// gets every change, in version order, as the same event lines a view of the first one gets, and
    /// both end on the same snapshot, outlines, layout and cell provider.
    @Test func aViewOfTheOtherInstanceFollowsEveryChangeInOrder() throws {
        let postgres = try PostgresTestServer()
        let first = try Daemon(arguments: ["--postgres", postgres.uri])
        let second = try Daemon(arguments: ["--postgres", postgres.uri])
        let applied = try first.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": ["a", "b"]], ["id": "tree", "items": []]]]])
        #expect(applied["ok"] == true, "\(applied)")
        #expect(try eventually { try snapshot(second, "d") != nil }, "the other instance serves the new data source")
        let local = try first.connect()
        let remote = try second.connect()
        let attached = try local.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()
        #expect(try remote.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()["version"] == attached["version"])

        let writer = try first.connect()
        var version = attached["version"]?.intValue ?? 0
        let edits: [JSONValue] = [
            ["cmd": "appendItems", "dataSource": "d", "toSection": "s", "items": [["id": "c", "data": ["title": "C"]], "d"]],
            ["cmd": "batch", "dataSource": "d", "operations": [["cmd": "moveItem", "item": "d", "beforeItem": "a"], ["cmd": "deleteItems", "items": ["b"]]]],
            ["cmd": "updateItems", "dataSource": "d", "items": [["id": "c", "data": ["title": "C!"]]]],
            ["cmd": "applySectionSnapshot", "dataSource": "d", "section": "tree", "snapshot": ["items": [["id": "root", "children": ["leaf"]]]]],
            ["cmd": "expand", "dataSource": "d", "section": "tree", "items": ["root"]],
            ["cmd": "setLayout", "dataSource": "d", "layout": ["default": ["list": ["appearance": "insetGrouped"]]]],
            ["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": ["d", "c", "e"]], ["id": "tree", "items": ["root", "leaf"]]]]],
            ["cmd": "reconfigureItems", "dataSource": "d", "items": ["e"]],
        ]
        let appends: [JSONValue] = (0..<40).map { ["cmd": "appendItems", "dataSource": "d", "toSection": "s", "items": [.string("n\($0)")]] }
        for request in edits + appends {
            let reply = try writer.request(request)
            #expect(reply["ok"] == true, "\(request) → \(reply)")
            version = reply["result"]?["version"]?.intValue ?? version
        }
        let expected = try events(on: local, until: version)
        let followed = try events(on: remote, until: version)
        #expect(followed.count == expected.count)
        for (index, line) in followed.enumerated() where index < expected.count {
            #expect(String(decoding: line, as: UTF8.self) == String(decoding: expected[index], as: UTF8.self), "event \(index)")
        }
        let versions = try followed.map { try JSONParser.parse($0)["version"]?.intValue ?? -1 }
        #expect(versions == Array((attached["version"]!.intValue! + 1)...version), "every version once, in order")
        for query: JSONValue in [
            ["cmd": "snapshot", "dataSource": "d"], ["cmd": "sectionSnapshot", "dataSource": "d", "section": "tree"],
            ["cmd": "layout", "dataSource": "d"],
        ] {
            #expect(try second.request(query)["result"] == first.request(query)["result"], "\(query)")
        }
    }

    /// A registration and cell provider rules made through one instance configure cells on the other;
    /// a registration deleted through one is gone on the other.
    @Test func registrationsMadeOnOneAreUsedOnTheOther() throws {
        let postgres = try PostgresTestServer()
        let first = try Daemon(arguments: ["--postgres", postgres.uri])
        let second = try Daemon(arguments: ["--postgres", postgres.uri])
        for request: JSONValue in [
            ["cmd": "register", "registration": "title", "contentConfiguration": ["type": "cell", "text": "{{title}}!"]],
            ["cmd": "appendSections", "dataSource": "d", "sections": ["s"]],
            ["cmd": "appendItems", "dataSource": "d", "items": [["id": "a", "data": ["title": "Alpha"]]]],
            ["cmd": "setCellProvider", "dataSource": "d", "rules": [], "default": "title"],
        ] {
            #expect(try first.request(request)["ok"] == true, "\(request)")
        }
        #expect(try eventually { try second.request(["cmd": "cellProvider", "dataSource": "d"])["result"]?["default"] == "title" })
        #expect(try second.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue.map { $0["registration"] } == ["title"])
        let view = try second.connect()
        _ = try view.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()
        let cell = try view.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]?.arrayValue.first
        #expect(cell?["registration"] == "title", "\(String(describing: cell))")
        #expect(cell?["content"]?["text"] == "Alpha!", "\(String(describing: cell))")

        // Replaced through the first: the second's view is told ("replaced") and dequeues it configured anew.
        #expect(try first.request(["cmd": "register", "registration": "title", "replace": true, "contentConfiguration": ["type": "cell", "text": "{{title}}?"]]).result()["replaced"] == true)
        let told = try #require(try view.readJSON(timeout: .seconds(20)))
        #expect(told["event"] == "registrationChanged" && told["change"] == "replaced", "\(told)")
        let again = try view.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]?.arrayValue.first
        #expect(again?["content"]?["text"] == "Alpha?", "\(String(describing: again))")

        #expect(try first.request(["cmd": "unregister", "registration": "title"])["ok"] == true)
        #expect(try eventually { try second.request(["cmd": "registrations"]).result()["registrations"] == [] })
    }

    /// A data source dropped through one instance is dropped on the other (its views are told), and one
    /// made again under the same name is served there afresh.
    @Test func dropsAndNewIncarnationsReachTheOtherInstance() throws {
        let postgres = try PostgresTestServer()
        let first = try Daemon(arguments: ["--postgres", postgres.uri])
        let second = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try first.request(["cmd": "appendSections", "dataSource": "d", "sections": ["old"]])["ok"] == true)
        #expect(try eventually { try snapshot(second, "d") != nil })
        let view = try second.connect()
        _ = try view.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()
        #expect(try first.request(["cmd": "dropDataSource", "dataSource": "d"])["ok"] == true)
        let dropped = try view.readJSON(timeout: .seconds(30))
        #expect(dropped?["event"] == "dropped" && dropped?["view"] == "v", "\(String(describing: dropped))")
        #expect(try second.request(["cmd": "snapshot", "dataSource": "d"])["error"]?["code"] == "data-source-not-found")
        #expect(try first.request(["cmd": "appendSections", "dataSource": "d", "sections": ["new"]])["ok"] == true)
        #expect(try eventually { try snapshot(second, "d")?["sections"]?.arrayValue.first?["id"] == "new" })
        let incarnations = try [first, second].map { try $0.request(["cmd": "listDataSources"]).result() }
        #expect(incarnations[0] == incarnations[1])
    }

    /// A view whose data source cannot be followed change by change any more (another writer's
    /// checkpoint made the log start after the version it holds; simulated in SQL) is told to reload:
    /// one `changes` event with `reloadData` at the newest version, and reads give the stored state.
    @Test func aViewThatCannotBeBroughtAlongChangeByChangeReloads() throws {
        let postgres = try PostgresTestServer()
        let first = try Daemon(arguments: ["--postgres", postgres.uri])
        let second = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try first.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        #expect(try first.request(["cmd": "appendItems", "dataSource": "d", "items": ["a", "b"]])["ok"] == true)
        #expect(try eventually { try snapshot(second, "d")?["version"] == 2 })
        let view = try second.connect()
        _ = try view.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()
        // The checkpoint (the empty data source it was created as) now stands for version 10, and the log before it is gone.
        try postgres.psql(
            """
            UPDATE listd_data_sources SET version = 10, checkpoint_version = 10 WHERE name = 'd';
            DELETE FROM listd_change_log WHERE source = (SELECT id FROM listd_data_sources WHERE name = 'd');
            SELECT pg_notify('listd', 'elsewhere c 10 d');
            """)
        let event = try view.readJSON(timeout: .seconds(30))
        #expect(event?["version"] == 10 && event?["changes"] == ["reloadData": true, "stages": []], "\(String(describing: event))")
        #expect(try snapshot(second, "d")?["sections"] == [])
        let reloaded = try second.request(["cmd": "stats"]).result()["storage"]?["shared"]?["dataSourcesReloaded"]?.intValue ?? 0
        #expect(reloaded >= 1)
    }

    /// Writers through both instances append to one data source at once: every acknowledged write is
    /// there, nothing else, versions in the database are contiguous, and views of both instances get
    /// every version once, in order, ending on the same snapshot.
    @Test func concurrentWritersThroughBothConverge() throws {
        let postgres = try PostgresTestServer()
        let instances = try (0..<2).map { _ in try Daemon(arguments: ["--postgres", postgres.uri]) }
        #expect(try instances[0].request(["cmd": "appendSections", "dataSource": "log", "sections": ["s"]])["ok"] == true)
        #expect(try eventually { try snapshot(instances[1], "log") != nil })
        let views = try instances.map { try $0.connect() }
        let start = try views.map { try $0.request(["cmd": "attach", "dataSource": "log", "view": "v"]).result()["version"]?.intValue ?? -1 }
        #expect(start[0] == start[1])

        let log = WriterLog()
        let done = DispatchGroup()
        for writer in 0..<6 {
            let socketPath = instances[writer % 2].socketPath
            done.enter()
            Thread {
                defer { done.leave() }
                guard let connection = try? LineConnection(path: socketPath) else { return }
                for sequence in 0..<60 {
                    let id = "w\(writer)-\(sequence)"
                    log.attempt([id])
                    guard let reply = try? connection.request(["cmd": "appendItems", "dataSource": "log", "items": [.string(id)]]) else { return }
                    if reply["ok"] == true { log.acknowledge([id]) }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 120) == .success, "every writer stopped")
        let (acknowledged, _) = log.contents
        #expect(acknowledged.count > 300, "most writes succeed (\(acknowledged.count) of 360)")
        var finals: [JSONValue?] = []
        #expect(
            try eventually {
                finals = try instances.map { try snapshot($0, "log") }
                return finals[0] == finals[1] && finals[0]?["version"]?.intValue ?? 0 >= start[0] + acknowledged.count
            })
        let present = (finals[0]?["sections"]?.arrayValue.first?["items"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(Set(present) == Set(acknowledged), "every acknowledged write, and only those")
        #expect(present.count == Set(present).count)
        let newest = finals[0]?["version"]?.intValue ?? 0
        for view in views {
            let lines = try events(on: view, until: newest)
            let versions = try lines.map { try JSONParser.parse($0)["version"]?.intValue ?? -1 }
            #expect(versions == Array((start[0] + 1)...newest), "contiguous versions on every view")
            if versions != Array((start[0] + 1)...newest) {
                for line in lines { print("EVENT", String(decoding: line, as: UTF8.self).prefix(120)) }

            }
        }
        let gaps = try postgres.psql(
            "SELECT count(*) FROM (SELECT version - lag(version) OVER (ORDER BY version) AS step FROM listd_change_log) s WHERE step <> 1")
        #expect(gaps == "0\n")
        let conflicts = try instances.map { try $0.request(["cmd": "stats"]).result()["storage"]?["shared"]?["conflicts"]?.intValue ?? 0 }
        #expect(conflicts.reduce(0, +) > 0, "the writers did collide (and the collisions were run again)")
    }

    /// One instance is killed with SIGKILL while writers use both: nothing either acknowledged is lost,
    /// and the killed one, started again, serves the same state and follows on.
    @Test func anInstanceKilledUnderLoadLosesNothingAndCatchesUp() throws {
        let postgres = try PostgresTestServer()
        var killed = try Daemon(arguments: ["--postgres", postgres.uri])
        let survivor = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try survivor.request(["cmd": "appendSections", "dataSource": "log", "sections": ["s"]])["ok"] == true)
        #expect(try eventually { try snapshot(killed, "log") != nil })
        let log = WriterLog()
        let done = DispatchGroup()
        for writer in 0..<6 {
            let socketPath = (writer % 2 == 0 ? killed : survivor).socketPath
            done.enter()
            Thread {
                defer { done.leave() }
                guard let connection = try? LineConnection(path: socketPath) else { return }
                var sequence = 0
                while !log.stopped {
                    sequence += 1
                    let id = "w\(writer)-\(sequence)"
                    guard let reply = try? connection.request(["cmd": "appendItems", "dataSource": "log", "items": [.string(id)]]) else { return }
                    if reply["ok"] == true { log.acknowledge([id]) }
                }
            }.start()
        }
        // Killed once every writer of both instances has had writes acknowledged; the survivor's writers
        // then go on alone for a while.
        func acknowledgedCounts() -> [Int] {
            let (acknowledged, _) = log.contents
            var counts = [Int](repeating: 0, count: 6)
            for id in acknowledged { counts[Int(id.dropFirst().prefix { $0 != "-" })!] += 1 }
            return counts
        }
        let gotGoing = try eventually { acknowledgedCounts().allSatisfy { $0 >= 10 } }
        #expect(gotGoing, "every writer got going: \(acknowledgedCounts())")
        try killed.stop(signal: SIGKILL)
        let atTheKill = acknowledgedCounts()
        #expect(try eventually { zip(acknowledgedCounts(), atTheKill).enumerated().allSatisfy { $0.offset % 2 == 0 || $0.element.0 >= $0.element.1 + 10 } },
            "the survivor's writers go on: \(atTheKill) at the kill, \(acknowledgedCounts()) since")
        log.stop()
        #expect(done.wait(timeout: .now() + 120) == .success, "every writer stopped")
        let (acknowledged, _) = log.contents
        killed = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try survivor.request(["cmd": "appendItems", "dataSource": "log", "items": ["after"]])["ok"] == true)
        var finals: [JSONValue?] = []
        #expect(
            try eventually {
                finals = [try snapshot(killed, "log"), try snapshot(survivor, "log")]
                return finals[0] == finals[1]
            }, "the restarted instance catches up")
        let present = Set((finals[1]?["sections"]?.arrayValue.first?["items"]?.arrayValue ?? []).compactMap(\.stringValue))
        let lost = Set(acknowledged).subtracting(present)
        #expect(lost.isEmpty, "\(lost.count) acknowledged writes lost, e.g. \(lost.prefix(5))")
        #expect(present.contains("after"))
    }

    /// PostgreSQL stops: writes through either instance fail with storage-failed, reads go on (of what a
    /// failed write touched too: it is undone in memory), `stats` says the store is unavailable. It starts again: both
    /// reconnect, writes through either succeed again and reach the other.
    @Test func theDatabaseStoppedAndStartedAgain() throws {
        let postgres = try PostgresTestServer()
        let first = try Daemon(arguments: ["--postgres", postgres.uri])
        let second = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try first.request(["cmd": "appendSections", "dataSource": "a", "sections": ["s"]])["ok"] == true)
        #expect(try second.request(["cmd": "appendSections", "dataSource": "b", "sections": ["s"]])["ok"] == true)
        #expect(try eventually { try snapshot(first, "b") != nil && snapshot(second, "a") != nil })
        try postgres.stop(mode: "immediate")
        for daemon in [first, second] {
            let failed = try daemon.request(["cmd": "appendItems", "dataSource": "a", "items": ["x"]])
            #expect(failed["error"]?["code"] == "storage-failed", "\(failed)")
            #expect(try snapshot(daemon, "b")?["sections"] != nil, "reads of an untouched data source go on")
            #expect(try snapshot(daemon, "a")?["sections"]?.arrayValue.first?["items"] == [], "reads of the failed write's data source go on")
            #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["storage"]?["available"] == false })
        }
        try postgres.start()
        for daemon in [first, second] {
            #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["storage"]?["available"] == true })
        }
        #expect(try first.request(["cmd": "appendItems", "dataSource": "a", "items": ["one"]])["ok"] == true)
        #expect(try second.request(["cmd": "appendItems", "dataSource": "b", "items": ["two"]])["ok"] == true)
        #expect(
            try eventually {
                try snapshot(second, "a") == snapshot(first, "a") && snapshot(first, "b") == snapshot(second, "b")
                    && snapshot(first, "b")?["sections"]?.arrayValue.first?["items"] == ["two"]
            })
        #expect(try snapshot(second, "a")?["sections"]?.arrayValue.first?["items"] == ["one"])
        let reconnects = try first.request(["cmd": "stats"]).result()["storage"]?["shared"]?["reconnects"]?.intValue ?? 0
        #expect(reconnects > 0, "stats counts the reconnections")
        #expect(try first.request(["cmd": "stats"]).result()["storage"]?["shared"]?["lag"] == 0)
    }

    /// Read-your-writes across instances: a read on the other instance with `minVersion` set to the
    /// version a write's reply carried sees that write, every time, without waiting for the
    /// notification; a version nobody wrote fails with `version-not-reached` within the bound.
    @Test func aReadWithMinVersionSeesTheWriteMadeOnTheOther() throws {
        let postgres = try PostgresTestServer()
        let first = try Daemon(arguments: ["--postgres", postgres.uri])
        let second = try Daemon(arguments: ["--postgres", postgres.uri])
        let writer = try first.connect()
        let reader = try second.connect()
        // Made on the first: the other does not serve it yet, and reads it whole for minVersion.
        let created = try writer.request(["cmd": "appendSections", "dataSource": "ryw", "sections": ["s"]]).result()["version"]
        #expect(try reader.request(["cmd": "snapshot", "dataSource": "ryw", "minVersion": created ?? 0]).result()["version"] == created)
        for round in 0..<40 {
            let item = "i\(round)"
            let written = try writer.request(["cmd": "appendItems", "dataSource": "ryw", "toSection": "s", "items": [.string(item)]]).result()
            let version = try #require(written["version"]?.intValue)
            let read =
                round % 2 == 0
                ? try reader.request(["cmd": "snapshot", "dataSource": "ryw", "minVersion": .int(version)]).result()
                : try reader.request(["cmd": "item", "dataSource": "ryw", "item": .string(item), "minVersion": .int(version)]).result()
            #expect("\(read)".contains("\"\(item)\""), "round \(round): \(read)")
        }
        let view = try second.connect()
        let newest = try writer.request(["cmd": "appendItems", "dataSource": "ryw", "toSection": "s", "items": ["last"]]).result()["version"]
        let attached = try view.request(["cmd": "attach", "dataSource": "ryw", "view": "v", "minVersion": newest ?? 0]).result()
        #expect(attached["version"] == newest, "\(attached)")

        let started = ContinuousClock.now
        let ahead = try reader.request(["cmd": "snapshot", "dataSource": "ryw", "minVersion": .int((newest?.intValue ?? 0) + 100)])
        #expect(ahead["error"]?["code"] == "version-not-reached", "\(ahead)")
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(try reader.request(["cmd": "stats", "minVersion": 1])["error"]?["code"] == "invalid-argument", "only reads of a data source take it")
    }
}
