import CSystemd
import ListEngine
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
/// When a write fails, the store rolls the transaction back and the pipeline undoes that group and every
/// mutation after it in memory, newest first, with what each kept to undo it (`ChangeUndo`): no read of
/// the store, so reads go on whatever the store's condition, and views (which get a mutation's events
/// only once it is durable) saw none of them. Every one of those mutations fails with `storage-failed`.
/// When the store cannot even be read (a database that went away), mutations are refused with the
/// reason until it answers again (`unavailableReason`, probed with backoff). With a shared store
/// (several instances), the undone data sources are then caught up with what the other instances
/// committed, and when the write failed because another instance got there first, the mutations fail
/// with a *conflict* that the router answers by running them again on the caught-up state.
package final class CommitPipeline {
    package let store: Store
    private let loop: EventLoop
    package private(set) var writer: StoreWriting!
    /// Encodes checkpoints and runs the store's upkeep, so that the writer only writes (none inline:
    /// then that work runs as tasks of the loop).
    package let background: NIOThreadPool?
    private let logger: Logger

    /// A write failed because another instance committed first: every request waits until the undone
    /// data sources are caught up (the router then runs the mutations again).
    private var restoring = false
    /// The mutations handed to the writer and not yet durable, oldest first (the writer writes them in
    /// this order, so a report of `n` mutations is the first `n`).
    private var inFlight: [Pending] = []
    private var parked: [() -> Void] = []
    /// Set while the store cannot be read after a failed write (a database that went away): mutations
    /// fail with `storage-failed` and this reason at once, reads go on, and listd probes the store with
    /// backoff until it answers.
    package private(set) var unavailableReason: String?
    /// Times the store was probed again while unavailable (for `stats`).
    package private(set) var restoreRetries = 0
    /// Whether a probe of the store is under way or scheduled.
    private var probing = false
    private var wroteSinceSync = false
    /// Per data source: the operation bytes logged since its last checkpoint (what a start-up would
    /// replay), and that checkpoint's size.
    private var logBytes: [String: Int] = [:]
    private var checkpointBytes: [String: Int] = [:]
    private var checkpointing: Set<String> = []
    /// The model, to capture contents for checkpoints.
    private let model: StateModel
    /// Undoes mutations in memory, newest first (given oldest first), with the data sources (and
    /// whether the registrations) they touched.
    private let undoInMemory: ([ChangeUndo], Set<String>, Bool) -> Void
    /// With a shared store: brings the named data sources (and the registrations) up to what the other
    /// instances committed; resolves once done (after a restore, before the undone mutations fail).
    package var catchUp: ((Set<String>, Bool) -> Deferred<Void>)?
    /// The oldest version of a data source whose event memory still retains (the store trims older log
    /// records once a checkpoint covers them): set by the server from the engine's retained events.
    package var oldestRetainedVersion: ((String) -> Int?)?
    /// Called once a group is durable with the data sources it touched (the follower then applies what
    /// other instances committed meanwhile, which it could not while the local change was in flight).
    package var durable: ((Set<String>) -> Void)?
    /// Mutations in flight per data source, and those that change registrations.
    private var inFlightPerDataSource: [String: Int] = [:]
    private var registrationsInFlight = 0

    /// Counters for `stats`.
    package private(set) var groupsWritten = 0
    package private(set) var recordsWritten = 0
    package private(set) var mutationsWritten = 0
    package private(set) var checkpointsWritten = 0
    package private(set) var writeFailures = 0
    /// Mutations handed to the writer and not yet durable (or undone).
    package var writesInFlight: Int { inFlight.count }
    /// Failed writes because another instance committed to the data source first.
    package private(set) var conflicts = 0
    /// Time the writer spent in transactions, and the time mutations waited to be durable (summed).
    package private(set) var writeTime = Duration.zero
    package private(set) var waitTime = Duration.zero

    package struct Pending {
        var dataSources: Set<String>
        /// The version of the data source before the mutation (`nil`: it did not exist, or none).
        var previousVersion: Int?
        var registrations: Bool
        /// The mutation's number, in the order of `add`.
        var sequence: Int
        var added: ContinuousClock.Instant
        var done: Deferred<WireError?>
        /// What undoes the mutation in memory should its write fail.
        var undo: ChangeUndo?
    }

    /// - Parameter inline: write on the loop itself (`InlineWriter`, for an in-process server on an
    ///   embedded loop) instead of on a writer thread with a background thread beside it.
    package init(
        store: Store, model: StateModel, loop: EventLoop, logger: Logger, inline: Bool = false,
        undoInMemory: @escaping ([ChangeUndo], Set<String>, Bool) -> Void
    ) {
        self.store = store
        self.model = model
        self.loop = loop
        self.logger = logger
        self.undoInMemory = undoInMemory
        if inline {
            background = nil
            let unowned = UnownedPipeline(self)
            writer = InlineWriter(store: store, loop: loop) { report in unowned.pipeline.written(report) }
            return
        }
        let background = NIOThreadPool(numberOfThreads: 1)
        background.start()
        // Encoding a large checkpoint takes a while; on a small machine it must not take the CPU from
        // the event loop or the writer (a writer waiting for a core is a request waiting for its reply).
        background.submit { _ in _ = listd_set_thread_niceness(10) }
        self.background = background
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer = GroupWriter(store: store, loop: loop) { report in bound.value.written(report) }
    }

    /// The pipeline, for the inline writer that belongs to it (no cycle).
    private final class UnownedPipeline {
        unowned let pipeline: CommitPipeline
        init(_ pipeline: CommitPipeline) { self.pipeline = pipeline }
    }

    /// Runs `body` on the background thread (inline: as a task of the loop); completes on the loop.
    private func offload<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) -> EventLoopFuture<Value> {
        guard let background else { return loop.submit(body) }
        return background.runIfActive(eventLoop: loop, body)
    }

    /// Starts the once-a-second sync of the `periodic` mode. On the event loop.
    package func startPeriodicSync() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in bound.value.syncIfNeeded() }
    }

    /// Remembers what was loaded, to schedule the next checkpoints.
    package func loaded(_ stored: StoredState) {
        for dataSource in stored.dataSources {
            checkpointBytes[dataSource.name] = dataSource.checkpointBytes
            logBytes[dataSource.name] = dataSource.tailBytes
        }
    }

    /// Whether a request must wait before it runs: a read while changes are not durable; a mutation
    /// while requests wait before it, or while a conflict's data sources are being caught up.
    package func mustPark(mutation: Bool) -> Bool {
        if restoring || !parked.isEmpty { return true }
        return !mutation && !inFlight.isEmpty
    }

    /// Runs `body` once no mutation is in flight (in arrival order with the other waiting requests).
    package func park(_ body: @escaping () -> Void) {
        parked.append(body)
    }

    /// Hands a committed mutation's records to the writer, with what undoes it in memory; `done`
    /// resolves with `nil` once they are durable, or with the error that undid them.
    package func add(_ records: [StoreRecord], dataSources: Set<String>, previousVersion: Int?, registrations: Bool, undo: ChangeUndo?)
        -> Deferred<WireError?>
    {
        let done = Deferred<WireError?>()
        if let unavailableReason {
            // Not reachable in practice: `commit` refuses first. Kept so a record is never silently dropped.
            done.resolve(WireError(.storageFailed, unavailableReason))
            return done
        }
        inFlight.append(
            Pending(
                dataSources: dataSources, previousVersion: previousVersion, registrations: registrations, sequence: nextSequence, added: .now,
                done: done, undo: undo))
        nextSequence += 1
        track(inFlight[inFlight.count - 1], by: 1)
        for record in records { account(record) }
        writer.add(records)
        return done
    }

    /// Whether a mutation of the data source is in flight (then what other instances committed waits).
    package func hasInFlight(dataSource name: String) -> Bool {
        inFlightPerDataSource[name] != nil
    }

    /// Whether a mutation of the registrations is in flight.
    package var hasRegistrationsInFlight: Bool { registrationsInFlight > 0 }

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
                undo(error: WireError(.storageFailed, "The change was not stored: \(error)", details: ["conflict": true]), conflict: true)
            } else if (error as? StorageError)?.kind == .unknownOutcome {
                // Undone here like a failed write; should the database hold it after all, this instance
                // catches up with it from the log as it would with another instance's change.
                undo(error: WireError(.storageFailed, "The change may or may not be stored: \(error)", details: ["outcome": "unknown"]), conflict: false)
            } else {
                undo(error: WireError(.storageFailed, "The change was not stored: \(error)"), conflict: false)
            }
        }
    }

    /// After a failed write (the writer takes no group meanwhile): undoes the failed group and every
    /// later mutation in memory, newest first, fails all of them, and lets the writer go on. With a
    /// shared store the undone data sources then catch up with the other instances; after a conflict,
    /// requests wait for that (the router runs the mutations again on the caught-up state). Unless the
    /// write failed because another instance came first, the store is probed: when it cannot be read,
    /// mutations are refused until it answers.
    private func undo(error: WireError, conflict: Bool) {
        writer.discardOpen()
        let undone = inFlight
        inFlight = []
        for entry in undone { track(entry, by: -1) }
        let touched = undone.reduce(into: Set<String>()) { $0.formUnion($1.dataSources) }
        let registrations = undone.contains { $0.registrations }
        let waiting = awaitingDurable
        awaitingDurable = []
        for entry in waiting { entry.promise.fail(WriteFailedBefore()) }
        for name in touched { logBytes[name] = nil }  // unknown until a checkpoint; scheduled again below
        undoInMemory(undone.compactMap(\.undo), touched, registrations)
        logger.error("storage write failed; its changes are undone", metadata: ["error": "\(error.message)", "changes": "\(undone.count)"])
        writer.resume()
        let finish = { [self] in
            for entry in undone { entry.done.resolve(error) }
            runParked()
        }
        guard let catchUp else {
            if !conflict { probe(after: error, delay: .milliseconds(100)) }
            return finish()
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        if conflict {
            restoring = true
            catchUp(touched, registrations).whenResolved {
                bound.value.restoring = false
                finish()
            }
        } else {
            _ = catchUp(touched, registrations)
            probe(after: error, delay: .milliseconds(100))
            finish()
        }
    }

    /// Reads the store (on the writer, between two groups) after a write failed: when it cannot be
    /// read, mutations are refused with the reason (`unavailableReason`) and listd probes again after
    /// `delay`, doubling up to 5 s, until it answers.
    private func probe(after error: WireError, delay: TimeAmount) {
        guard !probing else { return }
        probing = true
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer.perform { () throws in _ = try store.load(dataSources: [], registrations: true) }.whenComplete { result in
            let pipeline = bound.value
            pipeline.probing = false
            switch result {
            case .success:
                if pipeline.unavailableReason != nil {
                    pipeline.logger.notice("the store answers again", metadata: ["retries": "\(pipeline.restoreRetries)"])
                }
                pipeline.unavailableReason = nil
            case .failure(let probeError):
                if pipeline.unavailableReason == nil {
                    pipeline.logger.error("the store cannot be read; changes are refused until it answers", metadata: ["error": "\(probeError)"])
                }
                pipeline.unavailableReason =
                    "A write failed (\(error.message)) and the store cannot be read (\(probeError)); changes are refused until it answers, reads go on."
                pipeline.probing = true
                pipeline.loop.scheduleTask(in: delay) {
                    let pipeline = bound.value
                    pipeline.probing = false
                    pipeline.restoreRetries += 1
                    pipeline.probe(after: error, delay: min(delay * 2, .seconds(5)))
                }
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
            let keepFrom = oldestRetainedVersion?(name)
            let bound = NIOLoopBound(self, eventLoop: loop)
            let writer = self.writer!
            offload { StateCoding.encode(content) }.flatMap { encoded in
                bound.value.whenDurable(durableFirst).map { encoded }
            }.flatMap { encoded in
                var write = CheckpointWrite(dataSource: name, incarnation: incarnation, version: content.version, encoded: encoded)
                write.keepFromVersion = keepFrom
                let checkpoint = CheckpointBox(write)
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
        offload { () throws in try store.maintain() }.whenComplete { result in
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
    package func backup(_ done: @escaping (Result<[UInt8], Error>) -> Void) {
        let store = self.store
        let bound = NIOLoopBound(done, eventLoop: loop)
        writer.perform { () throws -> [UInt8] in try store.backup() }.whenComplete { bound.value($0) }
    }

    /// Whether no mutation is in flight (the server waits for this before it stops).
    package var isIdle: Bool { inFlight.isEmpty && !restoring }

    /// Syncs and closes the store once the writer has done what it has (after `isIdle`).
    package static func close(writer: StoreWriting, background: NIOThreadPool?, store: Store) async {
        try? await background?.shutdownGracefully()
        _ = try? await writer.perform { try store.sync() }.get()
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in writer.shutdown { stopped.resume() } }
        store.close()
    }
}
