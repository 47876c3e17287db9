import ListStore
import ListStoreSQLite
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#endif

/// A real SQLite store (in a private temporary directory) that fails on demand, for tests and the
/// fuzzer. Each step (a write, a sync, the read a probe makes, a checkpoint part, a backup) can fail:
///
/// - its next calls (`fail(_:next:)`), or every call until `heal()` (`failAlways(_:)`);
/// - on a schedule (`fail(_:every:first:)`): every `period`-th call, counted from when it was set;
/// - only while `isArmed` (a harness's own setup can run first, disarmed, and fail nothing).
///
/// Writes can also be held on the writer thread (`holdWrites()`), to pile the mutations that arrive
/// meanwhile into the next group. Thread-safe: a writer thread, a background thread and the test's
/// thread all call it.
public final class FaultInjectingStore: Store, @unchecked Sendable {
    /// A step of the store that can be made to fail.
    public enum Step: Hashable, Sendable {
        /// `write(_:)`: a group's transaction.
        case write
        /// `sync()`.
        case sync
        /// `load(dataSources:registrations:)`: what a probe reads after a failed write.
        case load
        /// `writeCheckpoint(_:)`, each part.
        case checkpoint
        /// `backup()`.
        case backup
    }

    /// The store behind the faults (read it to see what is stored, past any fault).
    public let inner: SQLiteStore
    /// The directory holding the database; removed with the store that made it.
    public let directory: String
    private let ownsDirectory: Bool
    private let lock = NIOLock()
    /// Whether writes wait (`true`) until `releaseWrites`.
    private let held = ConditionLock(value: false)
    // Guarded by `lock`.
    private var armed = true
    private var failNext: [Step: Int] = [:]
    private var failing: Set<Step> = []
    private var schedules: [Step: (period: Int, first: Int, calls: Int)] = [:]
    private var callCounts: [Step: Int] = [:]
    private var groupRecords: [Int] = []
    private var loadedNames: Set<String> = []

    /// A store in a new private directory under `/tmp`, syncing as `sync` says.
    public init(sync: SQLiteStore.SyncMode = .always) throws {
        var template = Array("/tmp/listd-store-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw StorageError(.io, "cannot make a temporary directory (errno \(errno))") }
        directory = String(cString: made)
        ownsDirectory = true
        inner = try SQLiteStore(path: directory + "/listd.sqlite3", sync: sync)
    }

    /// The same database again, as a restarted listd opens it (after `other` was closed). The
    /// directory stays `other`'s to remove.
    public init(reopening other: FaultInjectingStore, sync: SQLiteStore.SyncMode = .always) throws {
        directory = other.directory
        ownsDirectory = false
        inner = try SQLiteStore(path: directory + "/listd.sqlite3", sync: sync)
    }

    deinit {
        guard ownsDirectory else { return }
        for name in ["listd.sqlite3", "listd.sqlite3-wal", "listd.sqlite3-shm", "listd.sqlite3-journal"] { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    // MARK: Faults

    /// The next `count` calls of `step` fail.
    public func fail(_ step: Step, next count: Int = 1) { lock.withLock { failNext[step, default: 0] += count } }

    /// Every call of `step` fails until `heal()`.
    public func failAlways(_ step: Step) { lock.withLock { _ = failing.insert(step) } }

    /// From now on the `first`-th call of `step` fails, then every `period`-th after it (calls counted
    /// while armed only), until `heal()`. E.g. `every: 3, first: 3` fails the 3rd, 6th, 9th… call.
    public func fail(_ step: Step, every period: Int, first: Int) {
        precondition(period > 0 && first > 0, "a schedule needs a positive period and first call")
        lock.withLock { schedules[step] = (period, first, 0) }
    }

    /// Forgets every fault: no call fails until another is set (held writes stay held).
    public func heal() {
        lock.withLock {
            failing = []
            failNext = [:]
            schedules = [:]
        }
    }

    /// Whether faults are injected (default `true`): while disarmed every call goes through and
    /// scheduled calls are not counted.
    public var isArmed: Bool {
        get { lock.withLock { armed } }
        set { lock.withLock { armed = newValue } }
    }

    /// Writes wait on the writer thread until `releaseWrites()` (they count as calls on arrival).
    public func holdWrites() {
        held.lock()
        held.unlock(withValue: true)
    }

    /// Lets held writes (and the next ones) go on.
    public func releaseWrites() {
        held.lock()
        held.unlock(withValue: false)
    }

    // MARK: What happened

    /// How many times `step` was called (writes: started, held ones included).
    public func calls(_ step: Step) -> Int { lock.withLock { callCounts[step] ?? 0 } }
    /// The number of records of each successful write, in order.
    public var groups: [Int] { lock.withLock { groupRecords } }
    /// The data sources read back by name (a durable server reads none after a failed write).
    public var dataSourcesRead: Set<String> { lock.withLock { loadedNames } }

    /// Counts a call of `step` (unless `counted` already), then fails it if a fault says so.
    private func enter(_ step: Step, counted: Bool = false) throws(StorageError) {
        let fails = lock.withLock { () -> Bool in
            if !counted { callCounts[step, default: 0] += 1 }
            guard armed else { return false }
            if failing.contains(step) { return true }
            if let count = failNext[step], count > 0 {
                failNext[step] = count - 1
                return true
            }
            guard var schedule = schedules[step] else { return false }
            schedule.calls += 1
            schedules[step] = schedule
            return schedule.calls >= schedule.first && (schedule.calls - schedule.first) % schedule.period == 0
        }
        if fails { throw StorageError(.io, "injected \(step) failure") }
    }

    // MARK: Store

    public var kind: String { inner.kind }

    public func load() throws(StorageError) -> StoredState { try inner.load() }

    public func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState {
        try enter(.load)
        lock.withLock { loadedNames.formUnion(names) }
        return try inner.load(dataSources: names, registrations: registrations)
    }

    public func write(_ records: [StoreRecord]) throws(StorageError) {
        lock.withLock { callCounts[.write, default: 0] += 1 }
        held.lock(whenValue: false)
        held.unlock()
        try enter(.write, counted: true)
        try inner.write(records)
        lock.withLock { groupRecords.append(records.count) }
    }

    public func writeCheckpoint(_ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress {
        try enter(.checkpoint)
        return try inner.writeCheckpoint(&checkpoint)
    }

    public func backup() throws(StorageError) -> [UInt8] {
        try enter(.backup)
        return try inner.backup()
    }

    public func sync() throws(StorageError) {
        try enter(.sync)
        try inner.sync()
    }

    public var needsMaintenance: Bool { inner.needsMaintenance }
    public func maintain() throws(StorageError) { try inner.maintain() }
    public func idle() { inner.idle() }
    public func close() { inner.close() }
}
