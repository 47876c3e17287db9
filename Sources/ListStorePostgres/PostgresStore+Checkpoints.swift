import ListStore

extension PostgresStore {
    /// Logged operations of more bytes than this are dropped as soon as a checkpoint covers them.
    static let largeOperations = 64 << 10
    /// Log rows (one per version) deleted per call once a checkpoint is in place.
    static let trimRows = 4_096

    /// Writes a checkpoint as the embedded store does (see `SQLiteStore.writeCheckpoint`): up to
    /// `CheckpointWrite.partBytes` with everything else in one transaction; a larger one a part per call
    /// into `listd_checkpoint_parts`, the last call switching the data source to it. Each call checks
    /// again that the checkpoint still applies. Then log rows older than the retention are deleted,
    /// `trimRows` per call.
    public func writeCheckpoint(_ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress {
        guard let id = sourceIDs[checkpoint.dataSource] else { return .skipped }  // dropped: its parts went with it
        let stored = try connection.query(
            "SELECT incarnation, checkpoint_version, version FROM listd_data_sources WHERE id = $1", [.integer(id)])
        guard stored.rowCount == 1 else { return .skipped }
        let (incarnation, checkpointVersion, logged) = (stored.text(0, 0), stored.int(0, 1), stored.int(0, 2))
        if checkpoint.switched {
            // Made again under the same name since: its log is not this checkpoint's to trim.
            return incarnation == checkpoint.incarnation ? try trim(id, &checkpoint) : .skipped
        }
        guard checkpoint.applies(toIncarnation: incarnation, checkpointVersion: checkpointVersion, loggedVersion: logged) else {
            if checkpoint.written > 0 {
                try connection.query(
                    "DELETE FROM listd_checkpoint_parts WHERE source = $1 AND version = $2", [.integer(id), .integer(checkpoint.version)])
            }
            return .skipped
        }
        let total = checkpoint.encoded.count
        let (part, position, end, whole) = checkpoint.nextPart
        let version = checkpoint.version
        try transaction { () throws(StorageError) in
            if !whole {
                try connection.query(
                    """
                    INSERT INTO listd_checkpoint_parts(source, version, position, bytes) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (source, version, position) DO UPDATE SET bytes = EXCLUDED.bytes
                    """, [.integer(id), .integer(version), .integer(position), .bytes(part)])
            }
            guard end == total else { return }
            try connection.query(
                "UPDATE listd_data_sources SET checkpoint = $2, checkpoint_version = $3, checkpoint_parts = $4 WHERE id = $1",
                [.integer(id), .bytes(whole ? part : []), .integer(version), .integer(whole ? 0 : position + 1)])
            // The previous checkpoint's parts, and those of one that never completed.
            try connection.query(
                "DELETE FROM listd_checkpoint_parts WHERE source = $1 AND version != $2", [.integer(id), .integer(whole ? -1 : version)])
            // Large covered operations (a whole snapshot applied) go now; small ones wait for the retention.
            try connection.query(
                """
                UPDATE listd_change_log SET operation = NULL
                WHERE source = $1 AND version <= $2 AND operation IS NOT NULL AND length(operation) > \(Self.largeOperations)
                """, [.integer(id), .integer(version)])
        }
        checkpoint.written = end
        if end == total { checkpoint.switched = true }
        return .partial
    }

    /// Deletes the log rows older than the retention, `trimRows` versions per call, upwards from the
    /// oldest (looked up once): a range of the primary key, so that a call never walks what earlier
    /// calls deleted. (Deleting "the oldest `trimRows`" with a subquery did: every call scanned the
    /// dead rows of the calls before it, until vacuum came, and took seconds, then tens of seconds,
    /// while the writer, and every write waiting on it, waited.) Done past the retention.
    private func trim(_ id: Int, _ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress {
        let newestToDelete = checkpoint.newestVersionToTrim(retainVersions: retainVersions)
        if checkpoint.trimmedBelow == nil {
            let oldest = try connection.query("SELECT min(version) FROM listd_change_log WHERE source = $1", [.integer(id)])
            checkpoint.trimmedBelow = oldest.rowCount == 1 && !oldest.isNull(0, 0) ? oldest.int(0, 0) : newestToDelete + 1
        }
        let from = checkpoint.trimmedBelow!
        guard from <= newestToDelete else { return .done(bytes: checkpoint.encoded.count) }
        let below = min(from + Self.trimRows, newestToDelete + 1)
        try connection.query(
            "DELETE FROM listd_change_log WHERE source = $1 AND version >= $2 AND version < $3", [.integer(id), .integer(from), .integer(below)])
        checkpoint.trimmedBelow = below
        return below > newestToDelete ? .done(bytes: checkpoint.encoded.count) : .partial
    }
}
