import ListDurability
import ListServer
import ListStore
import ListStorePostgres
import ListStoreSQLite
import Logging

/// Where listd's state lasts, as the command line and the configuration file choose it.
enum StorageChoice: Sendable, Equatable {
    /// Nothing is written: the state dies with the process (`--ephemeral`).
    case ephemeral
    /// A SQLite database in a state directory, with the given sync mode.
    case directory(String, sync: SQLiteStore.SyncMode)
    /// A PostgreSQL database (libpq's connection URI), with the given sync mode (`periodic` commits
    /// with `synchronous_commit` off) and the longest wait for the database at a time.
    case postgres(String, sync: SQLiteStore.SyncMode, timeout: Duration)
}

/// Opens the chosen store for the server (listd is where the store is picked; the server takes any
/// `Store`): the locked state directory and SQLite, or PostgreSQL, with everything in it read.
enum StateStorage {
    /// The opened store; `nil` when ephemeral.
    static func open(_ choice: StorageChoice, retainVersions: Int, logger: Logger) throws -> OpenedStorage? {
        let start = ContinuousClock.now
        let directory: StateDirectory?
        let store: Store
        let place: String
        let periodicSync: Bool
        switch choice {
        case .ephemeral:
            return nil
        case .directory(let path, let sync):
            directory = try StateDirectory(path: path)
            store = try SQLiteStore(path: directory!.databasePath, sync: sync, retainVersions: retainVersions)
            place = path
            periodicSync = sync == .periodic
        case .postgres(let uri, let sync, let timeout):
            directory = nil
            let postgres = try PostgresStore(uri: uri, synchronousCommit: sync == .always, retainVersions: retainVersions, timeout: timeout)
            store = postgres
            place = "PostgreSQL at \(postgres.displayName)"
            periodicSync = false  // PostgreSQL flushes by itself
        }
        let loaded = try store.load()
        let elapsed = ContinuousClock.now - start
        let milliseconds = Int(elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        logger.info(
            "state loaded", metadata: ["store": "\(place)", "dataSources": "\(loaded.dataSources.count)", "milliseconds": "\(milliseconds)"])
        let count = loaded.dataSources.count
        let registrations = loaded.registrations.count
        let summary =
            "loaded \(count) data source\(count == 1 ? "" : "s") and \(registrations) registration\(registrations == 1 ? "" : "s") from \(place) in \(milliseconds) ms"
        return OpenedStorage(store: store, loaded: loaded, periodicSync: periodicSync, keptOpen: directory, summary: summary)
    }
}
