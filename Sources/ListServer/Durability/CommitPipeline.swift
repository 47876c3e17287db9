import CSystemd
import ListStore
import Logging
import ListWire
import NIOCore
import NIOPosix

/// Durable commits with group commit.
///
/// A mutation is applied to the in-memory state at once (so the next one is validated against it), and
/// its records join the writer's *open group* (`GroupWriter`), which the writer thread takes and writes
/// as one transaction whenever it is free. So one fsync covers every mutation that arrived while the
/// previous one ran, the event loop never waits on the disk, and the writer never waits for the loop.
/// A mutation's reply and events go out once its group is durable.
///
/// A request that only reads must not see a change that is not durable yet (it could still be undone):
/// it waits (`park`) until no mutation is in flight. While a read waits, new mutations wait behind it,
/// so the groups drain and the read runs after at most two writes.
///
/// When a write fails, the store rolls the transaction back; the pipeline reloads what that group and
/// the ones after it touched, the state is restored to it, and every one of those mutations fails with
/// `storage-failed`. With a shared store (several instances), the state is restored to the versions
/// the views have seen, caught up with what the other instances committed, and when the write failed
/// because another instance got there first, the mutations fail with a *conflict* that the router
/// answers by running them again on the caught-up state.
final class CommitPipeline {
    let store: Store
    private let loop: EventLoop
    private(set) var writer: GroupWriter!
    /// Encodes checkpoints and runs the store's upkeep, so that the writer only writes.
    let background: NIOThreadPool
    private let logger: Logger

    /// A failed write is being undone: every request waits.
    private var restoring = false
    /// The mutations handed to the writer and not yet durable, oldest first (the writer writes them in
    /// this order, so a report of `n` mutations is the first `n`).
    private var inFlight: [Pending] = []
    /// The mutations being undone (they fail once the state is restored).
    private var undoing: [Pending] = []
    /// While undoing: the versions the views of the touched data sources have seen (-1: it did not exist).
    private var seenVersions: [String: Int] = [:]
    private var parked: [() -> Void] = []
    /// Set while the state cannot be restored after a failed write because the store cannot be read
    /// (a database that went away): requests fail with `storage-failed` and this reason instead of
    /// seeing changes that were not stored, and listd tries again with backoff until the store answers.
    private(set) var unavailableReason: String?
    /// Times the store was read again after being unavailable (for `stats`).
    private(set) var restoreRetries = 0
    /// While `unavailableReason` is set: the data sources (and whether the registrations) whose memory
    /// holds changes that were not stored. The others are as stored, and reads of them go on.
    private(set) var unrestoredDataSources: Set<String> = []
    private(set) var unrestoredRegistrations = false
    private var wroteSinceSync = false
    /// Per data source: the operation bytes logged since its last checkpoint (what a start-up would
    /// replay), and that checkpoint's size.
    private var logBytes: [String: Int] = [:]
    private var checkpointBytes: [String: Int] = [:]
    private var checkpointing: Set<String> = []
    /// The model, to capture contents for checkpoints and to restore after a failed write.
    private let model: StateModel
    /// Makes the served state what was read back: the stored state, the data sources (and whether the
    /// registrations) it is for, and the versions of those data sources the views have seen.
    private let restore: (StoredState, Set<String>, Bool, [String: Int]) -> Void
    /// With a shared store: brings the named data sources (and the registrations) up to what the other
    /// instances committed; resolves once done (after a restore, before the undone mutations fail).
    var catchUp: ((Set<String>, Bool) -> Deferred<Void>)?
    /// Called once a group is durable with the data sources it touched (the follower then applies what
    /// other instances committed meanwhile, which it could not while the local change was in flight).
    var durable: ((Set<String>) -> Void)?
    /// Mutations in flight per data source, and those that change registrations.
    private var inFlightPerDataSource: [String: Int] = [:]
    private var registrationsInFlight = 0

    /// Counters for `stats`.
    private(set) var groupsWritten = 0
    private(set) var recordsWritten = 0
    private(set) var mutationsWritten = 0
    private(set) var checkpointsWritten = 0
    private(set) var writeFailures = 0
    /// Failed writes because another instance committed to the data source first.
    private(set) var conflicts = 0
    /// Time the writer spent in transactions, and the time mutations waited to be durable (summed).
    private(set) var writeTime = Duration.zero
    private(set) var waitTime = Duration.zero

    struct Pending {
        var dataSources: Set<String>
        /// The version of the data source before the mutation (`nil`: it did not exist, or none).
        var previousVersion: Int?
        var registrations: Bool
        /// The mutation's number, in the order of `add`.
        var sequence: Int
        var added: ContinuousClock.Instant
        var done: Deferred<WireError?>
    }

    init(
        store: Store, model: StateModel, loop: EventLoop, logger: Logger,
        restore: @escaping (StoredState, Set<String>, Bool, [String: Int]) -> Void
    ) {
        self.store = store
        self.model = model
        self.loop = loop
        self.logger = logger
        self.restore = restore
        background = NIOThreadPool(numberOfThreads: 1)
        background.start()
        // Encoding a large checkpoint takes a while; on a small machine it must not take the CPU from
        // the event loop or the writer (a writer waiting for a core is a request waiting for its reply).
        background.submit { _ in _ = listd_set_thread_niceness(10) }
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer = GroupWriter(store: store, loop: loop) { report in bound.value.written(report) }
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
        return !mutation && !inFlight.isEmpty
    }

    /// Runs `body` once no mutation is in flight (in arrival order with the other waiting requests).
    func park(_ body: @escaping () -> Void) {
        parked.append(body)
    }

    /// Hands a committed mutation's records to the writer; `done` resolves with `nil` once they are
    /// durable, or with the error that undid them.
    func add(_ records: [StoreRecord], dataSources: Set<String>, previousVersion: Int?, registrations: Bool) -> Deferred<WireError?> {
        let done = Deferred<WireError?>()
        if let unavailableReason {
            // Not reachable in practice: `commit` refuses first. Kept so a record is never silently dropped.
            done.resolve(WireError(.storageFailed, unavailableReason))
            return done
        }
        inFlight.append(
            Pending(
                dataSources: dataSources, previousVersion: previousVersion, registrations: registrations, sequence: nextSequence, added: .now,
                done: done))
        nextSequence += 1
        track(inFlight[inFlight.count - 1], by: 1)
        for record in records { account(record) }
        writer.add(records)
        return done
    }

    /// Whether a mutation of the data source is in flight (then what other instances committed waits).
    /// A data source whose failed write is being undone counts as in flight until it is restored: its
    /// memory still holds the changes that were not stored.
    func hasInFlight(dataSource name: String) -> Bool {
        inFlightPerDataSource[name] != nil || undoingDataSources.contains(name) || unrestoredDataSources.contains(name)
    }

    /// Whether a mutation of the registrations is in flight (or being undone).
    var hasRegistrationsInFlight: Bool { registrationsInFlight > 0 || undoingRegistrations || unrestoredRegistrations }

    /// What the failed write being undone touched (until it is restored).
    private var undoingDataSources: Set<String> = []
    private var undoingRegistrations = false

    private func track(_ pending: Pending, by step: Int) {
        for name in pending.dataSources {
            let count = inFlightPerDataSource[name, default: 0] + step
            inFlightPerDataSource[name] = count > 0 ? count : nil
        }
        if pending.registrations { registrationsInFlight += step }
    }

    /// On the event loop, after the writer wrote (or failed to write) the oldest mutations in flight.
    private func written(_ report: GroupWriter.Report) {
        switch report.result {
        case .success(let duration):
            groupsWritten += 1
            recordsWritten += report.records
            mutationsWritten += report.mutations
            writeTime += duration
            wroteSinceSync = true
            let now = ContinuousClock.now
            // Copied out before the removal, so that the removal shifts the rest in place.
            let group = Array(inFlight[..<report.mutations])
            inFlight.removeFirst(report.mutations)
            var touched = Set<String>()
            for pending in group {
                waitTime += now - pending.added
                track(pending, by: -1)
                touched.formUnion(pending.dataSources)
                pending.done.resolve(nil)
            }
            if let last = group.last { durableSequence = last.sequence }
            let ready = awaitingDurable.filter { $0.sequence <= durableSequence }
            awaitingDurable.removeAll { $0.sequence <= durableSequence }
            for entry in ready { entry.promise.succeed(()) }
            if inFlight.isEmpty { runParked() }
            durable?(touched)
            scheduleCheckpoints()
            if report.needsMaintenance { maintain() }
        case .failure(let error):
            writeFailures += 1
            if (error as? StorageError)?.kind == .conflict {
                conflicts += 1
                // Another instance committed first: once caught up, the router runs the mutations again.
                undo(error: WireError(.storageFailed, "The change was not stored: \(error)", details: ["conflict": true]))
            } else {
                undo(error: WireError(.storageFailed, "The change was not stored: \(error)"))
            }
        }
    }

    /// After a failed write (the writer takes no group meanwhile): reloads what the failed group and
    /// every later mutation touched from the store (on the writer thread), restores the state to it,
    /// fails all of them, then lets the writer and the waiting requests go on. Requests wait meanwhile.
    private func undo(error: WireError) {
        restoring = true
        writer.discardOpen()
        let pending = inFlight
        undoing = pending
        inFlight = []
        for entry in pending { track(entry, by: -1) }
        let touched = pending.reduce(into: Set<String>()) { $0.formUnion($1.dataSources) }
        let registrations = pending.contains { $0.registrations }
        undoingDataSources = touched
        undoingRegistrations = registrations
        let waiting = awaitingDurable
        awaitingDurable = []
        for entry in waiting { entry.promise.fail(WriteFailedBefore()) }
        // The versions before the first undone mutation of each data source: what its views have seen.
        for entry in pending.reversed() {
            for name in entry.dataSources { seenVersions[name] = entry.previousVersion ?? -1 }
        }
        for name in touched { logBytes[name] = nil }  // unknown until a checkpoint; scheduled again below
        logger.error("storage write failed; undoing its changes", metadata: ["error": "\(error.message)", "changes": "\(pending.count)"])
        reload(touched, registrations: registrations, after: error, delay: .milliseconds(100))
    }

    /// Reads what the failed group and the later mutations touched back from the store and restores
    /// it. When the store cannot be read (it is unreachable), the failed mutations are answered at once
    /// and listd tries again after `delay` (doubling up to 5 s); meanwhile `unavailableReason` makes
    /// requests fail instead of reading the unrestored state.
    private func reload(_ touched: Set<String>, registrations: Bool, after error: WireError, delay: TimeAmount) {
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        let seen = seenVersions
        writer.perform { () throws -> StoredState in
            guard let shared = store as? SharedStore else { return try store.load(dataSources: touched, registrations: registrations) }
            // The versions the views have seen, when the store can still make them: the follower then
            // applies what other instances committed since, change by change, as their views got it.
            var state = StoredState()
            if registrations { state.registrations = try shared.storedRegistrations() }
            for name in touched.sorted() {
                let version = seen[name].flatMap { $0 >= 0 ? $0 : nil }
                if let stored = try shared.dataSource(named: name, atVersion: version) { state.dataSources.append(stored) }
            }
            return state
        }.whenComplete { result in
            let pipeline = bound.value
            let undone = pipeline.undoing
            pipeline.undoing = []
            switch result {
            case .success(let stored):
                pipeline.restore(stored, touched, registrations, seen)
                pipeline.loaded(stored)
                if pipeline.unavailableReason != nil {
                    pipeline.logger.notice("the store answers again; the state is restored", metadata: ["retries": "\(pipeline.restoreRetries)"])
                }
                pipeline.unavailableReason = nil
                pipeline.unrestoredDataSources = []
                pipeline.unrestoredRegistrations = false
            case .failure(let reloadError):
                pipeline.undoingDataSources = []
                pipeline.undoingRegistrations = false
                pipeline.unrestoredDataSources = touched
                pipeline.unrestoredRegistrations = registrations
                pipeline.unavailableReason =
                    "A write failed (\(error.message)) and the stored state cannot be read back (\(reloadError)); listd retries until the store answers."
                pipeline.logger.error(
                    "cannot read the store to undo a failed write; retrying", metadata: ["error": "\(reloadError)", "retryMilliseconds": "\(delay.nanoseconds / 1_000_000)"])
                for entry in undone { entry.done.resolve(error) }
                // Requests that were waiting fail now too, rather than wait for the store.
                pipeline.runParked()
                pipeline.loop.scheduleTask(in: delay) {
                    bound.value.restoreRetries += 1
                    bound.value.reload(touched, registrations: registrations, after: error, delay: min(delay * 2, .seconds(5)))
                }
                return
            }
            pipeline.seenVersions = [:]
            pipeline.undoingDataSources = []
            pipeline.undoingRegistrations = false
            let finish = {
                let pipeline = bound.value
                pipeline.restoring = false
                for entry in undone { entry.done.resolve(error) }
                pipeline.writer.resume()
                pipeline.runParked()
            }
            if let catchUp = pipeline.catchUp {
                catchUp(touched, registrations).whenResolved { finish() }
            } else {
                finish()
            }
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
            logBytes[name, default: 0] += record.replayBytes
        case .checkpoint(let name, _, let content):
            checkpointBytes[name] = content.count
            logBytes[name] = 0
        default:
            break
        }
    }

    /// Checkpoints every data source whose operations logged since its checkpoint have grown past half
    /// the checkpoint's size (at least 1 MiB): start-up replays at most that much, and the checkpoints
    /// written stay a fraction of what is logged. The content is captured now (with the mutations still
    /// in flight: the store skips a checkpoint that would run ahead of its log, and the next group
    /// schedules it again), encoded on the background thread and written by the writer between two groups.
    private func scheduleCheckpoints() {
        for (name, bytes) in logBytes where bytes >= max(1 << 20, (checkpointBytes[name] ?? 0) / 2) && !checkpointing.contains(name) {
            guard let dataSource = model.dataSources[name] else { continue }
            // With a shared store, memory holding a change in flight need not be what the store will
            // hold at that version (another instance may win it): the checkpoint is written only once
            // the last mutation in flight now is durable, and dropped when a write fails before.
            let durableFirst = store is SharedStore && hasInFlight(dataSource: name) ? inFlight.last?.sequence : nil
            checkpointing.insert(name)
            let content = dataSource.content
            let incarnation = dataSource.incarnation
            let store = self.store
            let covered = bytes
            let bound = NIOLoopBound(self, eventLoop: loop)
            let writer = self.writer!
            background.runIfActive(eventLoop: loop) { StateCoding.encode(content) }.flatMap { encoded in
                bound.value.whenDurable(durableFirst).map { encoded }
            }.flatMap { encoded in
                let checkpoint = CheckpointBox(
                    CheckpointWrite(dataSource: name, incarnation: incarnation, version: content.version, encoded: encoded))
                return writer.performInSteps { () throws -> CheckpointProgress? in
                    let progress = try store.writeCheckpoint(&checkpoint.write)
                    return progress == .partial ? nil : progress
                }
            }.whenComplete { result in
                bound.value.checkpointed(name, incarnation: incarnation, covered: covered, result)
            }
        }
    }

    /// Succeeds once the mutation numbered `sequence` is durable (at once for `nil`); fails when a write
    /// fails first.
    private func whenDurable(_ sequence: Int?) -> EventLoopFuture<Void> {
        guard let sequence, sequence > durableSequence else { return loop.makeSucceededVoidFuture() }
        let promise = loop.makePromise(of: Void.self)
        awaitingDurable.append((sequence, promise))
        return promise.futureResult
    }

    /// Mutations are numbered as they are added; the newest durable one; what waits for a number.
    private var nextSequence = 0
    private var durableSequence = -1
    private var awaitingDurable: [(sequence: Int, promise: EventLoopPromise<Void>)] = []

    private struct WriteFailedBefore: Error {}

    /// A checkpoint carried from one step of its write to the next (only the writer thread touches it).
    private final class CheckpointBox: @unchecked Sendable {
        var write: CheckpointWrite
        init(_ write: CheckpointWrite) { self.write = write }
    }

    private func checkpointed(_ name: String, incarnation: String, covered: Int, _ result: Result<CheckpointProgress, Error>) {
        checkpointing.remove(name)
        switch result {
        case .success(.skipped), .success(.partial), .failure(is WriteFailedBefore):
            break  // not applicable any more (dropped, or a failed write made the content run ahead)
        case .success(.done(let size)):
            checkpointsWritten += 1
            if model.dataSources[name]?.incarnation == incarnation {
                checkpointBytes[name] = size
                logBytes[name] = max(0, (logBytes[name] ?? 0) - covered)
            }
        case .failure(let error):
            logger.warning("checkpoint failed; the log keeps growing until one succeeds", metadata: ["dataSource": "\(name)", "error": "\(error)"])
        }
    }

    private var maintaining = false

    /// Runs the store's upkeep on the background thread (one at a time).
    private func maintain() {
        guard !maintaining else { return }
        maintaining = true
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        background.runIfActive(eventLoop: loop) { () throws in try store.maintain() }.whenComplete { result in
            bound.value.maintaining = false
            if case .failure(let error) = result {
                bound.value.logger.warning("storage upkeep failed", metadata: ["error": "\(error)"])
            }
        }
    }

    private func syncIfNeeded() {
        guard wroteSinceSync else { return }
        wroteSinceSync = false
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer.perform { () throws in try store.sync() }.whenFailure { error in
            bound.value.wroteSinceSync = true
            bound.value.logger.error("periodic sync failed", metadata: ["error": "\(error)"])
        }
    }

    /// A backup of the store, made by the writer between two groups; `done` runs on the event loop.
    func backup(_ done: @escaping (Result<[UInt8], Error>) -> Void) {
        let store = self.store
        let bound = NIOLoopBound(done, eventLoop: loop)
        writer.perform { () throws -> [UInt8] in try store.backup() }.whenComplete { bound.value($0) }
    }

    /// Whether no mutation is in flight (the server waits for this before it stops).
    var isIdle: Bool { inFlight.isEmpty && !restoring }

    /// Syncs and closes the store once the writer has done what it has (after `isIdle`).
    static func close(writer: GroupWriter, background: NIOThreadPool, store: Store) async {
        try? await background.shutdownGracefully()
        _ = try? await writer.perform { try store.sync() }.get()
        await writer.shutdown()
        store.close()
    }
}
