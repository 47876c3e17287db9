import CellCore
import DiffableCore
import ListStore
import ListStoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The PostgreSQL store: listd's state in tables of a PostgreSQL database, for a server's state that
/// lives beside other data (backed up, replicated and monitored with PostgreSQL's own tools).
///
/// Tables (schema version 2, created and migrated by listd):
/// - `listd_schema(version)`: one row, the schema version;
/// - `listd_data_sources(id, name, incarnation, version, checkpoint_version, checkpoint, checkpoint_parts)`:
///   each data source's newest stored version and its last checkpoint (`StateCoding` JSON), in
///   `checkpoint` when `checkpoint_parts` is 0, else in that many rows of `listd_checkpoint_parts`;
/// - `listd_change_log(source, version, operation, changes)`: one row per committed version: the
///   operation (dropped once a checkpoint covers a large one) and the event line views were sent (null
///   when not kept), so that versions are contiguous per data source and can be read from any version;
/// - `listd_checkpoint_parts(source, version, position, bytes)`;
/// - `listd_registrations(position, name, registration)`: `name` is the registration's key
///   (`Registration.key`: its owner's uid and its name; version 1 stored the name alone, migrated to the key).
///
/// A write is one transaction, acknowledged once PostgreSQL committed it (`synchronous_commit` on, or
/// off for the `periodic` sync mode). Several listd instances share a database: a write moves a data
/// source's version on only from the version it continues (so versions are one order across
/// instances), and its transaction sends a `NOTIFY` on the `listd` channel, which the other instances
/// follow (`SharedStore`, in PostgresStore+Following.swift).
public final class PostgresStore: SharedStore, @unchecked Sendable {
    /// The schema this code writes.
    public static let schemaVersion = 2
    /// The advisory lock key ("LSTD") that serializes schema migrations between instances.
    static let lockKey = 0x4C53_5444
    /// The channel of the notifications.
    static let channel = "listd"
    /// This instance's name in its notifications (which of them it sent shows in the server's log).
    let instance = PostgresStore.makeInstanceName()

    public var kind: String { "postgresql" }
    /// The server, without its password (for messages and `stats`).
    public let displayName: String
    let uri: String
    /// Versions of log records kept for resuming views when a checkpoint trims the log.
    let retainVersions: Int
    let synchronousCommit: Bool
    /// The longest listd waits for the database at a time (`PostgresConnection.timeout`).
    let timeout: Duration
    var connection: PostgresConnection
    var sourceIDs: [String: Int] = [:]
    /// The reading connection and the listening thread (PostgresStore+Following.swift).
    let follower = Follower()

    /// Connects, takes the database's listd lock, and creates or migrates the schema.
    ///
    /// - Parameters:
    ///   - uri: libpq's connection URI or `key=value` string.
    ///   - synchronousCommit: `false` lets a commit return before its WAL is flushed (the `periodic`
    ///     sync mode: a crash of the database server may lose the last fraction of a second).
    ///   - timeout: the longest a connection, a statement or its result may take (a database that stops
    ///     answering fails the write within it, or within twice it when the commit itself was cut off);
    ///     also the server's `statement_timeout` and `idle_in_transaction_session_timeout`.
    /// - Throws: `StorageError`: `io` when PostgreSQL cannot be reached or refuses, `newerSchema` when
    ///   a newer listd made the schema.
    public init(uri: String, synchronousCommit: Bool = true, retainVersions: Int = 10_000, timeout: Duration = .seconds(10)) throws(StorageError) {
        self.uri = uri
        self.synchronousCommit = synchronousCommit
        self.retainVersions = retainVersions
        self.timeout = timeout
        displayName = PostgresConnection.redacted(uri)
        connection = try PostgresConnection(uri: uri, timeout: timeout)
        try prepareSession()
        try migrate()
        try reloadSourceIDs()
    }

    /// The session's settings (again after a reconnection).
    private func prepareSession() throws(StorageError) {
        // A transaction whose commit never arrives (the link went down) is ended by the server, so that
        // what became of it can be learned (`resolve`).
        let milliseconds = Int(timeout / .milliseconds(1))
        try connection.execute(
            """
            SET synchronous_commit = \(synchronousCommit ? "on" : "off"); SET client_min_messages = warning; \
            SET statement_timeout = \(milliseconds); SET idle_in_transaction_session_timeout = \(milliseconds)
            """)
    }

    /// Reconnects when the connection broke (the server restarted, the network dropped).
    func ensureConnected() throws(StorageError) {
        guard !connection.isConnected else { return }
        connection = try PostgresConnection(uri: uri, timeout: timeout)
        follower.countReconnect()
        try prepareSession()
        try reloadSourceIDs()
    }

    /// Brings the schema from the stored version to `schemaVersion` in one transaction (serialized
    /// between listd instances by a transaction-level advisory lock).
    private func migrate() throws(StorageError) {
        try transaction { () throws(StorageError) in
            try connection.query("SELECT pg_advisory_xact_lock($1)", [.integer(Self.lockKey + 1)])
            try connection.execute("CREATE TABLE IF NOT EXISTS listd_schema(version integer NOT NULL)")
            let stored = try connection.query("SELECT version FROM listd_schema")
            let version = stored.rowCount == 0 ? 0 : stored.int(0, 0)
            if version > Self.schemaVersion {
                throw StorageError(
                    .newerSchema,
                    "The PostgreSQL database at \(connection.displayName) has listd schema version \(version), written by a newer listd; "
                        + "this listd (schema version \(Self.schemaVersion)) cannot read it and left it unchanged: run a listd that knows schema version \(version).")
            }
            guard version < Self.schemaVersion else { return }
            if version < 1 {
                try connection.execute(
                    """
                    CREATE TABLE listd_data_sources(
                        id bigserial PRIMARY KEY,
                        name text NOT NULL UNIQUE,
                        incarnation text NOT NULL,
                        version bigint NOT NULL,
                        checkpoint_version bigint NOT NULL,
                        checkpoint bytea NOT NULL,
                        checkpoint_parts integer NOT NULL DEFAULT 0);
                    CREATE TABLE listd_change_log(
                        source bigint NOT NULL,
                        version bigint NOT NULL,
                        operation bytea,
                        changes bytea,
                        PRIMARY KEY (source, version));
                    CREATE TABLE listd_checkpoint_parts(
                        source bigint NOT NULL,
                        version bigint NOT NULL,
                        position integer NOT NULL,
                        bytes bytea NOT NULL,
                        PRIMARY KEY (source, version, position));
                    CREATE TABLE listd_registrations(
                        position bigserial PRIMARY KEY,
                        name text NOT NULL UNIQUE,
                        registration bytea NOT NULL);
                    """)
            }
            if version < 2 { try keyRegistrationsByOwner() }
            try connection.execute("DELETE FROM listd_schema")
            try connection.query("INSERT INTO listd_schema(version) VALUES ($1)", [.integer(Self.schemaVersion)])
        }
    }

    /// Schema 2: registrations are stored under their key (owner and name) instead of their name; each
    /// row keeps its position (the owner is in the stored registration).
    private func keyRegistrationsByOwner() throws(StorageError) {
        let rows = try connection.query("SELECT position, registration FROM listd_registrations ORDER BY position")
        var keyed: [(position: Int, key: String, registration: [UInt8])] = []
        for row in 0..<rows.rowCount {
            let bytes = rows.bytes(row, 1) ?? []
            keyed.append((rows.int(row, 0), try StateCoding.decodeRegistration(bytes).key, bytes))
        }
        guard !keyed.isEmpty else { return }
        // Deleted first: a new key may be an old name ("1000:row" was a name anyone could take).
        try connection.execute("DELETE FROM listd_registrations")
        for row in keyed {
            try connection.query(
                "INSERT INTO listd_registrations(position, name, registration) VALUES ($1, $2, $3)",
                [.integer(row.position), .text(row.key), .bytes(row.registration)])
        }
    }

    /// The row id of a data source (another instance may have created it since the ids were read).
    func sourceID(of name: String) throws(StorageError) -> Int {
        if let id = sourceIDs[name] { return id }
        let row = try connection.query("SELECT id FROM listd_data_sources WHERE name = $1", [.text(name)])
        guard row.rowCount == 1 else {
            throw StorageError(.conflict, "\(displayName): data source \"\(name)\" is not in the database: another writer dropped it.")
        }
        sourceIDs[name] = row.int(0, 0)
        return row.int(0, 0)
    }

    func reloadSourceIDs() throws(StorageError) {
        let rows = try connection.query("SELECT id, name FROM listd_data_sources")
        sourceIDs = [:]
        for row in 0..<rows.rowCount { sourceIDs[rows.text(row, 1)] = rows.int(row, 0) }
    }

    // MARK: Store

    public func load() throws(StorageError) -> StoredState {
        try load(dataSources: nil, registrations: true)
    }

    public func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState {
        try load(dataSources: Optional(names), registrations: registrations)
    }

    private func load(dataSources names: Set<String>?, registrations: Bool) throws(StorageError) -> StoredState {
        try ensureConnected()
        var state = StoredState()
        // One snapshot of the database for everything read.
        try transaction(readOnly: true) { () throws(StorageError) in
            if registrations { state.registrations = try Self.registrations(on: connection) }
            let sources = try connection.query(
                "SELECT id, name, incarnation, checkpoint_version, checkpoint, checkpoint_parts FROM listd_data_sources ORDER BY id")
            for row in 0..<sources.rowCount {
                if let names, !names.contains(sources.text(row, 1)) { continue }
                state.dataSources.append(try dataSource(sources, row, on: connection, upTo: nil))
            }
        }
        return state
    }

    /// The registrations, in creation order.
    static func registrations(on connection: PostgresConnection) throws(StorageError) -> [Registration] {
        let rows = try connection.query("SELECT registration FROM listd_registrations ORDER BY position")
        var registrations: [Registration] = []
        for row in 0..<rows.rowCount {
            registrations.append(try StateCoding.decodeRegistration(rows.bytes(row, 0) ?? []))
        }
        return registrations
    }

    /// The data source of a row of `SELECT id, name, incarnation, checkpoint_version, checkpoint,
    /// checkpoint_parts`: its checkpoint and the log after it, up to `version` when given.
    func dataSource(_ sources: PostgresResult, _ row: Int, on connection: PostgresConnection, upTo version: Int?) throws(StorageError) -> StoredDataSource {
        let name = sources.text(row, 1)
        let id = sources.int(row, 0)
        let checkpointVersion = sources.int(row, 3)
        let parts = sources.int(row, 5)
        let checkpointBytes =
            parts == 0 ? sources.bytes(row, 4) ?? [] : try checkpointParts(of: id, name: name, version: checkpointVersion, count: parts, on: connection)
        var content: DataSourceContent
        do {
            content = try StateCoding.decodeContent(checkpointBytes)
        } catch {
            throw StorageError(.corrupt, "\(displayName): the checkpoint of data source \"\(name)\" does not read back: \(error)")
        }
        content.version = checkpointVersion
        var stored = StoredDataSource(name: name, incarnation: sources.text(row, 2), checkpoint: content, checkpointBytes: checkpointBytes.count)
        // Operations a checkpoint covers are not read (only their event lines, for resuming).
        let log = try connection.query(
            """
            SELECT version, CASE WHEN version > $2 THEN operation END, changes
            FROM listd_change_log WHERE source = $1 AND version <= $3 ORDER BY version
            """, [.integer(id), .integer(checkpointVersion), .integer(version.flatMap { $0 >= checkpointVersion ? $0 : nil } ?? Int(Int64.max))])
        var expected = checkpointVersion + 1
        for entry in 0..<log.rowCount {
            let version = log.int(entry, 0)
            stored.retainedChanges.append((version, log.bytes(entry, 2)))
            guard version > checkpointVersion else { continue }
            guard version == expected, let operation = log.bytes(entry, 1) else {
                throw StorageError(.corrupt, "\(displayName): the log of data source \"\(name)\" misses version \(expected).")
            }
            expected += 1
            stored.tail.append((version, try StateCoding.decodeOperation(operation), operation.count))
        }
        return stored
    }

    /// A commit already waited for what `synchronous_commit` promises; in the `periodic` mode
    /// PostgreSQL's WAL writer flushes within a fraction of a second by itself.
    public func sync() throws(StorageError) {}

    /// A consistent copy of everything stored, as a SQLite database file (the embedded store's format):
    /// a listd started with `--state-directory` on a directory holding it as `listd.sqlite3` serves the
    /// same state. PostgreSQL's own `pg_dump` backs up the tables themselves.
    public func backup() throws(StorageError) -> [UInt8] {
        try ensureConnected()
        var template = Array("/tmp/listd-backup-XXXXXX".utf8CString)
        guard let directory = mkdtemp(&template) else { throw StorageError(.io, "Cannot make a temporary directory for the backup.") }
        let path = String(cString: directory) + "/listd.sqlite3"
        defer {
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            rmdir(String(cString: directory))
        }
        let copy = try SQLiteStore(path: path, sync: .periodic, retainVersions: retainVersions)
        defer { copy.close() }
        var records: [StoreRecord] = []
        try transaction(readOnly: true) { () throws(StorageError) in
            let registrations = try connection.query("SELECT name, registration FROM listd_registrations ORDER BY position")
            for row in 0..<registrations.rowCount {
                records.append(.register(name: registrations.text(row, 0), registration: registrations.bytes(row, 1) ?? []))
            }
            let sources = try connection.query(
                "SELECT id, name, incarnation, checkpoint_version, checkpoint, checkpoint_parts FROM listd_data_sources ORDER BY id")
            for row in 0..<sources.rowCount {
                let (id, name, version, parts) = (sources.int(row, 0), sources.text(row, 1), sources.int(row, 3), sources.int(row, 5))
                let content = parts == 0 ? sources.bytes(row, 4) ?? [] : try checkpointParts(of: id, name: name, version: version, count: parts, on: connection)
                let log = try connection.query(
                    "SELECT version, operation, changes FROM listd_change_log WHERE source = $1 ORDER BY version", [.integer(id)])
                // The embedded store's log starts after its first checkpoint: versions it covers are
                // kept for their event lines, with no operation to replay.
                let covered = (0..<log.rowCount).filter { log.int($0, 0) <= version }
                let first = covered.first.map { log.int($0, 0) } ?? version
                records.append(.createDataSource(name: name, incarnation: sources.text(row, 2), version: min(first - 1, version), content: content))
                for entry in 0..<log.rowCount {
                    let logged = log.int(entry, 0)
                    records.append(.change(dataSource: name, version: logged, operation: log.bytes(entry, 1) ?? Array("null".utf8), changes: log.bytes(entry, 2)))
                }
                records.append(.checkpoint(dataSource: name, version: version, content: content))
            }
        }
        try copy.write(records)
        return try copy.backup()
    }

    public func close() {
        stopFollowing()
        connection.close()
    }

    // MARK: Helpers

    /// The parts of a checkpoint, joined.
    func checkpointParts(of id: Int, name: String, version: Int, count: Int, on connection: PostgresConnection) throws(StorageError) -> [UInt8] {
        let parts = try connection.query(
            "SELECT position, bytes FROM listd_checkpoint_parts WHERE source = $1 AND version = $2 ORDER BY position LIMIT $3",
            [.integer(id), .integer(version), .integer(count)])
        var bytes: [UInt8] = []
        for row in 0..<parts.rowCount {
            guard parts.int(row, 0) == row else { break }
            bytes += parts.bytes(row, 1) ?? []
        }
        guard parts.rowCount == count, (0..<count).allSatisfy({ parts.int($0, 0) == $0 }) else {
            throw StorageError(.corrupt, "\(displayName): the checkpoint of data source \"\(name)\" misses a part of \(count).")
        }
        return bytes
    }

    /// Runs `body` in one transaction: all of it, or (when it throws) none.
    func transaction(readOnly: Bool = false, _ body: () throws(StorageError) -> Void) throws(StorageError) {
        try Self.transaction(on: connection, readOnly: readOnly, body)
    }

    /// Runs `body` in one transaction on `connection`.
    static func transaction(on connection: PostgresConnection, readOnly: Bool = false, _ body: () throws(StorageError) -> Void) throws(StorageError) {
        try connection.execute(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
        do throws(StorageError) {
            try body()
            try connection.commit()
        } catch {
            if connection.isConnected { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}
