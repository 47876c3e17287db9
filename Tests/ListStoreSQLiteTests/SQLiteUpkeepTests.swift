import CellCore
import DiffableCore
import Foundation
@testable import ListEngine
import ListStore
import ListStoreSQLite
import TestSupport
import Testing

/// What keeps the writer's transactions short: large checkpoints written in parts between other
/// writes, the write-ahead log copied into the database on another connection; and the step from
/// schema 1 to schema 2.
@Suite("SQLite store upkeep")
struct SQLiteUpkeepTests {
    typealias Directory = SQLiteStoreTests.Directory

    /// A model and a store that receive the same changes.
    final class Mirror {
        let live = StateModel()
        let store: SQLiteStore

        init(_ store: SQLiteStore) { self.store = store }

        func commit(_ change: StateChange) throws {
            let outcome = try live.apply(change, limits: .none)
            try store.write(live.records(of: change, outcome: outcome, event: Array(#"{"event":"changes"}"#.utf8)))
        }

        func append(_ dataSource: String, _ ids: Range<Int>, payload: String = "") throws {
            let items = ids.map { Item("item-\($0)", data: payload.isEmpty ? nil : .string(payload)) }
            try commit(.dataSource(name: dataSource, ifVersion: nil, createAs: nil, .edit(.appendItems(items, toSection: nil))))
        }

        func checkpointWrite(_ name: String) -> CheckpointWrite {
            let model = live.dataSources[name]!
            return CheckpointWrite(
                dataSource: name, incarnation: model.incarnation, version: model.content.version,
                encoded: StateCoding.encode(model.content))
        }
    }

    @Test func aLargeCheckpointIsWrittenInPartsBetweenOtherWrites() throws {
        let directory = try Directory()
        let mirror = Mirror(try SQLiteStore(path: directory.database, sync: .always))
        try mirror.commit(.dataSource(name: "big", ifVersion: nil, createAs: "inc", .edit(.appendSections(["S"]))))
        // About 1.3 MB of content: several parts.
        for batch in 0..<20 { try mirror.append("big", batch * 500..<(batch + 1) * 500, payload: String(repeating: "p", count: 100)) }
        var write = mirror.checkpointWrite("big")
        #expect(write.encoded.count > 4 * CheckpointWrite.partBytes)
        var parts = 0
        var progress = CheckpointProgress.partial
        while progress == .partial {
            progress = try mirror.store.writeCheckpoint(&write)
            parts += 1
            // Groups go on between the parts; the checkpoint's content stays as it was captured.
            try mirror.append("big", 100_000 + parts..<100_001 + parts)
        }
        #expect(progress == .done(bytes: write.encoded.count))
        // One call per part, then at least one trimming the log.
        #expect(parts > (write.encoded.count + CheckpointWrite.partBytes - 1) / CheckpointWrite.partBytes)

        let stored = try #require(try mirror.store.load().dataSources.first)
        #expect(stored.checkpoint.version == write.version)
        #expect(stored.tail.count == parts)  // the appends made while the parts were written
        let loaded = StateModel()
        try loaded.load(try mirror.store.load())
        SQLiteStoreTests.expectEqual(mirror.live, loaded)

        // The next checkpoint replaces this one and drops its parts; it survives reopening.
        var next = mirror.checkpointWrite("big")
        while try mirror.store.writeCheckpoint(&next) == .partial {}
        mirror.store.close()
        // A part row past the checkpoint's count (as an attempt that never completed could leave) is ignored.
        let shell = try runSQLiteShell(
            directory.database, "INSERT INTO checkpoint_parts SELECT id, checkpoint_version, checkpoint_parts, CAST('stray' AS BLOB) FROM data_sources")
        #expect(shell.status == 0, "\(shell.error)")
        let reopened = try SQLiteStore(path: directory.database, sync: .always)
        let again = StateModel()
        try again.load(try reopened.load())
        SQLiteStoreTests.expectEqual(mirror.live, again)
        #expect(try reopened.load().dataSources.first?.tail.isEmpty == true)
    }

    @Test func aCheckpointWhoseDataSourceIsDroppedOrMadeAgainMidwayIsSkipped() throws {
        let directory = try Directory()
        let mirror = Mirror(try SQLiteStore(path: directory.database, sync: .always))
        try mirror.commit(.dataSource(name: "d", ifVersion: nil, createAs: "first", .edit(.appendSections(["S"]))))
        try mirror.append("d", 0..<5_000, payload: String(repeating: "q", count: 100))
        var write = mirror.checkpointWrite("d")
        #expect(try mirror.store.writeCheckpoint(&write) == .partial)
        // Dropped and made again under the same name: the rest of the old checkpoint does not apply.
        try mirror.commit(.dropDataSource(name: "d"))
        try mirror.commit(.dataSource(name: "d", ifVersion: nil, createAs: "second", .edit(.appendSections(["T"]))))
        #expect(try mirror.store.writeCheckpoint(&write) == .skipped)
        let loaded = StateModel()
        try loaded.load(try mirror.store.load())
        SQLiteStoreTests.expectEqual(mirror.live, loaded)
        #expect(loaded.dataSources["d"]?.incarnation == "second")

        // Dropped for good between two parts: skipped as well.
        try mirror.append("d", 0..<5_000, payload: String(repeating: "r", count: 100))
        var other = mirror.checkpointWrite("d")
        #expect(try mirror.store.writeCheckpoint(&other) == .partial)
        try mirror.commit(.dropDataSource(name: "d"))
        #expect(try mirror.store.writeCheckpoint(&other) == .skipped)
        #expect(try mirror.store.load().dataSources.isEmpty)
    }

    @Test func theWriteAheadLogIsCopiedOnAnotherConnectionAndStartsOver() throws {
        let directory = try Directory()
        let mirror = Mirror(try SQLiteStore(path: directory.database, sync: .periodic))
        try mirror.commit(.dataSource(name: "d", ifVersion: nil, createAs: "inc", .edit(.appendSections(["S"]))))
        var maintained = 0
        let upkeep = Upkeep()
        for index in 0..<6_000 {
            try mirror.append("d", index..<index + 1, payload: String(repeating: "w", count: 200))
            if mirror.store.needsMaintenance && upkeep.start(mirror.store) { maintained += 1 }
            // The writer thread's idle moments, where it finishes what the other connection copied
            // (copied by then: on a loaded machine the copy could lag any number of writes behind, and
            // what is checked here is that the log starts over, not how fast the copy runs).
            if index % 50 == 0 {
                upkeep.wait()
                mirror.store.idle()
            }
        }
        upkeep.wait()
        #expect(maintained > 0)
        // The log started over instead of growing with every write: without upkeep it would hold
        // every page written (well over 20 MB here).
        let logBytes = (try FileManager.default.attributesOfItem(atPath: directory.database + "-wal")[.size] as? Int) ?? 0
        #expect(logBytes < 12 << 20, "write-ahead log of \(logBytes) bytes")
        let loaded = StateModel()
        try loaded.load(try mirror.store.load())
        SQLiteStoreTests.expectEqual(mirror.live, loaded)
    }

    /// Runs `maintain` on another thread, one at a time, as the server does, while writes go on.
    final class Upkeep: @unchecked Sendable {
        private let condition = NSCondition()
        private var running = false

        func start(_ store: SQLiteStore) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            guard !running else { return false }
            running = true
            Thread {
                try? store.maintain()
                self.condition.lock()
                self.running = false
                self.condition.broadcast()
                self.condition.unlock()
            }.start()
            return true
        }

        func wait() {
            condition.lock()
            while running { condition.wait() }
            condition.unlock()
        }
    }

    @Test func aSchemaOneDatabaseIsMigrated() throws {
        let directory = try Directory()
        let content = StateCoding.encode(try DataSourceContent(version: 1, snapshot: Snapshot([(Section("S"), ["a", "b"])])))
        let operation = String(decoding: StateCoding.encode(.edit(.appendItems(["c"], toSection: nil))), as: UTF8.self)
        let sql = """
            PRAGMA application_id = 1280529476;
            CREATE TABLE data_sources(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, incarnation TEXT NOT NULL,
                checkpoint_version INTEGER NOT NULL, checkpoint BLOB NOT NULL);
            CREATE TABLE change_log(source INTEGER NOT NULL, first_version INTEGER NOT NULL, last_version INTEGER NOT NULL,
                operations BLOB, changes BLOB NOT NULL, PRIMARY KEY (source, first_version)) WITHOUT ROWID;
            CREATE TABLE registrations(position INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, registration BLOB NOT NULL);
            INSERT INTO data_sources VALUES (1, 'old', 'inc-old', 1, CAST('\(String(decoding: content, as: UTF8.self))' AS BLOB));
            INSERT INTO change_log VALUES (1, 2, 2, CAST('\(operation)' AS BLOB), CAST('null' AS BLOB));
            PRAGMA user_version = 1;
            """
        let shell = try runSQLiteShell(directory.database, sql)
        #expect(shell.status == 0, "\(shell.error)")

        let store = try SQLiteStore(path: directory.database, sync: .always)
        let loaded = StateModel()
        try loaded.load(try store.load())
        let old = try #require(loaded.dataSources["old"])
        #expect(old.version == 2 && old.incarnation == "inc-old")
        #expect(try old.snapshot.items(inSection: "S").map(\.id) == ["a", "b", "c"])
        // And it takes checkpoints in parts like a new one.
        let mirror = Mirror(store)
        try mirror.live.load(try store.load())
        try mirror.append("old", 0..<4_000, payload: String(repeating: "m", count: 100))
        var write = mirror.checkpointWrite("old")
        while try store.writeCheckpoint(&write) == .partial {}
        let reloaded = StateModel()
        try reloaded.load(try store.load())
        SQLiteStoreTests.expectEqual(mirror.live, reloaded)
    }
}

extension SQLiteUpkeepTests {
    @Test func anAppliedSnapshotIsStoredAsTheCheckpoint() throws {
        let directory = try Directory()
        let mirror = Mirror(try SQLiteStore(path: directory.database, sync: .always, retainVersions: 3))
        try mirror.commit(.dataSource(name: "d", ifVersion: nil, createAs: "inc", .edit(.appendSections(["S"]))))
        try mirror.append("d", 0..<10)
        for round in 0..<6 {
            // Every other one larger than a checkpoint part: stored in parts.
            let count = round % 2 == 0 ? 1_000 : 30_000
            let snapshot = try Snapshot([(Section("S"), (0..<count).map { Item("r\(round)-\($0)", data: .int($0)) })])
            try mirror.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceSnapshot(snapshot, reloadData: false)))
        }
        try mirror.append("d", 10..<12)
        let stored = try #require(try mirror.store.load().dataSources.first)
        // The last apply made version 8; only the append after it is replayed.
        #expect(stored.checkpoint.version == 8)
        #expect(stored.tail.map(\.version) == [9])
        // The log keeps the event lines of the last `retainVersions` versions before the checkpoint.
        #expect(stored.retainedChanges.map(\.version) == [6, 7, 8, 9])
        #expect(stored.checkpointBytes > CheckpointWrite.partBytes)
        let loaded = StateModel()
        try loaded.load(try mirror.store.load())
        SQLiteStoreTests.expectEqual(mirror.live, loaded)
    }
}
