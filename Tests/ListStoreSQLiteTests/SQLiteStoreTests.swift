import CellCore
import DiffableCore
import Foundation
import ListLayout
@testable import ListEngine
import ListStore
import ListStoreSQLite
import ListWire
import TestSupport
import Testing

/// The SQLite store and the stored form of changes: what a model commits, written as records, reads
/// back into an equal model (through checkpoints and log tails), and a failed write leaves nothing.
@Suite("SQLite store")
struct SQLiteStoreTests {
    final class Directory {
        let path: String
        init() throws {
            var template = Array("/tmp/listd-store.XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw StorageError(.io, "mkdtemp") }
            path = String(cString: made)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        var database: String { path + "/listd.sqlite3" }
    }

    /// Every kind of change, applied to a live model while its records go to the store.
    static func changes() throws -> [StateChange] {
        let row = try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell", "text": "{{title}}"]])
        let header = try Registration(name: "header", definition: ["kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": "plainHeader"]])
        let layout = try LayoutDescription(json: ["default": ["list": ["appearance": "insetGrouped"]]])
        var outline = SectionSnapshot()
        try outline.append([Item("root", data: ["t": 1]), "other"])
        try outline.append(["leaf", Item("leaf2", data: ["deep": ["x": true]])], to: "root")
        var replacement = try Snapshot([(Section("X", data: ["title": "Ex"]), [Item("x1", data: ["n": 1.5]), "x2"]), (Section("Y"), [])])
        replacement = try Snapshot(replacement.sections.map { ($0, try replacement.items(inSection: $0.id)) })
        return [
            .register(row),
            .register(header),
            .dataSource(name: "d", ifVersion: nil, createAs: "inc-d", .edit(.appendSections([Section("S", data: ["title": "Ess"]), "T"]))),
            .dataSource(name: "d", ifVersion: 1, createAs: nil, .edit(.appendItems([Item("a", data: ["title": "A"]), "b", "c"], toSection: "S"))),
            .dataSource(
                name: "d", ifVersion: nil, createAs: nil,
                .batch([
                    .insertItems(["z"], .before("a")), .moveItem("c", .after("z")), .deleteItems(["b"]),
                    .updateItems([Item("a", data: ["title": "A2", "list": [1, 2, nil]])]), .reconfigureItems(["a"]), .reloadItems(["z"]),
                    .insertSections(["R"], .after("S")), .moveSection("R", .before("S")), .updateSections([Section("T", data: "tee")]),
                    .reloadSections(["T"]), .deleteSections(["R"]),
                ])),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceOutline(section: "T", outline)),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansion(section: "T", items: ["root"], expanded: true)),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(layout)),
            .dataSource(
                name: "d", ifVersion: nil, createAs: nil,
                .setCellProvider(CellProvider(rules: [.init(section: "S", match: ("title", "A2"), registration: "row")], defaultRegistration: "row"), elementKind: nil)),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setCellProvider(CellProvider(defaultRegistration: "header"), elementKind: "header")),
            .createDataSource(name: "e", incarnation: "inc-e", content: DataSourceContent(version: 5, snapshot: replacement)),
            .dataSource(name: "e", ifVersion: 5, createAs: nil, .replaceSnapshot(replacement, reloadData: true)),
            .dataSource(name: "e", ifVersion: nil, createAs: nil, .edit(.replaceItems(inSection: "Y", with: ["x2", "y"]))),
            .dataSource(name: "e", ifVersion: nil, createAs: nil, .edit(.deleteAllItems)),
            .createDataSource(name: "gone", incarnation: "inc-g", content: DataSourceContent()),
            .dropDataSource(name: "gone"),
            .unregister(name: "header"),
        ]
    }

    static func expectEqual(_ live: StateModel, _ loaded: StateModel, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(live.registrationOrder == loaded.registrationOrder, sourceLocation: sourceLocation)
        #expect(Set(live.dataSources.keys) == Set(loaded.dataSources.keys), sourceLocation: sourceLocation)
        for (name, model) in live.dataSources {
            guard let other = loaded.dataSources[name] else { continue }
            #expect(model.incarnation == other.incarnation, sourceLocation: sourceLocation)
            #expect(model.version == other.version, "\(name)", sourceLocation: sourceLocation)
            #expect(model.snapshot == other.snapshot, "\(name)", sourceLocation: sourceLocation)
            #expect(model.outlines == other.outlines, "\(name)", sourceLocation: sourceLocation)
            #expect(model.layout == other.layout, sourceLocation: sourceLocation)
            #expect(model.cellProvider == other.cellProvider, sourceLocation: sourceLocation)
            #expect(model.supplementaryProviders == other.supplementaryProviders, sourceLocation: sourceLocation)
        }
    }

    @Test func whatIsWrittenLoadsIntoAnEqualModel() throws {
        let directory = try Directory()
        let store = try SQLiteStore(path: directory.database, sync: .always)
        let live = StateModel()
        for change in try Self.changes() {
            let outcome = try live.apply(change, limits: .none)
            try store.write(live.records(of: change, outcome: outcome, event: Array(#"{"event":"changes"}"#.utf8)))
        }
        store.close()
        let loaded = StateModel()
        try loaded.load(try SQLiteStore(path: directory.database, sync: .always).load())
        Self.expectEqual(live, loaded)
        #expect(loaded.dataSources["d"]?.outlines["T"]?.expandedItems == ["root"])
    }

    @Test func checkpointsShortenTheReplayAndKeepRecentChanges() throws {
        let directory = try Directory()
        let store = try SQLiteStore(path: directory.database, sync: .periodic, retainVersions: 100)
        let live = StateModel()
        func commit(_ change: StateChange) throws {
            let outcome = try live.apply(change, limits: .none)
            try store.write(live.records(of: change, outcome: outcome, event: Array(#"{"event":"changes"}"#.utf8)))
        }
        try commit(.dataSource(name: "d", ifVersion: nil, createAs: "i", .edit(.appendSections(["S"]))))
        for index in 0..<300 { try commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems([Item("i\(index)")], toSection: nil)))) }
        // Content ahead of the log (changes whose write failed) is never a checkpoint.
        var ahead = live.dataSources["d"]!.content
        ahead.version += 1
        #expect(try store.checkpoint(dataSource: "d", incarnation: "i", content: ahead) == nil)
        let size = try store.checkpoint(dataSource: "d", incarnation: "i", content: live.dataSources["d"]!.content)
        #expect((size ?? 0) > 300 * 4)
        for index in 300..<350 { try commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.deleteItems(["i\(index - 300)"])))) }
        // A checkpoint of another incarnation (the data source was dropped and made again) is ignored.
        #expect(try store.checkpoint(dataSource: "d", incarnation: "other", content: DataSourceContent(version: 340)) == nil)
        try store.sync()

        let stored = try store.load()
        let d = try #require(stored.dataSources.first)
        #expect(d.checkpoint.version == 301)
        #expect(d.tail.map(\.version) == Array(302...351))
        // Versions 202…351 kept for resuming (100 before the checkpoint, everything after it).
        #expect(d.retainedChanges.first?.version == 202 && d.retainedChanges.last?.version == 351)
        #expect(d.retainedChanges.allSatisfy { $0.changes != nil })
        let loaded = StateModel()
        try loaded.load(stored)
        Self.expectEqual(live, loaded)
    }

    @Test func aFailedWriteLeavesNothing() throws {
        let directory = try Directory()
        let store = try SQLiteStore(path: directory.database, sync: .always)
        try store.write([.createDataSource(name: "d", incarnation: "i", version: 0, content: StateCoding.encode(DataSourceContent()))])
        // The second record names a data source the store does not have: the whole write fails.
        #expect(throws: StorageError.self) {
            try store.write([
                .register(name: "r", registration: StateCoding.encode(try Registration(name: "r", definition: ["contentConfiguration": ["type": "cell"]]))),
                .change(dataSource: "missing", version: 1, operation: StateCoding.encode(.edit(.deleteAllItems)), changes: nil),
            ])
        }
        let stored = try store.load()
        #expect(stored.registrations.isEmpty)
        #expect(stored.dataSources.map(\.name) == ["d"])
        // The store keeps working.
        try store.write([.change(dataSource: "d", version: 1, operation: StateCoding.encode(.edit(.appendSections(["S"]))), changes: nil)])
        #expect(try store.load().dataSources.first?.tail.count == 1)
    }

    @Test func foreignAndDamagedFilesAreRefused() throws {
        let directory = try Directory()
        try Data("this is not a database, it is a text file long enough to have a header".utf8).write(to: URL(fileURLWithPath: directory.database))
        #expect { _ = try SQLiteStore(path: directory.database, sync: .always) } throws: { error in
            (error as? StorageError)?.kind == .corrupt && "\(error)".contains(directory.database)
        }
        let other = directory.path + "/other.sqlite3"
        try runSQLiteShell(other, "CREATE TABLE notes(text)")
        #expect { _ = try SQLiteStore(path: other, sync: .always) } throws: { error in
            (error as? StorageError)?.kind == .corrupt && "\(error)".contains("not a listd database")
        }
    }

    @Test func recordsThatDoNotDecodeAreCorrupt() {
        #expect(throws: StorageError.self) { _ = try StateCoding.decodeOperation(Array(#"{"cmd":"fly"}"#.utf8)) }
        #expect(throws: StorageError.self) { _ = try StateCoding.decodeOperation(Array("{not json".utf8)) }
        #expect(throws: StorageError.self) { _ = try StateCoding.decodeContent(Array(#"{"version":"x"}"#.utf8)) }
    }

    @Test func theStateDirectoryIsLockedForOneProcess() throws {
        let directory = try Directory()
        let path = directory.path + "/nested/state"
        let first = try StateDirectory(path: path)
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o700)
        // flock locks belong to the open file: a second open in this process conflicts as another process would.
        #expect { _ = try StateDirectory(path: path) } throws: { error in
            (error as? StorageError)?.kind == .locked && "\(error)".contains("PID \(getpid())")
        }
        first.unlock()
        _ = try StateDirectory(path: path)
    }
}
