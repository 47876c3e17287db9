import CellCore
import DiffableCore

/// Where listd's state lasts: a log of committed changes per data source plus checkpoints, and the
/// registrations.
///
/// The server keeps its state in memory and writes it here; it reads a store only at start-up and to
/// undo a group of changes whose write failed. Every method is called from one thread at a time (the
/// server's writer thread, or start-up before it runs), except `maintain`, which runs on another
/// thread concurrently with them. Implementations: `SQLiteStore` (the embedded default, in
/// ListStoreSQLite) and `PostgresStore` (in ListStorePostgres), which several instances share
/// (`SharedStore`).
public protocol Store: AnyObject, Sendable {
    /// What kind of store it is, for `stats`: `sqlite`, `postgresql`.
    var kind: String { get }
    /// Everything stored: registrations in creation order, every data source's last checkpoint and the
    /// log records after it.
    func load() throws(StorageError) -> StoredState
    /// The stored state of the named data sources (absent ones are missing from the result) and, when
    /// `registrations` is true, the registrations: what undoing a failed write restores.
    func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState
    /// Writes the records as one transaction: all of them or, when it throws, none. Returns once the
    /// transaction is as durable as the store's sync mode promises.
    func write(_ records: [StoreRecord]) throws(StorageError)
    /// Writes the next part of a checkpoint: the data source's content, replacing its previous
    /// checkpoint, after which log records the checkpoint makes unnecessary are dropped (keeping the
    /// store's retention of versions for resuming views). A large checkpoint is written in parts of about
    /// `CheckpointWrite.partBytes`, so that no single call holds the writer thread for long: `.partial`
    /// means call again (other writes may come between); `.done` gives the checkpoint's size once it
    /// replaced the previous one. `.skipped` when it does not apply: another incarnation is stored, or
    /// the content is not newer than the stored checkpoint, or it is ahead of what the log holds (it
    /// includes changes whose write failed). Encoding is left to the caller so that it can happen off
    /// the writer thread.
    func writeCheckpoint(_ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress
    /// A consistent copy of everything stored, as a file a store can be opened from (a backup).
    func backup() throws(StorageError) -> [UInt8]
    /// Makes everything written so far durable (the `periodic` sync mode calls it about once a second).
    func sync() throws(StorageError)
    /// Whether `maintain` has work to do; the writer thread asks after each write.
    var needsMaintenance: Bool { get }
    /// Upkeep that runs on another thread than the writer's, concurrently with `write` (the SQLite store
    /// copies its write-ahead log into the database file here, so that no write waits for that copy).
    func maintain() throws(StorageError)
    /// Upkeep for the writer's thread when no write waits (the SQLite store finishes copying its
    /// write-ahead log here, so that the log starts over).
    func idle()
    /// Releases files and locks.
    func close()
}

extension Store {
    public var needsMaintenance: Bool { false }
    public func maintain() throws(StorageError) {}
    public func idle() {}

    /// Encodes `content` and writes it as the data source's checkpoint, all parts at once; its size, or
    /// `nil` when it does not apply (see `writeCheckpoint`).
    public func checkpoint(dataSource name: String, incarnation: String, content: DataSourceContent) throws(StorageError) -> Int? {
        var write = CheckpointWrite(dataSource: name, incarnation: incarnation, version: content.version, encoded: StateCoding.encode(content))
        while true {
            switch try writeCheckpoint(&write) {
            case .partial: continue
            case .done(let bytes): return bytes
            case .skipped: return nil
            }
        }
    }
}

/// A checkpoint on its way into a store (see `Store.writeCheckpoint`).
public struct CheckpointWrite: Sendable {
    /// The size of the parts a large checkpoint is written in.
    public static let partBytes = 256 << 10

    public let dataSource: String
    public let incarnation: String
    /// The version of the content.
    public let version: Int
    /// The content, encoded by `StateCoding`.
    public let encoded: [UInt8]
    /// How many bytes of `encoded` the store has written (the store's bookkeeping between parts).
    public var written = 0
    /// The checkpoint replaced the previous one; what remains is trimming the log (store bookkeeping).
    public var switched = false
    /// While trimming: the versions below this are gone from the log (store bookkeeping; `nil` until
    /// the store looked).
    public var trimmedBelow: Int?
    /// The oldest version whose event listd still retains for views that resume (`nil`: keep the whole
    /// retention): log records older than it and covered by the checkpoint are trimmed too, so that
    /// the store keeps no more of the change log than memory does (`changeLogBytes`, the owner's quota).
    public var keepFromVersion: Int?

    /// The newest version whose log records the trim after this checkpoint deletes, for a store that
    /// retains `retainVersions` versions.
    public func newestVersionToTrim(retainVersions: Int) -> Int {
        let byCount = version - retainVersions
        guard let keepFromVersion else { return byCount }
        return max(byCount, min(version, keepFromVersion - 1))
    }

    public init(dataSource: String, incarnation: String, version: Int, encoded: [UInt8]) {
        self.dataSource = dataSource
        self.incarnation = incarnation
        self.version = version
        self.encoded = encoded
    }

    /// Whether the checkpoint still applies to a data source stored as `incarnation` with its checkpoint
    /// at `checkpointVersion` and its log up to `loggedVersion`: the same incarnation, newer than the
    /// stored checkpoint, and not ahead of the log (content that includes changes whose write failed).
    public func applies(toIncarnation incarnation: String, checkpointVersion: Int, loggedVersion: Int) -> Bool {
        incarnation == self.incarnation && version > checkpointVersion && version <= max(checkpointVersion, loggedVersion)
    }

    /// The part a store writes next: its bytes, its position among the parts, where it ends in
    /// `encoded`, and whether it is the whole checkpoint (small enough for one write, stored without parts).
    public var nextPart: (bytes: [UInt8], position: Int, end: Int, isWhole: Bool) {
        let end = min(encoded.count, written + Self.partBytes)
        return (Array(encoded[written..<end]), written / Self.partBytes, end, written == 0 && end == encoded.count)
    }
}

/// How far `Store.writeCheckpoint` got.
public enum CheckpointProgress: Equatable, Sendable {
    /// A part was written; more remain.
    case partial
    /// The checkpoint replaced the previous one; its size in bytes.
    case done(bytes: Int)
    /// The checkpoint does not apply (and what was written of it is gone).
    case skipped
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
    /// The data source's whole content at `version` (after a snapshot was applied: its content is about
    /// the size of the operation, so it is stored as the checkpoint instead of a log record followed by
    /// a checkpoint); the `.change` record of that version carries no operation (`null`).
    case checkpoint(dataSource: String, version: Int, content: [UInt8])
    /// A registration made, or given another definition (stored in its place: an upsert), under its key
    /// (`Registration.key`: its owner's uid and its name).
    case register(name: String, registration: [UInt8])
    /// Deletes the registration stored under this key.
    case unregister(name: String)

    /// The bytes a start-up would replay for this record until a checkpoint covers it (the operation;
    /// the event line kept beside it is only read back for resuming views).
    public var replayBytes: Int {
        switch self {
        case .change(_, _, let operation, _): return operation.count
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
        /// The store holds another version of a data source than the write continues from (another
        /// writer got there first): nothing of the write was stored.
        case conflict
        /// The commit was sent but its outcome could not be learned in the time allowed (the database
        /// became unreachable meanwhile): the change may or may not be stored. The store learns which
        /// from the database once it answers again, and listd follows what it finds.
        case unknownOutcome
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
