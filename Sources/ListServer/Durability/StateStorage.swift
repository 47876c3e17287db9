import ListStore
import ListStorePostgres
import ListStoreSQLite
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The storage a server opened at start-up: the locked state directory (for the embedded store), the
/// store, and what loading found and took (for `STATUS=` and `stats`).
final class StateStorage: @unchecked Sendable {
    let directory: StateDirectory?
    let store: Store
    /// `"loaded 3 data sources (1200 items), 2 registrations from DIR in 14 ms"`.
    let summary: String

    private init(directory: StateDirectory?, store: Store, summary: String) {
        self.directory = directory
        self.store = store
        self.summary = summary
    }

    /// Opens the store (locking the state directory, or the PostgreSQL database) and reads everything
    /// in it; `nil` when ephemeral.
    static func open(_ storage: ServerConfiguration.Storage, retainVersions: Int, logger: Logger) throws -> (StateStorage, StoredState)? {
        let start = ContinuousClock.now
        let directory: StateDirectory?
        let store: Store
        let place: String
        switch storage {
        case .ephemeral:
            return nil
        case .directory(let path, let sync):
            directory = try StateDirectory(path: path)
            store = try SQLiteStore(path: directory!.databasePath, sync: sync, retainVersions: retainVersions)
            place = path
        case .postgres(let uri, let sync):
            directory = nil
            let postgres = try PostgresStore(uri: uri, synchronousCommit: sync == .always, retainVersions: retainVersions)
            store = postgres
            place = "PostgreSQL at \(postgres.displayName)"
        }
        let loaded = try store.load()
        let elapsed = ContinuousClock.now - start
        let milliseconds = Int(elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        logger.info(
            "state loaded", metadata: ["store": "\(place)", "dataSources": "\(loaded.dataSources.count)", "milliseconds": "\(milliseconds)"])
        let count = loaded.dataSources.count
        let summary =
            "loaded \(count) data source\(count == 1 ? "" : "s") and \(loaded.registrations.count) registration\(loaded.registrations.count == 1 ? "" : "s") from \(place) in \(milliseconds) ms"
        return (StateStorage(directory: directory, store: store, summary: summary), loaded)
    }
}
