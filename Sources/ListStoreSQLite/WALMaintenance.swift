import CSQLite
import ListStore
import Synchronization

/// Keeps the write-ahead log short without making the writer copy it.
///
/// SQLite's automatic checkpoint copies the log into the database file inside the commit that takes
/// the log past 1,000 pages: that commit takes 10–20 ms instead of half a millisecond, and every
/// request in its group waits. Here the writer's connection has no automatic checkpoint; its WAL hook
/// counts the log's pages, and once the log passes `threshold` a second connection copies it
/// (`backfill`, on another thread) while the writer goes on appending, in a few passes that each copy
/// what was appended during the previous one. The log restarts only at a transaction that begins with
/// every frame copied, which a writer that keeps writing rarely meets, so afterwards the writer copies
/// the few pages left itself (`finishBackfill`, when no write waits, or after a write once the log is
/// four times the threshold), and its next transaction starts the log from the beginning.
final class WALMaintenance: @unchecked Sendable {
    /// Pages in the log before a backfill is due (SQLite's own default for its automatic checkpoint).
    static let threshold = 1_000
    /// Passes a backfill makes to catch up with the writer.
    static let passes = 4

    private let connection: SQLiteConnection
    /// The log's size in pages after the writer's last commit (set by the WAL hook).
    private let pages = Atomic<Int>(0)
    /// A backfill finished since the writer last finished one.
    private let backfilled = Atomic<Bool>(false)
    /// A backfill is running (the second connection serves one thread at a time).
    private let running = Atomic<Bool>(false)

    /// Opens the second connection and installs the hook on the writer's connection (replacing
    /// SQLite's automatic checkpoint, which is itself a WAL hook).
    init(path: String, writer: SQLiteConnection) throws(StorageError) {
        connection = try SQLiteConnection(path: path)
        // A connection learns that the database is in WAL mode when it first reads it; until then a
        // checkpoint on it does nothing.
        _ = try connection.integer("SELECT count(*) FROM sqlite_schema")
        sqlite3_wal_hook(
            writer.handle,
            { context, _, _, pages in
                Unmanaged<WALMaintenance>.fromOpaque(context!).takeUnretainedValue().pages.store(Int(pages), ordering: .relaxed)
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether the log has grown past the threshold (and no backfill waits for the writer to finish it).
    var isDue: Bool { pages.load(ordering: .relaxed) >= Self.threshold && !backfilled.load(ordering: .relaxed) }

    /// Whether the log has grown so far past the threshold that the writer should not wait for an idle
    /// moment to finish a backfill.
    var isOverdue: Bool { pages.load(ordering: .relaxed) >= 4 * Self.threshold }

    /// Copies the log into the database file on the second connection (not the writer's thread). A call
    /// while another runs returns at once.
    func backfill() throws(StorageError) {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        defer { running.store(false, ordering: .releasing) }
        var logged: Int32 = 0
        var copied: Int32 = 0
        for _ in 0..<Self.passes {
            let status = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
            if status == SQLITE_BUSY { break }
            if status != SQLITE_OK { throw connection.failure(status, "checkpoint") }
            if copied >= logged { break }
        }
        backfilled.store(true, ordering: .releasing)
    }

    /// On the writer's thread between transactions: after a backfill, copies what was appended during
    /// it, so that the next transaction restarts the log. Upkeep only: a failure leaves the log longer.
    func finishBackfill(writer: SQLiteConnection) {
        guard backfilled.exchange(false, ordering: .acquiring) else { return }
        try? writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    func close() {
        connection.close()
    }
}
