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
    private func ensureConnected() throws(StorageError) {
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
    private func sourceID(of name: String) throws(StorageError) -> Int {
        if let id = sourceIDs[name] { return id }
        let row = try connection.query("SELECT id FROM listd_data_sources WHERE name = $1", [.text(name)])
        guard row.rowCount == 1 else {
            throw StorageError(.conflict, "\(displayName): data source \"\(name)\" is not in the database: another writer dropped it.")
        }
        sourceIDs[name] = row.int(0, 0)
        return row.int(0, 0)
    }

    private func reloadSourceIDs() throws(StorageError) {
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

    /// Writes `records` in one transaction, in two round trips when they are all changes (the usual
    /// group): one pipeline (libpq's pipeline mode) begins the transaction, learns its id, moves each data
    /// source's version and inserts the change rows, all with statements prepared once per connection;
    /// then the commit. Other records (a create, drop, checkpoint or registration) go in order between
    /// the changes, a statement at a time.
    public func write(_ records: [StoreRecord]) throws(StorageError) {
        try ensureConnected()
        let transactionID: Int
        do throws(StorageError) {
            let leading = records.prefix { if case .change = $0 { true } else { false } }
            var statements = [PostgresStatement(sql: "BEGIN"), PostgresStatement(sql: "SELECT txid_current()")]
            let moves = try changeStatements(Self.changes(leading), into: &statements)
            let begun = try connection.pipeline(statements)
            // The transaction's id, to learn its outcome should the commit be cut off.
            guard let txid = begun.results[1], txid.rowCount == 1, !txid.isNull(0, 0) else {
                throw begun.firstError ?? StorageError(.io, "\(displayName): txid_current() gave no transaction id.")
            }
            transactionID = txid.int(0, 0)
            try checkMoved(moves, begun, at: 2)
            if let error = begun.firstError { throw error }
            var changes: [LoggedChange] = []
            for record in records.dropFirst(leading.count) {
                if case .change(let name, let version, let operation, let changed) = record {
                    changes.append((name, version, operation, changed))
                    continue
                }
                // In order: the changes before a create, drop or checkpoint go in first.
                try insert(changes)
                changes = []
                try write(record)
            }
            try insert(changes)
        } catch {
            if connection.isConnected { _ = try? connection.execute("ROLLBACK") }
            if connection.isConnected { try? reloadSourceIDs() }
            throw error
        }
        do throws(StorageError) {
            try connection.commit()
        } catch {
            // The server answered: it rolled the transaction back.
            guard !connection.isConnected else {
                try? reloadSourceIDs()
                throw error
            }
            try resolve(transactionID, backend: connection.backendProcess, after: error)
        }
    }

    /// A change as the log stores it.
    typealias LoggedChange = (name: String, version: Int, operation: [UInt8], changes: [UInt8]?)

    /// The changes among `records`.
    private static func changes(_ records: some Collection<StoreRecord>) -> [LoggedChange] {
        records.compactMap { record in
            guard case .change(let name, let version, let operation, let changed) = record else { return nil }
            return (name, version, operation, changed)
        }
    }

    /// Change rows per insert (its arrays stay well within a message's size).
    static let rowsPerInsert = 1_000

    /// A data source's version move: which source, and the version it moves on from.
    private struct VersionMove {
        var id: Int
        var name: String
        var from: Int
    }

    /// Stores `changes` in the transaction open on the connection, in one round trip
    /// (`changeStatements`).
    private func insert(_ changes: [LoggedChange]) throws(StorageError) {
        guard !changes.isEmpty else { return }
        var statements: [PostgresStatement] = []
        let moves = try changeStatements(changes, into: &statements)
        let results = try connection.pipeline(statements)
        try checkMoved(moves, results, at: 0)
        if let error = results.firstError { throw error }
    }

    /// Appends the statements that store `changes`: each data source's `version` moves on from exactly
    /// the version before its first change (the update takes the row's lock, so writers of one data
    /// source commit one after the other, and the other instances learn of the new version once the
    /// transaction commits), then the change rows go in, one insert per `rowsPerInsert` rows. Both
    /// statements are prepared once per connection. Returns the moves, whose statements come first,
    /// in order (`checkMoved`).
    private func changeStatements(_ changes: [LoggedChange], into statements: inout [PostgresStatement]) throws(StorageError) -> [VersionMove] {
        guard !changes.isEmpty else { return [] }
        var ids: [Int] = []
        ids.reserveCapacity(changes.count)
        var range: [Int: (oldest: Int, newest: Int, name: String)] = [:]
        for change in changes {
            let id = try sourceID(of: change.name)
            ids.append(id)
            if let known = range[id] {
                range[id] = (min(known.oldest, change.version), max(known.newest, change.version), change.name)
            } else {
                range[id] = (change.version, change.version, change.name)
            }
        }
        var moves: [VersionMove] = []
        for (id, versions) in range.sorted(by: { $0.key < $1.key }) {  // in id order: no deadlock between writers
            moves.append(VersionMove(id: id, name: versions.name, from: versions.oldest - 1))
            statements.append(
                PostgresStatement(
                    sql: "UPDATE listd_data_sources SET version = $2 WHERE id = $1 AND version = $3 RETURNING pg_notify('\(Self.channel)', $4)",
                    parameters: [
                        .integer(id), .integer(versions.newest), .integer(versions.oldest - 1), .text(notice(changed: versions.name, version: versions.newest)),
                    ],
                    preparedName: "listd_move_version"))
        }
        var start = 0
        while start < changes.count {
            let rows = start..<min(changes.count, start + Self.rowsPerInsert)
            statements.append(
                PostgresStatement(
                    sql: "INSERT INTO listd_change_log(source, version, operation, changes) SELECT * FROM unnest($1::int8[], $2::int8[], $3::bytea[], $4::bytea[])",
                    parameters: [
                        .integers(Array(ids[rows])), .integers(rows.map { changes[$0].version }), .byteArrays(rows.map { changes[$0].operation }),
                        .byteArrays(rows.map { changes[$0].changes }),
                    ],
                    preparedName: "listd_log_changes"))
            start = rows.upperBound
        }
        return moves
    }

    /// Throws a conflict when one of the moves (whose results start at `first`) found its data source at
    /// another version: another writer got there first. The transaction is rolled back first, so that
    /// the stored version can be read for the message.
    ///
    /// - Throws: `StorageError` (`conflict`) naming the data source and both versions.
    private func checkMoved(_ moves: [VersionMove], _ results: PipelineResults, at first: Int) throws(StorageError) {
        for (offset, move) in moves.enumerated() {
            // No result: a statement before it failed (`firstError` says why).
            guard let moved = results.results[first + offset], moved.affectedRows != 1 else { continue }
            _ = try? connection.execute("ROLLBACK")
            let stored = try connection.query("SELECT version FROM listd_data_sources WHERE id = $1", [.integer(move.id)])
            throw StorageError(
                .conflict,
                "\(displayName): data source \"\(move.name)\" is at version \(stored.rowCount == 1 ? String(stored.int(0, 0)) : "?") in the database, not \(move.from): another writer changed it.")
        }
    }

    private func write(_ record: StoreRecord) throws(StorageError) {
        switch record {
        case .createDataSource(let name, let incarnation, let version, let content):
            let row = try connection.query(
                "INSERT INTO listd_data_sources(name, incarnation, version, checkpoint_version, checkpoint) VALUES ($1, $2, $3, $3, $4) RETURNING id",
                [.text(name), .text(incarnation), .integer(version), .bytes(content)])
            sourceIDs[name] = row.int(0, 0)
            try notify(Notice.dataSources)
        case .dropDataSource(let name):
            let id: Int
            do throws(StorageError) {
                id = try sourceID(of: name)
            } catch where error.kind == .conflict {
                return  // another writer dropped it already
            }
            sourceIDs[name] = nil
            try connection.query("DELETE FROM listd_change_log WHERE source = $1", [.integer(id)])
            try connection.query("DELETE FROM listd_checkpoint_parts WHERE source = $1", [.integer(id)])
            try connection.query("DELETE FROM listd_data_sources WHERE id = $1", [.integer(id)])
            try notify(Notice.dataSources)
        case .change:
            break  // inserted in batches
        case .checkpoint(let name, let version, let content):
            let id = try sourceID(of: name)
            try connection.query("DELETE FROM listd_checkpoint_parts WHERE source = $1", [.integer(id)])
            // Stored as parts when large, as a checkpoint written in steps is.
            let parts = content.count > CheckpointWrite.partBytes ? Array(stride(from: 0, to: content.count, by: CheckpointWrite.partBytes)) : []
            for (position, start) in parts.enumerated() {
                try connection.query(
                    "INSERT INTO listd_checkpoint_parts(source, version, position, bytes) VALUES ($1, $2, $3, $4)",
                    [.integer(id), .integer(version), .integer(position), .bytes(Array(content[start..<min(content.count, start + CheckpointWrite.partBytes)]))])
            }
            try connection.query(
                "UPDATE listd_data_sources SET checkpoint = $2, checkpoint_version = $3, checkpoint_parts = $4, version = GREATEST(version, $3) WHERE id = $1",
                [.integer(id), .bytes(parts.isEmpty ? content : []), .integer(version), .integer(parts.count)])
            try connection.query(
                "DELETE FROM listd_change_log WHERE source = $1 AND version <= $2", [.integer(id), .integer(version - retainVersions)])
        case .register(let name, let registration):
            try connection.query(
                "INSERT INTO listd_registrations(name, registration) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET registration = EXCLUDED.registration",
                [.text(name), .bytes(registration)])
            try notify(Notice.registrations)
        case .unregister(let name):
            try connection.query("DELETE FROM listd_registrations WHERE name = $1", [.text(name)])
            try notify(Notice.registrations)
        }
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
