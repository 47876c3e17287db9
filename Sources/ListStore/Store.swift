import CellCore
import DiffableCore

/// Where listd's state lasts: a log of committed changes per data source plus checkpoints, and the
/// registrations.
///
/// The server keeps its state in memory and writes it here; it reads a store only at start-up and to
/// undo a group of changes whose write failed. Every method is called from one thread at a time (the
/// server's writer thread, or start-up before it runs). Implementations: `SQLiteStore` (the embedded
/// default, in ListStoreSQLite) and `MemoryStore` (tests). A shared PostgreSQL store plugs in here.
public protocol Store: AnyObject, Sendable {
    /// Everything stored: registrations in creation order, every data source's last checkpoint and the
    /// log records after it.
    func load() throws(StorageError) -> StoredState
    /// The stored state of the named data sources (absent ones are missing from the result) and, when
    /// `registrations` is true, the registrations: what undoing a failed write restores.
    func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState
    /// Writes the records as one transaction: all of them or, when it throws, none. Returns once the
    /// transaction is as durable as the store's sync mode promises.
    func write(_ records: [StoreRecord]) throws(StorageError)
    /// Stores `encoded` (a `StateCoding`-encoded content at `version`) as the data source's checkpoint
    /// and drops log records the checkpoint makes unnecessary, keeping `retainVersions` for resuming.
    /// Returns the checkpoint's size, or `nil` when it does not apply: another incarnation is stored,
    /// or the content is not newer than the stored checkpoint, or it is ahead of what the log holds (it
    /// includes changes whose write failed). Encoding is left to the caller so that it can happen off
    /// the writer thread.
    func checkpoint(dataSource name: String, incarnation: String, version: Int, encoded: [UInt8], retainVersions: Int) throws(StorageError) -> Int?
    /// A consistent copy of everything stored, as a file a store can be opened from (a backup).
    func backup() throws(StorageError) -> [UInt8]
    /// Makes everything written so far durable (the `periodic` sync mode calls it about once a second).
    func sync() throws(StorageError)
    /// Releases files and locks.
    func close()
}

extension Store {
    /// Encodes `content` and stores it as the data source's checkpoint (see the primitive above).
    public func checkpoint(dataSource name: String, incarnation: String, content: DataSourceContent, retainVersions: Int) throws(StorageError) -> Int? {
        try checkpoint(dataSource: name, incarnation: incarnation, version: content.version, encoded: StateCoding.encode(content), retainVersions: retainVersions)
    }
}

/// One committed change as a store writes it. Operations and contents are encoded by `StateCoding`
/// on the way in, so the writer thread only writes bytes.
public enum StoreRecord: Sendable {
    /// A new data source: `content` (encoded) is its first checkpoint, at `version`.
    case createDataSource(name: String, incarnation: String, version: Int, content: [UInt8])
    case dropDataSource(name: String)
    /// The operation that made `version`, and the event line views were sent for it (kept for views
    /// that resume; `nil` when it was too large to keep or made views reload everything).
    case change(dataSource: String, version: Int, operation: [UInt8], changes: [UInt8]?)
    case register(name: String, registration: [UInt8])
    case unregister(name: String)

    /// The bytes the record adds to its data source's log.
    public var logBytes: Int {
        switch self {
        case .change(_, _, let operation, let changes): return operation.count + (changes?.count ?? 0)
        case .createDataSource(_, _, _, let content): return content.count
        default: return 0
        }
    }
}

/// What a store holds.
public struct StoredState: Sendable {
    public var registrations: [Registration] = []
    public var dataSources: [StoredDataSource] = []

    public init(registrations: [Registration] = [], dataSources: [StoredDataSource] = []) {
        self.registrations = registrations
        self.dataSources = dataSources
    }
}

/// One stored data source: its checkpoint and the log after it.
public struct StoredDataSource: Sendable {
    public var name: String
    public var incarnation: String
    public var checkpoint: DataSourceContent
    /// The checkpoint's encoded size.
    public var checkpointBytes: Int
    /// The operations after the checkpoint, in version order, with their encoded sizes.
    public var tail: [(version: Int, operation: DataSourceOperation, bytes: Int)]
    /// The event lines kept for resuming views, by version, oldest first (`nil`: not kept).
    public var retainedChanges: [(version: Int, changes: [UInt8]?)]

    public init(
        name: String, incarnation: String, checkpoint: DataSourceContent, checkpointBytes: Int,
        tail: [(version: Int, operation: DataSourceOperation, bytes: Int)] = [], retainedChanges: [(version: Int, changes: [UInt8]?)] = []
    ) {
        self.name = name
        self.incarnation = incarnation
        self.checkpoint = checkpoint
        self.checkpointBytes = checkpointBytes
        self.tail = tail
        self.retainedChanges = retainedChanges
    }

    /// The bytes of the log tail a start-up replays.
    public var tailBytes: Int { tail.reduce(0) { $0 + $1.bytes } }
}

/// A store could not read or write.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The disk refused a write or a read (full, read-only, I/O error): the message has the OS error.
        case io
        /// Stored data does not read back (a damaged file, or not listd's).
        case corrupt
        /// The file was written by a newer listd.
        case newerSchema
        /// Another listd uses the state directory.
        case locked
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
