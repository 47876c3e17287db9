import CSQLite
import CellCore
import DiffableCore
import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded store: one SQLite database in WAL mode.
///
/// Tables (schema version 1):
/// - `data_sources(id, name, incarnation, checkpoint_version, checkpoint)`: each data source's last
///   checkpoint (its content as `StateCoding` JSON);
/// - `change_log(source, version, operation, changes)`: the committed operations per data source (an
///   operation is dropped once a checkpoint covers it; `changes` stays for resuming views until the
///   retention trims the row);
/// - `registrations(position, name, registration)`.
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
    public static let schemaVersion = 1
    /// `PRAGMA application_id`: "LSTD", telling listd's databases from other SQLite files.
    static let applicationID = 0x4C53_5444

    public let path: String
    private let connection: SQLiteConnection
    private var sourceIDs: [String: Int] = [:]
    private let insertChange: SQLiteStatement
    private let insertSource: SQLiteStatement
    private let deleteSourceLog: SQLiteStatement
    private let deleteSource: SQLiteStatement
    private let insertRegistration: SQLiteStatement
    private let deleteRegistration: SQLiteStatement

    /// Opens (or creates) the database at `path`. Refuses a file that is not listd's, is damaged where
    /// it is first read, or has a newer schema; never rewrites such a file.
    public init(path: String, sync: SyncMode) throws(StorageError) {
        self.path = path
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
                .newerSchema, "\(path) has schema version \(version), newer than this listd's \(Self.schemaVersion): run a newer listd.")
        }
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute(sync == .always ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        try connection.execute("PRAGMA foreign_keys=OFF")
        try Self.migrate(connection, from: version)
        insertChange = try connection.prepare("INSERT OR REPLACE INTO change_log(source, version, operation, changes) VALUES (?, ?, ?, ?)")
        insertSource = try connection.prepare(
            "INSERT INTO data_sources(name, incarnation, checkpoint_version, checkpoint) VALUES (?, ?, ?, ?)")
        deleteSourceLog = try connection.prepare("DELETE FROM change_log WHERE source = ?")
        deleteSource = try connection.prepare("DELETE FROM data_sources WHERE id = ?")
        insertRegistration = try connection.prepare("INSERT INTO registrations(name, registration) VALUES (?, ?)")
        deleteRegistration = try connection.prepare("DELETE FROM registrations WHERE name = ?")
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
                        version INTEGER NOT NULL,
                        operation BLOB,
                        changes BLOB,
                        PRIMARY KEY (source, version)) WITHOUT ROWID;
                    CREATE TABLE registrations(
                        position INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        registration BLOB NOT NULL);
                    PRAGMA application_id = \(applicationID);
                    """)
            }
            try connection.execute("PRAGMA user_version = \(schemaVersion)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
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
        let sources = try connection.prepare("SELECT id, name, incarnation, checkpoint_version, checkpoint FROM data_sources ORDER BY id")
        let log = try connection.prepare("SELECT version, operation, changes FROM change_log WHERE source = ? ORDER BY version")
        try sources.query()
        while try sources.step() {
            let name = sources.text(1)
            if let names, !names.contains(name) { continue }
            let checkpointBytes = sources.blob(4) ?? []
            let checkpointVersion = sources.int(3)
            var content = try StateCoding.decodeContent(checkpointBytes)
            content.version = checkpointVersion
            var stored = StoredDataSource(name: name, incarnation: sources.text(2), checkpoint: content, checkpointBytes: checkpointBytes.count)
            try log.query(.integer(sources.int(0)))
            var expected = checkpointVersion + 1
            while try log.step() {
                let version = log.int(0)
                let changes = log.blob(2)
                stored.retainedChanges.append((version, changes))
                guard version > checkpointVersion else { continue }
                guard version == expected, let operation = log.blob(1) else {
                    throw StorageError(.corrupt, "\(path): the log of data source \"\(name)\" misses version \(expected).")
                }
                expected += 1
                stored.tail.append((version, try StateCoding.decodeOperation(operation), operation.count + (changes?.count ?? 0)))
            }
            state.dataSources.append(stored)
        }
        return state
    }

    public func write(_ records: [StoreRecord]) throws(StorageError) {
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StorageError) {
            for record in records { try write(record) }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            try? reloadSourceIDs()
            throw error
        }
    }

    private func write(_ record: StoreRecord) throws(StorageError) {
        switch record {
        case .createDataSource(let name, let incarnation, let version, let content):
            try insertSource.run(.text(name), .text(incarnation), .integer(version), .blob(content))
            sourceIDs[name] = connection.lastInsertRowID
        case .dropDataSource(let name):
            guard let id = sourceIDs.removeValue(forKey: name) else { return }
            try deleteSourceLog.run(.integer(id))
            try deleteSource.run(.integer(id))
        case .change(let name, let version, let operation, let changes):
            guard let id = sourceIDs[name] else { throw StorageError(.corrupt, "\(path): no stored data source \"\(name)\".") }
            try insertChange.run(.integer(id), .integer(version), .blob(operation), changes.map { .blob($0) } ?? .null)
        case .register(let name, let registration):
            try deleteRegistration.run(.text(name))
            try insertRegistration.run(.text(name), .blob(registration))
        case .unregister(let name):
            try deleteRegistration.run(.text(name))
        }
    }

    public func checkpoint(dataSource name: String, incarnation: String, content: DataSourceContent, retainVersions: Int) throws(StorageError) -> Int {
        let bytes = StateCoding.encode(content)
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StorageError) {
            let update = try connection.prepare(
                "UPDATE data_sources SET checkpoint = ?, checkpoint_version = ? WHERE name = ? AND incarnation = ? AND checkpoint_version < ?")
            try update.run(.blob(bytes), .integer(content.version), .text(name), .text(incarnation), .integer(content.version))
            if let id = sourceIDs[name] {
                let covered = try connection.prepare("UPDATE change_log SET operation = NULL WHERE source = ? AND version <= ? AND operation IS NOT NULL")
                try covered.run(.integer(id), .integer(content.version))
                let trim = try connection.prepare("DELETE FROM change_log WHERE source = ? AND version <= ?")
                try trim.run(.integer(id), .integer(min(content.version, content.version - retainVersions)))
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        return bytes.count
    }

    public func sync() throws(StorageError) {
        try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    public func close() {
        connection.close()
    }
}
