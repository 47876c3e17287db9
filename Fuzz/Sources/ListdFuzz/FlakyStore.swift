import DiffableCore
import ListServer
import ListServerTestKit
import ListEngine
import ListStore
import ListStoreSQLite
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// The fuzzer's durable mode: a real SQLite store in a fresh private directory whose writes fail on a
/// schedule the input picks (`plan`, bits 3–5 of the mode byte): every `plan + 2`-th write fails, and
/// with plan 7 the read a failed write's probe makes fails too, so listd also refuses changes for a
/// while. Everything runs on the fuzzer's thread (the in-process server writes inline).
final class FlakyStore: Store, @unchecked Sendable {
    private let inner: SQLiteStore
    private let directory: String
    private let failEvery: Int
    private let failsReads: Bool
    private var writes = 0
    private var probes = 0
    /// Failures are injected only once this is set: the session's own setup (what root owns before an
    /// ordinary user's requests) must not fail.
    var injecting = false

    init(plan: UInt8) {
        var template = Array("/tmp/listd-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { violation("cannot make a state directory", request: []) }
        directory = String(cString: made)
        failEvery = Int(plan & 7) + 2
        failsReads = plan & 7 == 7
        do {
            inner = try SQLiteStore(path: directory + "/listd.sqlite3", sync: .periodic)
        } catch {
            violation("cannot open a SQLite store: \(error)", request: [])
        }
    }

    deinit {
        for name in ["listd.sqlite3", "listd.sqlite3-wal", "listd.sqlite3-shm"] { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    /// The stored state in `InProcessServer.stateEncoding`'s form.
    func storedEncoding() throws -> [UInt8] {
        let model = try StateModel(loading: inner.load())
        return InProcessServer.encoding(of: model)
    }

    var kind: String { "sqlite" }
    func load() throws(StorageError) -> StoredState { try inner.load() }

    func load(dataSources names: Set<String>, registrations: Bool) throws(StorageError) -> StoredState {
        guard injecting else { return try inner.load(dataSources: names, registrations: registrations) }
        probes += 1
        if failsReads && probes % 2 == 1 { throw StorageError(.io, "injected read failure") }
        return try inner.load(dataSources: names, registrations: registrations)
    }

    func write(_ records: [StoreRecord]) throws(StorageError) {
        guard injecting else { return try inner.write(records) }
        writes += 1
        if writes % failEvery == 0 { throw StorageError(.io, "injected write failure") }
        try inner.write(records)
    }

    func writeCheckpoint(_ checkpoint: inout CheckpointWrite) throws(StorageError) -> CheckpointProgress { try inner.writeCheckpoint(&checkpoint) }
    func backup() throws(StorageError) -> [UInt8] { try inner.backup() }
    func sync() throws(StorageError) { try inner.sync() }
    var needsMaintenance: Bool { false }
    func maintain() throws(StorageError) {}
    func idle() {}
    func close() { inner.close() }
}
