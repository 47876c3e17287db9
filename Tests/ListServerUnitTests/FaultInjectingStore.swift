import Foundation
import ListEngine
import ListStore
import ListStoreSQLite
import NIOConcurrencyHelpers

/// A real SQLite store with faults on demand: each step (write, sync, the read a probe makes, a
/// checkpoint part, a backup) can fail its next calls or every call until healed, and writes can be
/// held on the writer thread (to pile mutations into the next group). Thread-safe: the writer thread,
/// the background thread and the test's thread all call it.
final class FaultInjectingStore: Store, @unchecked Sendable {
    enum Step: Hashable, Sendable {
        case write, sync, load, checkpoint, backup
    }

    struct InjectedFault: Error, CustomStringConvertible {
        let step: Step
        var description: String { "injected \(step) failure" }
    }

    let inner: SQLiteStore
    let directory: String
    private let lock = NIOLock()
    private let held = NSCondition()
    private var holding = false
    private var failNext: [Step: Int] = [:]
    private var failing: Set<Step> = []
    private var callCounts: [Step: Int] = [:]
    private var groupRecords: [Int] = []
    private var loadedNames: Set<String> = []

    /// A store in a new private directory under the system's temporary directory.
    init() throws {
        directory = NSTemporaryDirectory() + "listd-faults-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        inner = try SQLiteStore(path: directory + "/listd.sqlite3", sync: .always)
    }

    /// The same database again, as a restarted listd opens it (after `other` was closed).
    init(reopening other: FaultInjectingStore) throws {
        directory = other.directory
        ownsDirectory = false
        inner = try SQLiteStore(path: directory + "/listd.sqlite3", sync: .always)
    }

    private var ownsDirectory = true

    deinit { if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) } }

    /// The next `count` calls of `step` fail.
    func fail(_ step: Step, next count: Int = 1) { lock.withLock { failNext[step, default: 0] += count } }
    /// Every call of `step` fails until `heal`.
    func failAlways(_ step: Step) { lock.withLock { _ = failing.insert(step) } }
    func heal() { lock.withLock { failing = []; failNext = [:] } }

    /// Writes wait on the writer thread until `releaseWrites`.
    func holdWrites() {
        held.lock()
        holding = true
        held.unlock()
    }

    func releaseWrites() {
        held.lock()
        holding = false
        held.broadcast()
        held.unlock()
    }

    /// How many times `step` was called (writes: started, held ones included).
    func calls(_ step: Step) -> Int { lock.withLock { callCounts[step] ?? 0 } }
    /// The records of each successful write, in order.
    var groups: [Int] { lock.withLock { groupRecords } }
    /// The data sources read back by name (a durable server reads none after a failed write).
    var dataSourcesRead: Set<String> { lock.withLock { loadedNames } }

    /// Counts a call of `step` (held writes count as they arrive), then fails it if it should.
    private func enter(_ step: Step, counted: Bool = false) throws(StorageError) {
        let fails = lock.withLock { () -> Bool in
            if !counted { callCounts[step, default: 0] += 1 }
            if failing.contains(step) { return true }
            if let count = failNext[step], count > 0 {
                failNext[step] = count - 1
                return true
            }
            return false
        }
        if fails { throw StorageError(.io, "injected \(step) failure") }
    }

    // MARK: Store

    var kind: String { "sqlite" }

    func load() throws(StorageError) -> StoredState { try inner.load() }

    func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState {
        try enter(.load)
        lock.withLock { loadedNames.formUnion(names) }
        return try inner.load(dataSources: names, registrations: registrations)
    }

    func write(_ records: [StoreRecord]) throws(StorageError) {
        lock.withLock { callCounts[.write, default: 0] += 1 }
        held.lock()
        while holding { held.wait() }
        held.unlock()
        try enter(.write, counted: true)
        try inner.write(records)
        lock.withLock { groupRecords.append(records.count) }
    }

    func writeCheckpoint(_ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress {
        try enter(.checkpoint)
        return try inner.writeCheckpoint(&checkpoint)
    }

    func backup() throws(StorageError) -> [UInt8] {
        try enter(.backup)
        return try inner.backup()
    }

    func sync() throws(StorageError) {
        try enter(.sync)
        try inner.sync()
    }

    var needsMaintenance: Bool { inner.needsMaintenance }
    func maintain() throws(StorageError) { try inner.maintain() }
    func idle() { inner.idle() }
    func close() { inner.close() }
}
