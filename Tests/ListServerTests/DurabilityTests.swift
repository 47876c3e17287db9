import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What listd acknowledged survives: restarts, `kill -9`, a full disk; damaged or foreign databases and
/// a second listd on the same directory are refused.
@Suite("Durable state", .serialized)
struct DurabilityTests {
    /// A state directory that outlives the daemons started on it.
    final class StateDirectory {
        let path: String
        init() throws { path = try makeTemporaryDirectory() + "/state" }
        deinit { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        var database: String { path + "/listd.sqlite3" }

        func start(_ extra: [String] = []) throws -> Daemon { try Daemon(arguments: ["--state-directory", path] + extra) }
    }

    @Test func aCleanRestartKeepsEverything() throws {
        let state = try StateDirectory()
        var before: [JSONValue] = []
        let queries: [JSONValue] = [
            ["cmd": "snapshot", "dataSource": "tasks"], ["cmd": "sectionSnapshot", "dataSource": "tasks", "section": "tree"],
            ["cmd": "layout", "dataSource": "tasks"], ["cmd": "registrations"], ["cmd": "listDataSources"],
            ["cmd": "dequeue", "dataSource": "tasks", "view": "v", "indexPaths": [[0, 0], [1, 0]]],
            ["cmd": "snapshot", "dataSource": "big"],
        ]
        // An applied snapshot is stored as a checkpoint, in parts when it is this large.
        let bigItems: [JSONValue] = (0..<20_000).map { ["id": .string("item-\($0)"), "data": ["n": .int($0)]] }
        do {
            let daemon = try state.start()
            let connection = try daemon.connect()
            for request: JSONValue in [
                ["cmd": "register", "registration": "plain", "contentConfiguration": ["type": "cell", "text": "{{title}}"]],
                ["cmd": "register", "registration": "big", "contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{n}}"]],
                // Replaced in place: stored with its new definition, still first.
                ["cmd": "register", "registration": "plain", "replace": true, "contentConfiguration": ["type": "valueCell", "text": "{{title}}"]],
                ["cmd": "appendSections", "dataSource": "tasks", "sections": [["id": "todo", "data": ["title": "To do"]], "tree"]],
                ["cmd": "appendItems", "dataSource": "tasks", "toSection": "todo", "items": [["id": "a", "data": ["title": "Alpha", "n": 1]], "b", "c"]],
                ["cmd": "batch", "dataSource": "tasks", "operations": [["cmd": "moveItem", "item": "c", "beforeItem": "a"], ["cmd": "deleteItems", "items": ["b"]]]],
                ["cmd": "updateItems", "dataSource": "tasks", "items": [["id": "a", "data": ["title": "Alpha!", "n": 2.5]]]],
                [
                    "cmd": "applySectionSnapshot", "dataSource": "tasks", "section": "tree",
                    "snapshot": ["items": [["id": "root", "children": ["leaf1", ["id": "leaf2", "data": ["x": true]]]], "other"]],
                ],
                ["cmd": "expand", "dataSource": "tasks", "section": "tree", "items": ["root"]],
                [
                    "cmd": "setLayout", "dataSource": "tasks",
                    "layout": [
                        "default": ["list": ["appearance": "insetGrouped"]],
                        "sections": [
                            "todo": [
                                "item": ["width": ["fractionalWidth": 1], "height": ["fractionalHeight": 1]],
                                "group": ["axis": "horizontal", "width": ["fractionalWidth": 0.5], "height": ["absolute": 3]], "interGroupSpacing": 1,
                            ]
                        ],
                    ],
                ],
                ["cmd": "setCellProvider", "dataSource": "tasks", "rules": [["section": "todo", "registration": "big"]], "default": "plain"],
                ["cmd": "attach", "dataSource": "tasks", "view": "v"],
                ["cmd": "apply", "dataSource": "big", "snapshot": ["sections": [["id": "s", "items": .array(bigItems)]]]],
                ["cmd": "appendItems", "dataSource": "big", "items": ["after"]],
            ] {
                let reply = try connection.request(request)
                #expect(reply["ok"] == true, "\(request) → \(reply)")
            }
            before = try queries.map { try connection.request($0)["result"] ?? .null }
            #expect(try daemon.stop() == 0)
        }
        let daemon = try state.start()
        // Loaded before READY=1, and STATUS= says so.
        #expect(daemon.notify.messages.joined().contains("loaded 2 data sources and 2 registrations from \(state.path)"), "\(daemon.notify.messages)")
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "attach", "dataSource": "tasks", "view": "v"])["ok"] == true)
        let after = try queries.map { try connection.request($0)["result"] ?? .null }
        for (index, query) in queries.enumerated() {
            // Views do not last (they belong to connections): the cell identifiers may differ, the configured cells not.
            if query["cmd"] == "dequeue" {
                #expect(cellContents(before[index]) == cellContents(after[index]))
            } else {
                #expect(before[index] == after[index], "\(query)")
            }
        }
        let versions = (after[4]["dataSources"]?.arrayValue ?? []).map { ($0["name"] ?? $0["dataSource"] ?? .null, $0["version"] ?? .null) }
        #expect(versions.contains { $0.0 == "tasks" && $0.1 == 8 } && versions.contains { $0.0 == "big" && $0.1 == 2 }, "\(versions)")
        #expect(after[6]["sections"]?.arrayValue.first?["items"]?.arrayValue.count == 20_001)
    }

    private func cellContents(_ result: JSONValue) -> [JSONValue] {
        (result["cells"]?.arrayValue ?? []).map { cell in
            guard case .object(var copy) = cell else { return cell }
            copy["cell"] = nil
            return .object(copy)
        }
    }

    /// Ten writers (five single appends, five 20-operation batches) while listd is killed with SIGKILL,
    /// three times over: every acknowledged write is there after the restart, and every batch is all or nothing.
    @Test(arguments: ["always", "periodic"])
    func killNineLosesNoAcknowledgedWrite(sync: String) throws {
        let state = try StateDirectory()
        try checkKillNineLosesNoAcknowledgedWrite(minimumPerRound: 50) { try state.start(["--sync", sync]) }
    }

    /// The state directory on a 4 MiB tmpfs, filled up: a write fails with storage-failed and changes
    /// nothing, reads go on; once space is freed, writes work again; a restart has everything.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskFailsWritesAndLosesNothing() throws {
        let mountPoint = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let mount = try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint])
        try #require(mount == 0, "cannot mount a tmpfs")
        defer { _ = try? runCommand("/bin/umount", ["-l", mountPoint]) }
        let state = mountPoint + "/state"
        var daemon: Daemon? = try Daemon(arguments: ["--state-directory", state])
        let connection = try daemon!.connect()
        #expect(try connection.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        for index in 0..<50 { #expect(try connection.request(["cmd": "appendItems", "dataSource": "d", "items": [.string("a\(index)")]])["ok"] == true) }

        // Fill the file system.
        let filler = mountPoint + "/filler"
        try #require(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
        let chunk = Data(repeating: 0x55, count: 64 << 10)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try? handle.close()

        let big: JSONValue = ["id": "big", "data": .string(String(repeating: "b", count: 300_000))]
        let failed = try connection.request(["cmd": "appendItems", "dataSource": "d", "items": [big]])
        #expect(failed.errorCode == "storage-failed", "\(failed)")
        #expect(failed["error"]?["message"]?.stringValue?.contains("full") == true, "\(failed)")
        // Nothing changed, and reads work.
        let snapshot = try connection.request(["cmd": "snapshot", "dataSource": "d"])
        #expect(snapshot["result"]?["version"] == 51)
        #expect(try connection.request(["cmd": "item", "dataSource": "d", "item": "big"]).errorCode == "item-not-found")

        try FileManager.default.removeItem(atPath: filler)
        let retried = try connection.request(["cmd": "appendItems", "dataSource": "d", "items": [big]])
        #expect(retried["ok"] == true && retried["result"]?["version"] == 52, "\(retried)")
        #expect(try daemon!.stop() == 0)
        daemon = nil

        let restarted = try Daemon(arguments: ["--state-directory", state])
        let items = try restarted.request(["cmd": "snapshot", "dataSource": "d"])["result"]?["sections"]?.arrayValue.first?["items"]?.arrayValue ?? []
        #expect(items.count == 51)
        #expect(items.last?["id"] == "big")
    }

    /// Runs a command and returns its exit status.
    private func runCommand(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        try process.start()
        process.waitUntilExit(within: .seconds(60))
        return process.terminationStatus
    }

    @Test func aSecondListdOnTheDirectoryIsRefused() throws {
        let state = try StateDirectory()
        let daemon = try state.start()
        let second = try runExecutable("listd", ["--socket", daemon.directory + "/second.sock", "--state-directory", state.path])
        #expect(second.status != 0)
        #expect(second.err.contains(state.path))
        #expect(second.err.contains("PID \(daemon.process.processIdentifier)"))
        // The first one still serves.
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
    }

    @Test(arguments: ["header", "pages"])
    func aDamagedDatabaseIsRefusedAndLeftAlone(damage: String) throws {
        let state = try StateDirectory()
        do {
            let daemon = try state.start()
            let payload = JSONValue.string(String(repeating: "x", count: 2_000))
            let items = (0..<200).map { JSONValue.object(["id": .string("i\($0)"), "data": payload]) }
            #expect(try daemon.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": .array(items)]]]])["ok"] == true)
            #expect(try daemon.stop() == 0)
        }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: state.database)))
        #expect(bytes.count > 8_192)
        let range = damage == "header" ? 0..<100 : 4_096..<bytes.count
        for index in range { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: state.database))
        let run = try runExecutable("listd", ["--socket", state.path + "/../s.sock", "--state-directory", state.path])
        #expect(run.status != 0)
        #expect(run.err.contains(state.database), "\(run.err)")
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: state.database)))
        #expect(after == bytes, "the damaged file was changed")
    }

    @Test func aDatabaseFromANewerListdIsRefused() throws {
        let state = try StateDirectory()
        do {
            let daemon = try state.start()
            #expect(try daemon.stop() == 0)
        }
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [state.database, "PRAGMA user_version = 99"]
        try sqlite.start()
        sqlite.waitUntilExit(within: .seconds(60))
        let run = try runExecutable("listd", ["--socket", state.path + "/../s.sock", "--state-directory", state.path])
        #expect(run.status != 0)
        #expect(run.err.contains("schema version 99"), "\(run.err)")
    }

    /// `listctl backup FILE` while listd runs: listd started on the copy has exactly what was stored when
    /// the backup was made; an ephemeral listd has nothing to back up.
    @Test func aBackupMadeWhileRunningRestores() throws {
        let state = try StateDirectory()
        let daemon = try state.start(["--demo"])
        let connection = try daemon.connect()
        for index in 0..<200 {
            #expect(try connection.request(["cmd": "appendItems", "dataSource": "home", "toSection": "consult", "items": [.string("b\(index)")]])["ok"] == true)
        }
        let before = try connection.request(["cmd": "snapshot", "dataSource": "home"]).result()
        let copy = (state.path as NSString).deletingLastPathComponent + "/copy.sqlite3"
        let run = try runExecutable("listctl", ["--socket", daemon.socketPath, "backup", copy])
        #expect(run.status == 0 && run.out.contains("backed up"), "\(run.err)")
        #expect(try connection.request(["cmd": "appendItems", "dataSource": "home", "items": ["after"]])["ok"] == true)

        let restored = try StateDirectory()
        try FileManager.default.createDirectory(atPath: restored.path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: copy, toPath: restored.database)
        let second = try restored.start()
        #expect(try second.request(["cmd": "snapshot", "dataSource": "home"]).result() == before)
        #expect(try second.request(["cmd": "registrations"]).result() == (try daemon.request(["cmd": "registrations"]).result()))

        let ephemeral = try Daemon()
        let refused = try runExecutable("listctl", ["--socket", ephemeral.socketPath, "backup", copy + ".2"])
        #expect(refused.status == 1 && refused.err.contains("ephemeral"), "\(refused.err)")
    }

    @Test func ephemeralWritesNoFile() throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let daemon = try Daemon(arguments: ["--demo"], environment: ["HOME": home, "XDG_STATE_HOME": home + "/state"])
        #expect(try daemon.request(["cmd": "appendItems", "dataSource": "home", "items": ["new"]])["ok"] == true)
        #expect(try daemon.stop() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty)
    }

    @Test func theDemoIsAddedOnlyWhenAbsent() throws {
        let state = try StateDirectory()
        do {
            let daemon = try state.start(["--demo"])
            #expect(try daemon.request(["cmd": "appendItems", "dataSource": "home", "items": ["mine"]])["ok"] == true)
            #expect(try daemon.request(["cmd": "dropDataSource", "dataSource": "emoji"])["ok"] == true)
            #expect(try daemon.stop() == 0)
        }
        let daemon = try state.start(["--demo"])
        let item = try daemon.request(["cmd": "item", "dataSource": "home", "item": "mine"])
        #expect(item["ok"] == true)
        // A dropped demo data source is absent, so it comes back.
        #expect(try daemon.request(["cmd": "numberOfItems", "dataSource": "emoji"])["ok"] == true)
    }
}

/// Ten writers (five of single appends, five of 20-operation batches) while a listd that `start` makes
/// is killed with SIGKILL, three times over; then a last listd from `start` must have every
/// acknowledged write, and every batch whole or not at all. Shared by the stores' durability tests.
func checkKillNineLosesNoAcknowledgedWrite(minimumPerRound: Int, sourceLocation: SourceLocation = #_sourceLocation, start: () throws -> Daemon) throws {
    var acknowledged = Set<String>()
    var batches: [[String]] = []
    for round in 0..<3 {
        let daemon = try start()
        if round == 0 {
            #expect(try daemon.request(["cmd": "appendSections", "dataSource": "log", "sections": ["s"]])["ok"] == true, sourceLocation: sourceLocation)
        }
        let shared = WriterLog()
        let socketPath = daemon.socketPath
        let writers = DispatchGroup()
        for writer in 0..<10 {
            writers.enter()
            Thread {
                defer { writers.leave() }
                guard let connection = try? LineConnection(path: socketPath) else { return }
                var sequence = 0
                while !shared.stopped {
                    sequence += 1
                    let prefix = "r\(round)-w\(writer)-\(sequence)"
                    if writer < 5 {
                        guard let reply = try? connection.request(["cmd": "appendItems", "dataSource": "log", "items": [.string(prefix)]]) else { return }
                        if reply["ok"] == true { shared.acknowledge([prefix]) }
                    } else {
                        let ids = (0..<20).map { "\(prefix)-\($0)" }
                        shared.attempt(ids)
                        let operations = ids.map { JSONValue.object(["cmd": "appendItems", "items": [.string($0)]]) }
                        guard let reply = try? connection.request(["cmd": "batch", "dataSource": "log", "operations": .array(operations)]) else { return }
                        if reply["ok"] == true { shared.acknowledge(ids) }
                    }
                }
            }.start()
        }
        // Killed once the writers got going, a little later in each round (by acknowledged writes, not time).
        let killAfter = minimumPerRound * (round + 1)
        #expect(try eventually { shared.contents.0.count > killAfter }, "the writers got going", sourceLocation: sourceLocation)
        try daemon.stop(signal: SIGKILL)
        shared.stop()
        #expect(writers.wait(timeout: .now() + 120) == .success, "every writer stopped", sourceLocation: sourceLocation)
        let (roundAcknowledged, roundBatches) = shared.contents
        acknowledged.formUnion(roundAcknowledged)
        batches += roundBatches
    }
    let daemon = try start()
    let snapshot = try daemon.request(["cmd": "snapshot", "dataSource": "log"])
    let present = Set((snapshot["result"]?["sections"]?.arrayValue.first?["items"]?.arrayValue ?? []).compactMap(\.stringValue))
    let lost = acknowledged.subtracting(present)
    #expect(lost.isEmpty, "\(lost.count) acknowledged items lost, e.g. \(lost.prefix(5))", sourceLocation: sourceLocation)
    for batch in batches {
        let count = batch.filter(present.contains).count
        #expect(count == 0 || count == batch.count, "batch \(batch[0]) torn: \(count) of 20 present", sourceLocation: sourceLocation)
    }
}

/// What concurrent writers sent and had acknowledged, and the flag that stops them.
final class WriterLog: @unchecked Sendable {
    private let lock = NSLock()
    private var acknowledged: [String] = []
    private var batches: [[String]] = []
    private var isStopped = false

    var stopped: Bool { lock.withLock { isStopped } }
    func stop() { lock.withLock { isStopped = true } }
    func acknowledge(_ ids: [String]) { lock.withLock { acknowledged += ids } }
    func attempt(_ batch: [String]) { lock.withLock { batches.append(batch) } }
    var contents: ([String], [[String]]) { lock.withLock { (acknowledged, batches) } }
}
