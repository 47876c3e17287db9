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
/// with a *conflict* that the router answers by running them again on the caught-up state. Those
/// decisions are `RecoveryStateMachine`'s; the pipeline carries them out.
///
/// Wire it to the engine with `init(engine:store:loop:logger:inline:undone:)`.
package final class CommitPipeline {
    package let store: Store
    private let loop: EventLoop
    package private(set) var writer: StoreWriting!
    /// Encodes checkpoints and runs the store's upkeep, so that the writer only writes (none inline:
    /// then that work runs as tasks of the loop).
    package let background: NIOThreadPool?
    private let logger: Logger
    /// The model, to capture contents for checkpoints.
    private let model: StateModel
    /// Undoes mutations in memory, newest first (given oldest first), with the data sources (and
    /// whether the registrations) they touched.
    private let undoInMemory: ([ChangeUndo], Set<String>, Bool) -> Void
    /// With a shared store: brings the named data sources (and the registrations) up to what the other
    /// instances committed; resolves once done (after a restore, before the undone mutations fail).
    package var catchUp: ((Set<String>, Bool) -> Deferred<Void>)?
    /// The oldest version of a data source whose event memory still retains (the store trims older log
    /// records once a checkpoint covers them): set from the engine's retained events.
    private var oldestRetainedVersion: ((String) -> Int?)?
    /// Called once a group is durable with the data sources it touched (the follower then applies what
    /// other instances committed meanwhile, which it could not while the local change was in flight).
    package var durable: ((Set<String>) -> Void)?

    /// What to do after a failed write, a probe, a sync or an upkeep.
    private var recovery = RecoveryStateMachine()
    /// Counters for `stats`.
    package private(set) var stats = CommitStats()
    /// The mutations handed to the writer and not yet durable.
    private var inFlight = InFlightMutations()
    /// Requests waiting for no mutation to be in flight, in arrival order.
    private var parked: [() -> Void] = []
    /// When each data source is due for a checkpoint.
    private var checkpoints = CheckpointLedger()

    /// - Parameter inline: write on the loop itself (`InlineWriter`, for an in-process server on an
    ///   embedded loop) instead of on a writer thread with a background thread beside it.
    /// - Parameter undoInMemory: undoes the mutations of a failed write in memory (see `init(engine:…)`,
    ///   which does it with the engine).
    private init(
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

    /// The one wiring of engine, pipeline and undo: a pipeline writing what `engine` commits to `store`.
    /// After a failed write it undoes the engine's part itself (`StateEngine.undoFailedWrite`) and calls
    /// `undone` with what that did, for the caller's own reaction (its views); the store keeps no more of
    /// a data source's log than the engine retains. `undone` runs on `loop`; capture its owner unowned
    /// (the owner keeps the pipeline).
    package convenience init<Attachment>(
        engine: StateEngine<Attachment>, store: Store, loop: EventLoop, logger: Logger, inline: Bool = false,
        undone: @escaping (UndoneChanges<Attachment>) -> Void
    ) {
        self.init(store: store, model: engine.model, loop: loop, logger: logger, inline: inline) { undos, touched, _ in
            undone(engine.undoFailedWrite(undos, dataSources: touched))
        }
        oldestRetainedVersion = { name in engine.dataSources[name]?.retained.oldestVersion }
    }

    /// The pipeline, for the inline writer that belongs to it (no cycle).
    private final class UnownedPipeline {
        unowned let pipeline: CommitPipeline
        init(_ pipeline: CommitPipeline) { self.pipeline = pipeline }
    }

    // MARK: For `stats`

    package var groupsWritten: Int { stats.groupsWritten }
    package var recordsWritten: Int { stats.recordsWritten }
    package var mutationsWritten: Int { stats.mutationsWritten }
    package var checkpointsWritten: Int { stats.checkpointsWritten }
    package var writeTime: Duration { stats.writeTime }
    package var waitTime: Duration { stats.waitTime }
    package var writeFailures: Int { recovery.writeFailures }
    /// Failed writes because another instance committed to the data source first.
    package var conflicts: Int { recovery.conflicts }
    /// Times the store was probed again while unavailable.
    package var restoreRetries: Int { recovery.restoreRetries }
    /// Mutations handed to the writer and not yet durable (or undone).
    package var writesInFlight: Int { inFlight.count }
    /// The number of the newest durable change (-1: none yet); see `add(_:of:numbered:)`.
    package var durableNumber: Int { inFlight.durableSequence }
    /// Set while the store cannot be read after a failed write (a database that went away): mutations
    /// fail with `storage-failed` and this reason at once, reads go on, and listd probes the store with
    /// backoff until it answers.
    package var unavailableReason: String? { recovery.unavailableReason }

    // MARK: Requests

    /// Runs `body` on the background thread (inline: as a task of the loop); completes on the loop.
    private func offload<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) -> EventLoopFuture<Value> {
        guard let background else { return loop.submit(body) }
        return background.runIfActive(eventLoop: loop, body)
    }

    /// Starts the once-a-second sync of the `periodic` mode. On the event loop.
    package func startPeriodicSync() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            let pipeline = bound.value
            pipeline.run(pipeline.recovery.syncTimerFired())
        }
    }

    /// Remembers what was loaded, to schedule the next checkpoints.
    package func loaded(_ stored: StoredState) {
        checkpoints.loaded(stored)
    }

    /// Whether a request must wait before it runs: a read while changes are not durable; a mutation
    /// while requests wait before it, or while a conflict's data sources are being caught up.
    package func mustPark(mutation: Bool) -> Bool {
        if recovery.isRestoring || !parked.isEmpty { return true }
        return !mutation && !inFlight.isEmpty
    }

    /// Runs `body` once no mutation is in flight (in arrival order with the other waiting requests).
    package func park(_ body: @escaping () -> Void) {
        parked.append(body)
    }

    /// How the caller of `add` learns that a change is durable.
    package enum Durability {
        /// Nothing to wait for.
        case now
        /// Resolves with `nil` once the change is durable, or with the error that undid it.
        case deferred(Deferred<WireError?>)
        /// The change's number: `numberedDurable` and `numberedUndone` report it, once for a whole group
        /// (nothing is made per change: no future, no closure).
        case numbered(Int)
    }

    /// With numbered changes (`add(_:of:numbered: true)`): called once a group is durable, with the
    /// newest durable number (every change numbered up to it is durable).
    package var numberedDurable: ((Int) -> Void)?
    /// With numbered changes: called after a failed write with the numbers of the changes it undid (every
    /// change in flight) and the error they fail with.
    package var numberedUndone: ((ClosedRange<Int>, WireError) -> Void)?

    /// Stores a change the engine just committed (`StateEngine.commit` with `recordingUndo: true`): its
    /// records go to the writer with what undoes it. Returns what resolves once it is durable (`nil`) or
    /// with the error that undid it; for a change that changed nothing, what resolves once the changes
    /// before it are durable (it answers as a read does); `nil` when there is nothing to wait for.
    package func add<Attachment>(_ applied: AppliedChange<Attachment>, of change: StateChange) -> Deferred<WireError?>? {
        switch add(applied, of: change, numbered: false) {
        case .deferred(let done): return done
        case .now, .numbered: return nil
        }
    }

    /// `add(_:of:)`, and with `numbered` a stored change is reported by its number (`numberedDurable`,
    /// `numberedUndone`) instead of by a `Deferred` of its own. A change that changed nothing still
    /// waits with a `Deferred` for the changes before it (rare: it answers as a read does).
    package func add<Attachment>(_ applied: AppliedChange<Attachment>, of change: StateChange, numbered: Bool) -> Durability {
        let records = model.records(of: change, outcome: applied.outcome, event: applied.retainedEvent)
        if !records.isEmpty {
            if numbered, numberedDurable != nil, unavailableReason == nil {
                return .numbered(hand(records, of: change, applied, done: nil))
            }
            let done = Deferred<WireError?>()
            if let unavailableReason {
                // Not reachable in practice: `commit` refuses first. Kept so a record is never silently dropped.
                done.resolve(WireError(.storageFailed, unavailableReason))
            } else {
                hand(records, of: change, applied, done: done)
            }
            return .deferred(done)
        }
        guard applied.outcome.unchanged, mustPark(mutation: false) else { return .now }
        let answered = Deferred<WireError?>()
        park { answered.resolve(nil) }
        return .deferred(answered)
    }

    /// Puts a change's records in flight (with what undoes it in memory, and `done` unless it is
    /// numbered) and hands them to the writer; returns the change's number.
    @discardableResult
    private func hand<Attachment>(_ records: [StoreRecord], of change: StateChange, _ applied: AppliedChange<Attachment>, done: Deferred<WireError?>?) -> Int {
        let name = change.dataSourceName
        let number = inFlight.append(dataSource: name, previousVersion: applied.previousVersion, registrations: name == nil, done: done, undo: applied.outcome.undo)
        for record in records { checkpoints.account(record) }
        writer.add(records)
        return number
    }

    /// Whether a mutation of the data source is in flight (then what other instances committed waits).
    package func hasInFlight(dataSource name: String) -> Bool {
        inFlight.contains(dataSource: name)
    }

    /// Whether a mutation of the registrations is in flight.
    package var hasRegistrationsInFlight: Bool { inFlight.hasRegistrations }

    /// Whether no mutation is in flight (the server waits for this before it stops).
    package var isIdle: Bool { inFlight.isEmpty && !recovery.isRestoring }

    // MARK: Writes and recovery

    /// On the event loop, after the writer wrote (or failed to write) the oldest mutations in flight.
    private func written(_ report: GroupWriter.Report) {
        switch report.result {
        case .success(let duration):
            stats.groupsWritten += 1
            stats.recordsWritten += report.records
            stats.mutationsWritten += report.mutations
            stats.writeTime += duration
            let now = ContinuousClock.now
            var touched = Set<String>()
            var waited = Duration.zero
            // Resolved once the group is out of the queue (what they run may add to it).
            var resolving: [Deferred<WireError?>] = []
            let due = inFlight.removeDurable(report.mutations) { pending in
                waited += now - pending.added
                if let name = pending.dataSource { touched.insert(name) }
                if let done = pending.done { resolving.append(done) }
            }
            stats.waitTime += waited
            for done in resolving { done.resolve(nil) }
            if report.mutations > 0 { numberedDurable?(inFlight.durableSequence) }
            for promise in due { promise.succeed(()) }
            if inFlight.isEmpty { runParked() }
            durable?(touched)
            scheduleCheckpoints()
            run(recovery.groupWritten(needsMaintenance: report.needsMaintenance))
        case .failure(let error):
            run(recovery.writeFailed(error, shared: catchUp != nil))
        }
    }

    /// Carries out the recovery's actions. `undone`: the mutations an earlier `.undoInFlight` undid (for
    /// `.failUndone` after a catch-up).
    private func run(_ actions: [RecoveryStateMachine.Action], undone: [InFlightMutations.Pending] = []) {
        var undone = undone
        var touched = Set<String>()
        var registrations = false
        for action in actions {
            switch action {
            case .undoInFlight(let error):
                // The writer takes no group until `resume()`: the open group is part of what is undone.
                writer.discardOpen()
                let removed = inFlight.removeAll()
                undone = removed.undone
                for promise in removed.waiting { promise.fail(WriteFailedBefore()) }
                touched = Set(undone.compactMap(\.dataSource))
                registrations = undone.contains { $0.registrations }
                for name in touched { checkpoints.forgetLog(of: name) }  // scheduled again once known
                undoInMemory(undone.compactMap(\.undo), touched, registrations)
                logger.error("storage write failed; its changes are undone", metadata: ["error": "\(error.message)", "changes": "\(undone.count)"])
                writer.resume()
            case .catchUp(let waiting):
                guard let caughtUp = catchUp?(touched, registrations) else { break }
                guard waiting else { break }
                let bound = NIOLoopBound(self, eventLoop: loop)
                let undoneNow = undone
                caughtUp.whenResolved {
                    let pipeline = bound.value
                    pipeline.run(pipeline.recovery.caughtUp(), undone: undoneNow)
                }
            case .failUndone(let error):
                for pending in undone { pending.done?.resolve(error) }
                if let first = undone.first, let last = undone.last, undone.contains(where: { $0.done == nil }) {
                    numberedUndone?(first.sequence...last.sequence, error)
                }
                runParked()
            case .probe:
                probeStore()
            case .scheduleProbe(let delay):
                let bound = NIOLoopBound(self, eventLoop: loop)
                loop.scheduleTask(in: delay) {
                    let pipeline = bound.value
                    pipeline.run(pipeline.recovery.probeTimerFired())
                }
            case .markUnavailable(let reason):
                logger.error("the store cannot be read; changes are refused until it answers", metadata: ["error": "\(reason)"])
            case .markAvailable(let retries):
                logger.notice("the store answers again", metadata: ["retries": "\(retries)"])
            case .sync:
                syncStore()
            case .maintain:
                maintainStore()
            }
        }
    }

    private struct WriteFailedBefore: Error {}

    /// Reads the store on the writer, between two groups (after a failed write: can it still be read?).
    private func probeStore() {
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer.perform { () throws in _ = try store.load(dataSources: [], registrations: true) }.whenComplete { result in
            let pipeline = bound.value
            pipeline.run(pipeline.recovery.probeAnswered(result))
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

    // MARK: Checkpoints, upkeep, sync, backup

    /// Checkpoints every data source `CheckpointLedger` finds due. The content is captured now (with the
    /// mutations still in flight: the store skips a checkpoint that would run ahead of its log, and the
    /// next group schedules it again), encoded on the background thread and written by the writer
    /// between two groups.
    private func scheduleCheckpoints() {
        for (name, logged) in checkpoints.startDue() {
            guard let dataSource = model.dataSources[name] else {
                checkpoints.finished(name, covered: logged, size: nil)
                continue
            }
            // With a shared store, memory holding a change in flight need not be what the store will
            // hold at that version (another instance may win it): the checkpoint is written only once
            // the last mutation in flight now is durable, and dropped when a write fails before.
            let durableFirst = store is SharedStore && hasInFlight(dataSource: name) ? inFlight.newestSequence : nil
            let content = dataSource.content
            let incarnation = dataSource.incarnation
            let store = self.store
            let keepFrom = oldestRetainedVersion?(name)
            let bound = NIOLoopBound(self, eventLoop: loop)
            let writer = self.writer!
            offload { StateCoding.encode(content) }.flatMap { encoded in
                bound.value.inFlight.whenDurable(durableFirst, on: bound.value.loop).map { encoded }
            }.flatMap { encoded in
                var write = CheckpointWrite(dataSource: name, incarnation: incarnation, version: content.version, encoded: encoded)
                write.keepFromVersion = keepFrom
                let checkpoint = CheckpointBox(write)
                return writer.performInSteps { () throws -> CheckpointProgress? in
                    let progress = try store.writeCheckpoint(&checkpoint.write)
                    return progress == .partial ? nil : progress
                }
            }.whenComplete { result in
                bound.value.checkpointed(name, incarnation: incarnation, covered: logged, result)
            }
        }
    }

    /// A checkpoint carried from one step of its write to the next (only the writer thread touches it).
    private final class CheckpointBox: @unchecked Sendable {
        var write: CheckpointWrite
        init(_ write: CheckpointWrite) { self.write = write }
    }

    private func checkpointed(_ name: String, incarnation: String, covered: Int, _ result: Result<CheckpointProgress, Error>) {
        switch result {
        case .success(.skipped), .success(.partial), .failure(is WriteFailedBefore):
            // Not applicable any more (dropped, or a failed write made the content run ahead).
            checkpoints.finished(name, covered: covered, size: nil)
        case .success(.done(let size)):
            stats.checkpointsWritten += 1
            checkpoints.finished(name, covered: covered, size: size, current: model.dataSources[name]?.incarnation == incarnation)
        case .failure(let error):
            checkpoints.finished(name, covered: covered, size: nil)
            logger.warning("checkpoint failed; the log keeps growing until one succeeds", metadata: ["dataSource": "\(name)", "error": "\(error)"])
        }
    }

    /// Runs the store's upkeep on the background thread.
    private func maintainStore() {
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        offload { () throws in try store.maintain() }.whenComplete { result in
            bound.value.recovery.maintenanceFinished()
            if case .failure(let error) = result {
                bound.value.logger.warning("storage upkeep failed", metadata: ["error": "\(error)"])
            }
        }
    }

    private func syncStore() {
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        writer.perform { () throws in try store.sync() }.whenFailure { error in
            bound.value.recovery.syncFailed()
            bound.value.logger.error("periodic sync failed", metadata: ["error": "\(error)"])
        }
    }

    /// A backup of the store, made by the writer between two groups; `done` runs on the event loop.
    package func backup(_ done: @escaping (Result<[UInt8], Error>) -> Void) {
        let store = self.store
        let bound = NIOLoopBound(done, eventLoop: loop)
        writer.perform { () throws -> [UInt8] in try store.backup() }.whenComplete { bound.value($0) }
    }

    /// Syncs and closes the store once the writer has done what it has (after `isIdle`).
    package static func close(writer: StoreWriting, background: NIOThreadPool?, store: Store) async {
        try? await background?.shutdownGracefully()
        _ = try? await writer.perform { try store.sync() }.get()
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in writer.shutdown { stopped.resume() } }
        store.close()
    }
}
