import ListStore

/// Writing a group: its changes' rows and version moves, in as few round trips as the records allow,
/// and the other records (creates, drops, checkpoints, registrations) in order between them.
extension PostgresStore {
    /// Writes `records` in one transaction, in two round trips when they are all changes (the usual
    /// group): one pipeline (libpq's pipeline mode) begins the transaction, learns its id, moves each data
    /// source's version and inserts the change rows, all with statements prepared once per connection;
    /// then the commit. Other records (a create, drop, checkpoint or registration) go in order between
    /// the changes, a statement at a time.
    public func write(_ records: [StoreRecord]) throws(StorageError) {
        try ensureConnected()
        let transactionID: Int
        do throws(StorageError) {
            let leading = records.prefix(while: Self.isChange)
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
            // In order: the changes before a create, drop or checkpoint go in first.
            var rest = records.dropFirst(leading.count)
            while let record = rest.first {
                let changes = rest.prefix(while: Self.isChange)
                try insert(Self.changes(changes))
                rest = rest.dropFirst(changes.count)
                if changes.isEmpty {
                    try write(record)
                    rest = rest.dropFirst()
                }
            }
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

    private static func isChange(_ record: StoreRecord) -> Bool {
        if case .change = record { true } else { false }
    }

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
}
