import ListStore
import Logging
import ListWire
import NIOCore
import NIOPosix

/// Durable commits with group commit.
///
/// A mutation is applied to the in-memory state at once (so the next one is validated against it), and
/// its records join the *open group*. The writer thread writes one group at a time as one transaction;
/// the open group keeps filling while the previous one is written and is handed over the moment the
/// writer is free (or at the end of the event loop's turn when it was idle). So the event loop never
/// waits on the disk, the writer never waits for the event loop, and one fsync covers every mutation that
/// arrived while the previous one ran. A mutation's reply and events go out once its group is durable.
///
/// A request that only reads must not see a change that is not durable yet (it could still be undone):
/// it waits (`park`) until nothing is open or being written. While a read waits, new mutations wait
/// behind it, so the groups drain and the read runs after at most two writes.
///
/// When a write fails, the store rolls the transaction back; the writer reloads what that group and
/// the open one touched, the state is restored to it, and every mutation of both groups fails with
/// `storage-failed`.
final class CommitPipeline {
    let store: Store
    private let loop: EventLoop
    let writer: NIOThreadPool
    /// Encodes checkpoints, so that the writer only writes them.
    let encoder: NIOThreadPool
    private let logger: Logger
    /// Log records kept for resuming, per data source, when a checkpoint trims the log.
    var retainVersions = 10_000

    /// Being written by the writer thread.
    private(set) var isWriting = false
    /// A failed write is being undone: every request waits.
    private var restoring = false
    /// The mutations being undone (they fail once the state is restored).
    private var undoing: [Pending] = []
    private var open: [Pending] = []
    /// The group the writer thread has.
    private var writing: [Pending] = []
    private var flushScheduled = false
    private var parked: [() -> Void] = []
    /// Set when a failed write could not be undone: writes fail until listd restarts.
    private(set) var brokenReason: String?
    private var wroteSinceSync = false
    /// Per data source: the bytes logged since its last checkpoint, and that checkpoint's size.
    private var logBytes: [String: Int] = [:]
    private var checkpointBytes: [String: Int] = [:]
    private var checkpointing: Set<String> = []
    /// The model, to capture contents for checkpoints and to restore after a failed write.
    private let model: StateModel
    private let restore: (StoredState, Set<String>, Bool) -> Void

    /// Counters for `stats`.
    private(set) var groupsWritten = 0
    private(set) var recordsWritten = 0
    private(set) var checkpointsWritten = 0
    private(set) var writeFailures = 0
    /// Time the writer spent in transactions, and from handing a group over to hearing back.
    private(set) var writeTime = Duration.zero
    private(set) var roundTripTime = Duration.zero

    struct Pending {
        var records: [StoreRecord]
        var dataSources: Set<String>
        var registrations: Bool
        var done: Deferred<WireError?>
    }

    init(
        store: Store, model: StateModel, loop: EventLoop, logger: Logger,
        restore: @escaping (StoredState, Set<String>, Bool) -> Void
    ) {
        self.store = store
        self.model = model
        self.loop = loop
        self.logger = logger
        self.restore = restore
        writer = NIOThreadPool(numberOfThreads: 1)
        writer.start()
        encoder = NIOThreadPool(numberOfThreads: 1)
        encoder.start()
    }

    /// Starts the once-a-second sync of the `periodic` mode. On the event loop.
    func startPeriodicSync() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in bound.value.syncIfNeeded() }
    }

    /// Remembers what was loaded, to schedule the next checkpoints.
    func loaded(_ stored: StoredState) {
        for dataSource in stored.dataSources {
            checkpointBytes[dataSource.name] = dataSource.checkpointBytes
            logBytes[dataSource.name] = dataSource.tailBytes
        }
    }

    /// Whether a request must wait before it runs: a read while changes are not durable; a mutation
    /// while requests wait before it, or while a failed write is being undone.
    func mustPark(mutation: Bool) -> Bool {
        if restoring || !parked.isEmpty { return true }
        return !mutation && (isWriting || !open.isEmpty)
    }

    /// Runs `body` once nothing is open or being written (in arrival order with the other waiting requests).
    func park(_ body: @escaping () -> Void) {
        parked.append(body)
    }

    /// Adds a committed mutation's records to the open group; `done` resolves with `nil` once they are
    /// durable, or with the error that undid them.
    func add(_ records: [StoreRecord], dataSources: Set<String>, registrations: Bool) -> Deferred<WireError?> {
        let done = Deferred<WireError?>()
        if let brokenReason {
            // Not reachable in practice: `commit` refuses first. Kept so a record is never silently dropped.
            done.resolve(WireError(.storageFailed, brokenReason))
            return done
        }
        open.append(Pending(records: records, dataSources: dataSources, registrations: registrations, done: done))
        if !flushScheduled && !isWriting {
            flushScheduled = true
            let bound = NIOLoopBound(self, eventLoop: loop)
            loop.execute { bound.value.flush() }
        }
        return done
    }

    /// Writes the open group.
    private func flush() {
        flushScheduled = false
        guard !isWriting, !restoring, !open.isEmpty else { return }
        writing = open
        open = []
        isWriting = true
        let records = writing.flatMap(\.records)
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        let handedOver = ContinuousClock.now
        writer.runIfActive(eventLoop: loop) { () throws -> Duration in
            let start = ContinuousClock.now
            try store.write(records)
            return ContinuousClock.now - start
        }.whenComplete { result in
            let pipeline = bound.value
            if case .success(let writing) = result {
                pipeline.writeTime += writing
                pipeline.roundTripTime += ContinuousClock.now - handedOver
            }
            pipeline.written(result.map { _ in }, records: records)
        }
    }

    /// On the event loop, once the writer is done with the group in `writing`.
    private func written(_ result: Result<Void, Error>, records: [StoreRecord]) {
        let group = writing
        writing = []
        isWriting = false
        switch result {
        case .success:
            groupsWritten += 1
            recordsWritten += records.count
            wroteSinceSync = true
            for record in records { account(record) }
            for pending in group { pending.done.resolve(nil) }
            if !open.isEmpty {
                flush()  // the writer goes straight on with what arrived meanwhile
            } else {
                runParked()
            }
            scheduleCheckpoints()
        case .failure(let error):
            writeFailures += 1
            undo([group, open], error: WireError(.storageFailed, "The change was not stored: \(error)"))
        }
    }

    /// After a failed write: reloads what the failed group and the open one touched from the store (on
    /// the writer thread), restores the state to it, fails every mutation of both groups, then runs what
    /// waited. Requests wait meanwhile.
    private func undo(_ groups: [[Pending]], error: WireError) {
        restoring = true
        open = []
        let pending = groups.flatMap { $0 }
        undoing = pending
        let touched = pending.reduce(into: Set<String>()) { $0.formUnion($1.dataSources) }
        let registrations = pending.contains { $0.registrations }
        logger.error("storage write failed; undoing its changes", metadata: ["error": "\(error.message)", "changes": "\(pending.count)"])
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer.runIfActive(eventLoop: loop) { () throws -> StoredState in
            try store.load(dataSources: touched, registrations: registrations)
        }.whenComplete { result in
            let pipeline = bound.value
            switch result {
            case .success(let stored):
                pipeline.restore(stored, touched, registrations)
            case .failure(let reloadError):
                pipeline.brokenReason = "A write failed (\(error.message)) and reloading the state failed too (\(reloadError)); restart listd."
                pipeline.logger.critical("cannot undo a failed write", metadata: ["error": "\(reloadError)"])
            }
            pipeline.restoring = false
            let undone = pipeline.undoing
            pipeline.undoing = []
            for entry in undone { entry.done.resolve(error) }
            pipeline.runParked()
        }
    }

    /// Runs the requests that waited, in order (a read may park again behind a mutation that ran before it).
    private func runParked() {
        let waiting = parked
        parked = []
        for body in waiting {
            if !parked.isEmpty {
                parked.append(body)  // keep the order: something before it parked again
            } else {
                body()
            }
        }
    }

    private func account(_ record: StoreRecord) {
        switch record {
        case .createDataSource(let name, _, _, let content):
            checkpointBytes[name] = content.count
            logBytes[name] = 0
        case .dropDataSource(let name):
            checkpointBytes[name] = nil
            logBytes[name] = nil
        case .change(let name, _, _, _):
            logBytes[name, default: 0] += record.logBytes
        default:
            break
        }
    }

    /// Checkpoints every data source whose log since its checkpoint has grown past half the checkpoint's
    /// size (at least 1 MiB): start-up replays at most that much, and the log stays a fraction of the
    /// state. The content is captured now and encoded and written on the writer thread.
    private func scheduleCheckpoints() {
        for (name, bytes) in logBytes where bytes >= max(1 << 20, (checkpointBytes[name] ?? 0) / 2) && !checkpointing.contains(name) {
            guard let dataSource = model.dataSources[name] else { continue }
            checkpointing.insert(name)
            let content = dataSource.content
            let incarnation = dataSource.incarnation
            let store = self.store
            let retain = retainVersions
            let covered = bytes
            let bound = NIOLoopBound(self, eventLoop: loop)
            let writer = self.writer
            let loop = self.loop
            // Encoded on its own thread (a large data source takes a while), written by the writer
            // between two groups.
            encoder.runIfActive(eventLoop: loop) { StateCoding.encode(content) }.flatMap { encoded in
                writer.runIfActive(eventLoop: loop) { () throws -> Int? in
                    try store.checkpoint(dataSource: name, incarnation: incarnation, version: content.version, encoded: encoded, retainVersions: retain)
                }
            }.whenComplete { result in
                bound.value.checkpointed(name, incarnation: incarnation, covered: covered, result)
            }
        }
    }

    private func checkpointed(_ name: String, incarnation: String, covered: Int, _ result: Result<Int?, Error>) {
        checkpointing.remove(name)
        switch result {
        case .success(nil):
            break  // not applicable any more (dropped, or a failed write made the content run ahead)
        case .success(let size?):
            checkpointsWritten += 1
            if model.dataSources[name]?.incarnation == incarnation {
                checkpointBytes[name] = size
                logBytes[name] = max(0, (logBytes[name] ?? 0) - covered)
            }
        case .failure(let error):
            logger.warning("checkpoint failed; the log keeps growing until one succeeds", metadata: ["dataSource": "\(name)", "error": "\(error)"])
        }
    }

    private func syncIfNeeded() {
        guard wroteSinceSync else { return }
        wroteSinceSync = false
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer.runIfActive(eventLoop: loop) { () throws in try store.sync() }.whenFailure { error in
            bound.value.wroteSinceSync = true
            bound.value.logger.error("periodic sync failed", metadata: ["error": "\(error)"])
        }
    }

    /// A backup of the store, made by the writer between two groups; `done` runs on the event loop.
    func backup(_ done: @escaping (Result<[UInt8], Error>) -> Void) {
        let store = self.store
        let bound = NIOLoopBound(done, eventLoop: loop)
        writer.runIfActive(eventLoop: loop) { () throws -> [UInt8] in try store.backup() }.whenComplete { bound.value($0) }
    }

    /// Whether nothing is open or being written (the server waits for this before it stops).
    var isIdle: Bool { !isWriting && open.isEmpty && !restoring }

    /// Syncs and closes the store once the writer has done what it has (after `isIdle`).
    static func close(writer: NIOThreadPool, encoder: NIOThreadPool, store: Store) async {
        try? await encoder.shutdownGracefully()
        _ = try? await writer.runIfActive { try store.sync() }
        try? await writer.shutdownGracefully()
        store.close()
    }
}
