import CellCore
import ListStore
import NIOConcurrencyHelpers

/// A `SharedStore` in memory, shared by this instance (through `Store`) and a simulated other instance
/// (`commitAsOther`, `createAsOther`, …, which notify as PostgreSQL's notifications do). Reads can be
/// made to fail, the next write failed, notices held back; a change that does not continue the stored
/// version fails as a conflict, as PostgreSQL's does. Thread-safe: the writer thread, the follower's
/// reader thread and the test's thread all call it.
public final class MemorySharedStore: SharedStore, @unchecked Sendable {
    private struct Stored {
        var incarnation: String
        /// The checkpoint and its version; operations after it, encoded, by version.
        var checkpoint: [UInt8]
        var checkpointVersion: Int
        var operations: [(version: Int, operation: [UInt8])] = []
        var newest: Int { operations.last?.version ?? checkpointVersion }
    }

    private let lock = NIOLock()
    private var dataSources: [String: Stored] = [:]
    private var registrations: [(name: String, encoded: [UInt8])] = []
    private var notice: (@Sendable (StoreNotice) -> Void)?
    private var failingReads = false
    private var failNextWrite = false
    /// How many reads failed (`failReads`).
    public var readsFailed: Int { lock.withLock { failedReads } }
    private var failedReads = 0

    public init() {}

    /// Reads fail (a broken reading connection) until `healReads`.
    public func failReads() { lock.withLock { failingReads = true } }
    /// Reads go through again.
    public func healReads() { lock.withLock { failingReads = false } }
    /// The next write fails (as the store answering an I/O error).
    public func failWrite() { lock.withLock { failNextWrite = true } }

    private func read<Value>(_ body: () throws(StorageError) -> Value) throws(StorageError) -> Value {
        lock.lock()
        defer { lock.unlock() }
        if failingReads {
            failedReads += 1
            throw StorageError(.io, "injected read failure")
        }
        return try body()
    }

    // MARK: The other instance

    /// Another instance commits `operation` to `name` (its next version) and notifies (unless `notify`
    /// is false: its notice is late).
    public func commitAsOther(_ name: String, _ operation: DataSourceOperation, notify: Bool = true) {
        let version = lock.withLock { () -> Int in
            let version = dataSources[name]!.newest + 1
            dataSources[name]!.operations.append((version, StateCoding.encode(operation)))
            return version
        }
        if notify { send(.changed(dataSource: name, version: version)) }
    }

    /// Another instance creates a data source (empty, version 0) and notifies.
    public func createAsOther(_ name: String, incarnation: String) {
        lock.withLock {
            dataSources[name] = Stored(incarnation: incarnation, checkpoint: StateCoding.encode(DataSourceContent()), checkpointVersion: 0)
        }
        send(.dataSources)
    }

    /// Another instance drops a data source and notifies.
    public func dropAsOther(_ name: String) {
        _ = lock.withLock { dataSources.removeValue(forKey: name) }
        send(.dataSources)
    }

    /// Another instance registers (or redefines) a registration and notifies.
    public func registerAsOther(_ registration: Registration) {
        lock.withLock { registrations.append((registration.name, StateCoding.encode(registration))) }
        send(.registrations)
    }

    private func send(_ notice: StoreNotice) {
        let deliver = lock.withLock { self.notice }
        deliver?(notice)
    }

    // MARK: Store

    public var kind: String { "postgresql" }

    public func load() throws(StorageError) -> StoredState {
        try read { () throws(StorageError) in try state(names: nil, registrations: true) }
    }

    public func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState {
        try read { () throws(StorageError) in try state(names: names, registrations: registrations) }
    }

    private func state(names: Set<String>?, registrations withRegistrations: Bool) throws(StorageError) -> StoredState {
        var state = StoredState()
        if withRegistrations { state.registrations = try decodedRegistrations() }
        for name in dataSources.keys.sorted() where names?.contains(name) ?? true {
            state.dataSources.append(try stored(name, dataSources[name]!))
        }
        return state
    }

    private func decodedRegistrations() throws(StorageError) -> [Registration] {
        var decoded: [Registration] = []
        for entry in registrations { decoded.append(try StateCoding.decodeRegistration(entry.encoded)) }
        return decoded
    }

    private func stored(_ name: String, _ entry: Stored) throws(StorageError) -> StoredDataSource {
        var tail: [(version: Int, operation: DataSourceOperation, bytes: Int)] = []
        for operation in entry.operations { tail.append((operation.version, try StateCoding.decodeOperation(operation.operation), operation.operation.count)) }
        return StoredDataSource(
            name: name, incarnation: entry.incarnation, checkpoint: try StateCoding.decodeContent(entry.checkpoint),
            checkpointBytes: entry.checkpoint.count, tail: tail)
    }

    /// All the records or none; a change that does not continue the stored version is a conflict.
    public func write(_ records: [StoreRecord]) throws(StorageError) {
        lock.lock()
        defer { lock.unlock() }
        do {
            if failNextWrite {
                failNextWrite = false
                throw StorageError(.io, "injected write failure")
            }
            var sources = dataSources
            var registered = registrations
            for record in records {
                switch record {
                case .createDataSource(let name, let incarnation, let version, let content):
                    sources[name] = Stored(incarnation: incarnation, checkpoint: content, checkpointVersion: version)
                case .dropDataSource(let name):
                    sources[name] = nil
                case .change(let name, let version, let operation, _):
                    guard let entry = sources[name], entry.newest == version - 1 else {
                        throw StorageError(.conflict, "data source \(name) is not at version \(version - 1)")
                    }
                    sources[name]!.operations.append((version, operation))
                    _ = entry
                case .checkpoint(let name, let version, let content):
                    sources[name]!.checkpoint = content
                    sources[name]!.checkpointVersion = version
                    sources[name]!.operations.removeAll { $0.version <= version }
                case .register(let name, let registration):
                    // An upsert, as the real stores': a replaced definition keeps its place.
                    if let index = registered.firstIndex(where: { $0.name == name }) {
                        registered[index].encoded = registration
                    } else {
                        registered.append((name, registration))
                    }
                case .unregister(let name):
                    registered.removeAll { $0.name == name }
                }
            }
            dataSources = sources
            registrations = registered
        }
    }

    public func writeCheckpoint(_ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress { .skipped }
    public func backup() throws(StorageError) -> [UInt8] { throw StorageError(.io, "no backups in memory") }
    public func sync() throws(StorageError) {}
    public var needsMaintenance: Bool { false }
    public func maintain() throws(StorageError) {}
    public func idle() {}
    public func close() {}

    // MARK: SharedStore

    public func startFollowing(_ notice: @escaping @Sendable (StoreNotice) -> Void) {
        lock.withLock { self.notice = notice }
        notice(.resync)
    }

    public func stopFollowing() { lock.withLock { notice = nil } }
    public var reconnects: Int { 0 }

    public func changes(of name: String, after version: Int) throws(StorageError) -> FollowedChanges {
        try read { () throws(StorageError) -> FollowedChanges in
            guard let entry = dataSources[name] else { return .missing }
            guard version >= entry.checkpointVersion else { return .gap(incarnation: entry.incarnation) }
            var changes: [FollowedChange] = []
            for operation in entry.operations where operation.version > version {
                changes.append(FollowedChange(version: operation.version, operation: try StateCoding.decodeOperation(operation.operation), changes: nil))
            }
            return .changes(incarnation: entry.incarnation, changes)
        }
    }

    public func versions() throws(StorageError) -> [StoredVersion] {
        try read { () throws(StorageError) in
            dataSources.keys.sorted().map { StoredVersion(name: $0, incarnation: dataSources[$0]!.incarnation, version: dataSources[$0]!.newest) }
        }
    }

    public func storedRegistrations() throws(StorageError) -> [Registration] {
        try read { () throws(StorageError) in try decodedRegistrations() }
    }

    public func dataSource(named name: String, atVersion version: Int?) throws(StorageError) -> StoredDataSource? {
        try read { () throws(StorageError) in try dataSources[name].map { entry throws(StorageError) in try stored(name, entry) } }
    }
}
