import CSQLite
import ListStore

extension SQLiteStore {
    /// Logged operations of more bytes than this are dropped as soon as a checkpoint covers them.
    static let largeOperations = 64 << 10

    /// Writes a checkpoint of up to `CheckpointWrite.partBytes` in one transaction with everything else
    /// it does; a larger one first goes into `checkpoint_parts` one part per call (each its own short
    /// transaction, so the writer thread can write groups between them), and the last call switches
    /// the data source to it. Each call checks again that the checkpoint still applies (the data
    /// source may have been dropped, or dropped and made again, in between). Then log records older
    /// than the retention are deleted, `trimRows` per call (freeing a long log's pages at once is a
    /// transaction of tens of milliseconds).
    public func writeCheckpoint(_ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress {
        guard let id = sourceIDs[checkpoint.dataSource] else { return .skipped }  // dropped: its parts went with it
        let stored = try connection.prepare(
            """
            SELECT incarnation, checkpoint_version,
                (SELECT last_version FROM change_log WHERE source = ?1 ORDER BY first_version DESC LIMIT 1)
            FROM data_sources WHERE id = ?1
            """)
        try stored.query(.integer(id))
        guard try stored.step() else { return .skipped }
        let (incarnation, checkpointVersion, logged) = (stored.text(0), stored.int(1), stored.int(2))
        try stored.query()
        if checkpoint.switched {
            // Made again under the same name since: its log is not this checkpoint's to trim.
            return incarnation == checkpoint.incarnation ? try trim(id, checkpoint) : .skipped
        }
        guard checkpoint.applies(toIncarnation: incarnation, checkpointVersion: checkpointVersion, loggedVersion: logged) else {
            if checkpoint.written > 0 { try transaction { () throws(StorageError) in try deleteParts(of: id, version: checkpoint.version) } }
            return .skipped
        }
        let total = checkpoint.encoded.count
        let (part, position, end, whole) = checkpoint.nextPart
        let version = checkpoint.version
        try transaction { () throws(StorageError) in
            if !whole {
                try connection.prepare("INSERT OR REPLACE INTO checkpoint_parts(source, version, position, bytes) VALUES (?, ?, ?, ?)")
                    .run(.integer(id), .integer(version), .integer(position), .blob(part))
            }
            guard end == total else { return }
            try connection.prepare("UPDATE data_sources SET checkpoint = ?, checkpoint_version = ?, checkpoint_parts = ? WHERE id = ?")
                .run(.blob(whole ? part : []), .integer(version), .integer(whole ? 0 : position + 1), .integer(id))
            // The previous checkpoint's parts, and those of one that never completed.
            try connection.prepare("DELETE FROM checkpoint_parts WHERE source = ? AND version != ?").run(.integer(id), .integer(whole ? -1 : version))
            // Log records the checkpoint covers stay for resuming views until the retention trims them
            // (next calls); their operations are skipped when the log is replayed on top of it. Large
            // operations (a whole snapshot applied) are dropped now: rewriting a row costs its size,
            // so small ones wait for the retention.
            try connection.prepare(
                """
                UPDATE change_log SET operations = NULL
                WHERE source = ? AND last_version <= ? AND operations IS NOT NULL AND length(operations) > \(Self.largeOperations)
                """
            ).run(.integer(id), .integer(version))
        }
        checkpoint.written = end
        if end == total { checkpoint.switched = true }
        return .partial
    }

    /// Log rows deleted per call once a checkpoint is in place.
    static let trimRows = 64

    /// Deletes up to `trimRows` log rows older than the retention; done when fewer were left.
    private func trim(_ id: Int, _ checkpoint: CheckpointWrite) throws(StorageError) -> CheckpointProgress {
        var deleted = 0
        try transaction { () throws(StorageError) in
            try connection.prepare(
                """
                DELETE FROM change_log WHERE source = ?1 AND first_version IN
                    (SELECT first_version FROM change_log WHERE source = ?1 AND last_version <= ?2 ORDER BY first_version LIMIT ?3)
                """
            ).run(.integer(id), .integer(checkpoint.newestVersionToTrim(retainVersions: retainVersions)), .integer(Self.trimRows))
            deleted = connection.changes
        }
        return deleted < Self.trimRows ? .done(bytes: checkpoint.encoded.count) : .partial
    }

    /// The parts of a checkpoint, joined.
    func checkpointParts(of id: Int, name: String, version: Int, count: Int) throws(StorageError) -> [UInt8] {
        let parts = try connection.prepare("SELECT position, bytes FROM checkpoint_parts WHERE source = ? AND version = ? ORDER BY position")
        try parts.query(.integer(id), .integer(version))
        var bytes: [UInt8] = []
        var expected = 0
        // Rows past `count` would be left from an attempt that never completed: not this checkpoint's.
        while expected < count, try parts.step() {
            guard parts.int(0) == expected else { break }
            bytes += parts.blob(1) ?? []
            expected += 1
        }
        try parts.query()
        guard expected == count else {
            throw StorageError(.corrupt, "\(path): the checkpoint of data source \"\(name)\" misses part \(expected) of \(count).")
        }
        return bytes
    }

    private func deleteParts(of id: Int, version: Int) throws(StorageError) {
        try connection.prepare("DELETE FROM checkpoint_parts WHERE source = ? AND version = ?").run(.integer(id), .integer(version))
    }

    /// Runs `body` in one write transaction: all of it, or (when it throws) none.
    func transaction(_ body: () throws(StorageError) -> Void) throws(StorageError) {
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StorageError) {
            try body()
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
