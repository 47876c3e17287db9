import ListEngine
import ListStore

/// A store the server is to write to, opened by its host (listd picks and opens it), with what it held.
public struct OpenedStorage: @unchecked Sendable {
    /// Where changes are written.
    public let store: Store
    /// Everything the store held when it was opened: the server serves it.
    public let loaded: StoredState
    /// Whether the server syncs once a second (writes are not synced one by one).
    public let periodicSync: Bool
    /// What must stay open while the server runs (the state directory and its lock).
    public let keptOpen: AnyObject?
    /// For `STATUS=`: `"loaded 3 data sources and 2 registrations from DIR in 14 ms"`.
    public let summary: String

    public init(store: Store, loaded: StoredState, periodicSync: Bool, keptOpen: AnyObject?, summary: String) {
        self.store = store
        self.loaded = loaded
        self.periodicSync = periodicSync
        self.keptOpen = keptOpen
        self.summary = summary
    }
}
