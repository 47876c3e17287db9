import CSQLite
import CellCore
import DiffableCore
import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded store: one SQLite database in WAL mode.
///
/// Tables (schema version 3):
/// - `data_sources(id, name, incarnation, checkpoint_version, checkpoint, checkpoint_parts)`: each data
///   source's last checkpoint (its content as `StateCoding` JSON): in `checkpoint` when
///   `checkpoint_parts` is 0, else in that many rows of `checkpoint_parts(source, version, position,
///   bytes)` (a large checkpoint is written a part at a time between other writes; parts of a
///   checkpoint that never completed are dropped by the next one);
/// - `change_log(source, first_version, last_version, operations, changes)`: the committed operations
///   of a data source, one row per data source and written group (versions `first…last`, one JSON text
///   per line in `operations` and in `changes`: the event line views were sent, `null` when not kept). A row's operations are
///   dropped once a checkpoint covers them; its changes stay for resuming views until the retention
///   trims the row. One row per group keeps a write one insert per data source however many
///   mutations the group has;
/// - `registrations(position, name, registration)`: `name` is the registration's key (`Registration.key`:
///   its owner's uid and its name; version 2 stored the name alone, migrated to the key).
///
/// A database whose `user_version` is newer than this code knows is refused; an older one is migrated.
public final class SQLiteStore: Store, @unchecked Sendable {
    /// How durable a written transaction is when `write` returns.
    public enum SyncMode: String, Sendable, CaseIterable {
        /// fsync'd before `write` returns (`PRAGMA synchronous=FULL`).
        case always
        /// Written to the OS before `write` returns; fsync'd by `sync()` (`synchronous=NORMAL`).
        case periodic
    }

    /// The schema this code writes.
    public static let schemaVersion = 3
    /// `PRAGMA application_id`: "LSTD", telling listd's databases from other SQLite files.
    static let applicationID = 0x4C53_5444

    public let path: String
    public var kind: String { "sqlite" }
    /// Versions of log records kept for resuming views when a checkpoint trims the log.
    let retainVersions: Int
    let connection: SQLiteConnection
    var sourceIDs: [String: Int] = [:]
    private let insertChange: SQLiteStatement
    private let insertSource: SQLiteStatement
    private let deleteSourceLog: SQLiteStatement
    private let deleteSource: SQLiteStatement
    private let insertRegistration: SQLiteStatement
    private let deleteRegistration: SQLiteStatement
    private let maintenance: WALMaintenance

    /// Opens (or creates) the database at `path`. Refuses a file that is not listd's, is damaged where
    /// it is first read, or has a newer schema; never rewrites such a file.
    public init(path: String, sync: SyncMode, retainVersions: Int = 10_000) throws(StorageError) {
        self.path = path
        self.retainVersions = retainVersions
        connection = try SQLiteConnection(path: path)
        chmod(path, 0o600)  // SQLite creates 0644; the WAL and shared-memory files follow the database's mode
        let application = try connection.integer("PRAGMA application_id")
        let version = try connection.integer("PRAGMA user_version")
        let tables = try connection.integer("SELECT count(*) FROM sqlite_schema")
        if application != Self.applicationID && (application != 0 || tables != 0) {
            throw StorageError(.corrupt, "\(path) is not a listd database (application id \(application)).")
        }
        if version > Self.schemaVersion {
            throw StorageError(
                .newerSchema,
                "\(path) has schema version \(version), written by a newer listd; this listd (schema version \(Self.schemaVersion)) "
                    + "cannot read it and left it unchanged: run a listd that knows schema version \(version).")
        }
        // A new database can give back the pages replaced checkpoints left free (incremental vacuum when
        // the store closes). Only takes effect before the first table.
        if tables == 0 { try connection.execute("PRAGMA auto_vacuum=INCREMENTAL") }
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute(sync == .always ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        try connection.execute("PRAGMA foreign_keys=OFF")
        try Self.migrate(connection, from: version)
        insertChange = try connection.prepare(
            "INSERT INTO change_log(source, first_version, last_version, operations, changes) VALUES (?, ?, ?, ?, ?)")
        insertSource = try connection.prepare(
            "INSERT INTO data_sources(name, incarnation, checkpoint_version, checkpoint) VALUES (?, ?, ?, ?)")
        deleteSourceLog = try connection.prepare("DELETE FROM change_log WHERE source = ?")
        deleteSource = try connection.prepare("DELETE FROM data_sources WHERE id = ?")
        insertRegistration = try connection.prepare(
            "INSERT INTO registrations(name, registration) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET registration = excluded.registration")
        deleteRegistration = try connection.prepare("DELETE FROM registrations WHERE name = ?")
        maintenance = try WALMaintenance(path: path, writer: connection)
        try reloadSourceIDs()
    }

    /// Brings a database from `version` to `schemaVersion`, one step per version, in one transaction.
    private static func migrate(_ connection: SQLiteConnection, from version: Int) throws(StorageError) {
        guard version < schemaVersion else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StorageError) {
            if version < 1 {
                try connection.execute(
                    """
                    CREATE TABLE data_sources(
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        incarnation TEXT NOT NULL,
                        checkpoint_version INTEGER NOT NULL,
                        checkpoint BLOB NOT NULL);
                    CREATE TABLE change_log(
                        source INTEGER NOT NULL,
                        first_version INTEGER NOT NULL,
                        last_version INTEGER NOT NULL,
                        operations BLOB,
                        changes BLOB NOT NULL,
                        PRIMARY KEY (source, first_version)) WITHOUT ROWID;
                    CREATE TABLE registrations(
                        position INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        registration BLOB NOT NULL);
                    PRAGMA application_id = \(applicationID);
                    """)
            }
            if version < 2 {
                try connection.execute(
                    """
                    ALTER TABLE data_sources ADD COLUMN checkpoint_parts INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE checkpoint_parts(
                        source INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        position INTEGER NOT NULL,
                        bytes BLOB NOT NULL,
                        PRIMARY KEY (source, version, position));
                    """)
            }
            if version < 3 { try keyRegistrationsByOwner(connection) }
            try connection.execute("PRAGMA user_version = \(schemaVersion)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Schema 3: registrations are stored under their key (owner and name) instead of their name: each
    /// row is rewritten in its place (the owner is in the stored registration).
    private static func keyRegistrationsByOwner(_ connection: SQLiteConnection) throws(StorageError) {
        let rows = try connection.prepare("SELECT position, registration FROM registrations ORDER BY position")
        var keyed: [(position: Int, key: String, registration: [UInt8])] = []
        while try rows.step() {
            let bytes = rows.blob(1) ?? []
            keyed.append((rows.int(0), try StateCoding.decodeRegistration(bytes).key, bytes))
        }
        guard !keyed.isEmpty else { return }
        // Deleted first: a new key may be an old name ("1000:row" was a name anyone could take).
        try connection.execute("DELETE FROM registrations")
        let insert = try connection.prepare("INSERT INTO registrations(position, name, registration) VALUES (?, ?, ?)")
        for row in keyed { try insert.run(.integer(row.position), .text(row.key), .blob(row.registration)) }
    }

    private func reloadSourceIDs() throws(StorageError) {
        let statement = try connection.prepare("SELECT id, name FROM data_sources")
        try statement.query()
        sourceIDs = [:]
        while try statement.step() { sourceIDs[statement.text(1)] = statement.int(0) }
    }

    // MARK: Store

    public func load() throws(StorageError) -> StoredState {
        try load(dataSources: nil, registrations: true)
    }

    public func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState {
        try load(dataSources: Optional(names), registrations: registrations)
    }

    private func load(dataSources names: Set<String>?, registrations: Bool) throws(StorageError) -> StoredState {
        var state = StoredState()
        if registrations {
            let statement = try connection.prepare("SELECT registration FROM registrations ORDER BY position")
            try statement.query()
            while try statement.step() { state.registrations.append(try StateCoding.decodeRegistration(statement.blob(0) ?? [])) }
        }
        let sources = try connection.prepare(
            "SELECT id, name, incarnation, checkpoint_version, checkpoint, checkpoint_parts FROM data_sources ORDER BY id")
        let log = try connection.prepare(
            """
            SELECT first_version, last_version, CASE WHEN last_version > ?2 THEN operations END, changes
            FROM change_log WHERE source = ?1 ORDER BY first_version
            """)
        try sources.query()
        while try sources.step() {
            let name = sources.text(1)
            if let names, !names.contains(name) { continue }
            let checkpointVersion = sources.int(3)
            let parts = sources.int(5)
            let checkpointBytes = parts == 0 ? sources.blob(4) ?? [] : try checkpointParts(of: sources.int(0), name: name, version: checkpointVersion, count: parts)
            var content = try StateCoding.decodeContent(checkpointBytes)
            content.version = checkpointVersion
            var stored = StoredDataSource(name: name, incarnation: sources.text(2), checkpoint: content, checkpointBytes: checkpointBytes.count)
            // Operations a checkpoint covers are not read (only their event lines, for resuming).
            try log.query(.integer(sources.int(0)), .integer(checkpointVersion))
            var expected = checkpointVersion + 1
            while try log.step() {
                let first = log.int(0)
                let last = log.int(1)
                let changes = Self.lines(log.blob(3) ?? [])
                let operations = log.blob(2).map(Self.lines)
                guard last >= first, changes.count == last - first + 1, operations == nil || operations!.count == changes.count else {
                    throw StorageError(.corrupt, "\(path): the log of data source \"\(name)\" has a malformed row at version \(first).")
                }
                for (offset, change) in changes.enumerated() {
                    let version = first + offset
                    stored.retainedChanges.append((version, change == Self.null ? nil : Array(change)))
                    guard version > checkpointVersion else { continue }
                    guard version == expected, let operation = operations?[offset] else {
                        throw StorageError(.corrupt, "\(path): the log of data source \"\(name)\" misses version \(expected).")
                    }
                    expected += 1
                    stored.tail.append((version, try StateCoding.decodeOperation(Array(operation)), operation.count))
                }
            }
            state.dataSources.append(stored)
        }
        return state
    }

    public func write(_ records: [StoreRecord]) throws(StorageError) {
        // Prepared once: `sqlite3_exec` would parse each of them again for every group.
        try connection.prepare("BEGIN IMMEDIATE").run()
        do throws(StorageError) {
            var segments = Segments()
            for record in records {
                if case .change(let name, let version, let operation, let changes) = record {
                    segments.append(name, version, operation, changes)
                    continue
                }
                switch record {
                case .createDataSource(let name, _, _, _), .dropDataSource(let name):
                    if let segment = segments.take(name) { try insert(segment) }
                default:
                    break
                }
                try write(record)
            }
            for segment in segments.takeAll() { try insert(segment) }
            try connection.prepare("COMMIT").run()
            // A writer that is never idle finishes copying the log here, before the log grows long.
            if maintenance.isOverdue { maintenance.finishBackfill(writer: connection) }
        } catch {
            try? connection.execute("ROLLBACK")
            try? reloadSourceIDs()
            throw error
        }
    }

    /// A data source's consecutive versions in one written group: one `change_log` row.
    struct Segment {
        var name: String
        var first: Int
        var last: Int
        var operations: [UInt8] = []
        var changes: [UInt8] = []

        /// Adds the next version (JSON texts never hold a raw newline, so lines separate them).
        mutating func append(_ version: Int, _ operation: [UInt8], _ changes: [UInt8]?) {
            if last >= first {
                operations.append(0x0A)
                self.changes.append(0x0A)
            }
            operations += operation
            self.changes += changes ?? Array(SQLiteStore.null)
            last = version
        }
    }

    /// The segments of a group being written, by data source, in the order they were started.
    struct Segments {
        private var order: [String] = []
        private var byName: [String: Segment] = [:]

        mutating func append(_ name: String, _ version: Int, _ operation: [UInt8], _ changes: [UInt8]?) {
            if byName[name] == nil {
                order.append(name)
                byName[name] = Segment(name: name, first: version, last: version - 1)
            }
            byName[name]!.append(version, operation, changes)
        }

        mutating func take(_ name: String) -> Segment? {
            guard let segment = byName.removeValue(forKey: name) else { return nil }
            order.removeAll { $0 == name }
            return segment
        }

        mutating func takeAll() -> [Segment] {
            defer { order = []; byName = [:] }
            return order.compactMap { byName[$0] }
        }
    }

    private func insert(_ segment: Segment) throws(StorageError) {
        guard let id = sourceIDs[segment.name] else { throw StorageError(.corrupt, "\(path): no stored data source \"\(segment.name)\".") }
        try insertChange.run(.integer(id), .integer(segment.first), .integer(segment.last), .blob(segment.operations), .blob(segment.changes))
    }

    private func write(_ record: StoreRecord) throws(StorageError) {
        switch record {
        case .createDataSource(let name, let incarnation, let version, let content):
            try insertSource.run(.text(name), .text(incarnation), .integer(version), .blob(content))
            sourceIDs[name] = connection.lastInsertRowID
        case .dropDataSource(let name):
            guard let id = sourceIDs.removeValue(forKey: name) else { return }
            try deleteSourceLog.run(.integer(id))
            try connection.prepare("DELETE FROM checkpoint_parts WHERE source = ?").run(.integer(id))
            try deleteSource.run(.integer(id))
        case .change:
            break  // written as segments
        case .checkpoint(let name, let version, let content):
            guard let id = sourceIDs[name] else { throw StorageError(.corrupt, "\(path): no stored data source \"\(name)\".") }
            try connection.prepare("DELETE FROM checkpoint_parts WHERE source = ?").run(.integer(id))
            // Stored as parts when large, as a checkpoint written in steps is (a blob of tens of
            // megabytes reads back slower than its parts).
            let parts = content.count > CheckpointWrite.partBytes ? stride(from: 0, to: content.count, by: CheckpointWrite.partBytes).map { $0 } : []
            for (position, start) in parts.enumerated() {
                try connection.prepare("INSERT INTO checkpoint_parts(source, version, position, bytes) VALUES (?, ?, ?, ?)").run(
                    .integer(id), .integer(version), .integer(position),
                    .blob(Array(content[start..<min(content.count, start + CheckpointWrite.partBytes)])))
            }
            try connection.prepare("UPDATE data_sources SET checkpoint = ?, checkpoint_version = ?, checkpoint_parts = ? WHERE id = ?")
                .run(.blob(parts.isEmpty ? content : []), .integer(version), .integer(parts.count), .integer(id))
            try connection.prepare("DELETE FROM change_log WHERE source = ? AND last_version <= ?").run(.integer(id), .integer(version - retainVersions))
        case .register(let name, let registration):
            try insertRegistration.run(.text(name), .blob(registration))
        case .unregister(let name):
            try deleteRegistration.run(.text(name))
        }
    }

    static let null = Array("null".utf8)[...]

    /// The lines of a segment's column.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    }

    /// The database as one file image (`sqlite3_serialize`): consistent, since the writer thread calls
    /// it between transactions; written out, it is a `listd.sqlite3` listd opens.
    public func backup() throws(StorageError) -> [UInt8] {
        var size: sqlite3_int64 = 0
        guard let image = sqlite3_serialize(connection.handle, "main", &size, 0) else {
            throw StorageError(.io, "\(path): cannot make a backup (out of memory?).")
        }
        defer { sqlite3_free(image) }
        return Array(UnsafeRawBufferPointer(start: image, count: Int(size)))
    }

    public func sync() throws(StorageError) {
        try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    public var needsMaintenance: Bool { maintenance.isDue }

    /// Finishes a backfill the second connection made (see `WALMaintenance`).
    public func idle() {
        maintenance.finishBackfill(writer: connection)
    }

    /// Copies the write-ahead log into the database file, concurrently with writes (see
    /// `WALMaintenance`).
    public func maintain() throws(StorageError) {
        try maintenance.backfill()
    }

    /// Gives back the pages replaced checkpoints left free (while listd runs, the next checkpoint
    /// reuses them), then closes both connections; the last one out folds the log into the database.
    public func close() {
        try? connection.execute("PRAGMA incremental_vacuum")
        maintenance.close()
        connection.close()
    }
}
