import CellCore
import DiffableCore

/// A store that several listd instances share (the PostgreSQL store): each instance writes its own
/// commits through `Store`, and follows the others' through this protocol.
///
/// Following works in two halves. The store tells the instance *that* something changed
/// (`startFollowing`: a data source's new version, data sources created or dropped, registrations
/// changed, or "compare everything" after a reconnection, when notices may have been missed); the
/// instance then reads *what* changed with the reading methods, which use a connection of their own
/// (they may run on any thread, one call at a time per store, concurrently with `write`).
public protocol SharedStore: Store {
    /// Starts telling `notice` (on a thread of the store's) what the other instances committed. The
    /// first notice is `.resync`: what was committed between `load` and the start is compared then.
    func startFollowing(_ notice: @escaping @Sendable (StoreNotice) -> Void)
    /// Stops the notices (before `close`).
    func stopFollowing()
    /// Times a connection of the store was made again after it broke (all connections, for `stats`).
    var reconnects: Int { get }

    /// The committed changes of a data source after `version`, in version order.
    func changes(of name: String, after version: Int) throws(StorageError) -> FollowedChanges
    /// Every stored data source's incarnation and newest version.
    func versions() throws(StorageError) -> [StoredVersion]
    /// The registrations, in creation order.
    func storedRegistrations() throws(StorageError) -> [Registration]
    /// One data source as stored: at its newest version, or, given `version`, at that version when the
    /// store can still make it (its checkpoint is not newer), else at its newest; `nil` when missing.
    func dataSource(named name: String, atVersion version: Int?) throws(StorageError) -> StoredDataSource?
}

/// What another instance committed, as a `SharedStore` tells it (ids and versions only: the reader
/// fetches the data).
public enum StoreNotice: Sendable, Equatable {
    /// A data source's newest version is now `version` (at least).
    case changed(dataSource: String, version: Int)
    /// Data sources were created or dropped.
    case dataSources
    /// Registrations were made or deleted.
    case registrations
    /// Notices may have been missed (the store's listening connection was made, or made again):
    /// compare everything.
    case resync
}

/// A stored data source's identity and newest version (`SharedStore.versions`).
public struct StoredVersion: Sendable, Equatable {
    public var name: String
    public var incarnation: String
    public var version: Int

    public init(name: String, incarnation: String, version: Int) {
        self.name = name
        self.incarnation = incarnation
        self.version = version
    }
}

/// One committed version of a data source as another instance follows it.
public struct FollowedChange: Sendable {
    public var version: Int
    public var operation: DataSourceOperation
    /// The event line the committing instance sent its views (`nil` when not kept).
    public var changes: [UInt8]?

    public init(version: Int, operation: DataSourceOperation, changes: [UInt8]?) {
        self.version = version
        self.operation = operation
        self.changes = changes
    }
}

/// What `SharedStore.changes(of:after:)` found.
public enum FollowedChanges: Sendable {
    /// The changes after the version asked for, contiguous and in order, of the data source stored as
    /// `incarnation` (empty when nothing is newer).
    case changes(incarnation: String, [FollowedChange])
    /// The data source cannot be followed change by change from that version (its log no longer goes
    /// back that far): read it whole.
    case gap(incarnation: String)
    /// No such data source is stored.
    case missing
}
