import ListStore
import ListWire
import NIOCore

/// The commit pipeline's recovery decisions, without I/O (as `FollowerStateMachine` is the follower's):
/// failed writes, probe answers, caught-up data sources and timers go in; what to undo, read, schedule,
/// refuse and take again comes out as actions, which the driver (`CommitPipeline`) carries out and
/// answers with the next event.
///
/// - A failed write undoes every mutation in flight (the failed group and every later one) and fails
///   them. With a shared store the undone data sources then catch up with the other instances; when
///   the write failed because another instance committed first (a *conflict*), requests wait for that
///   catch-up (`isRestoring`) and the undone mutations fail only once it is done, so that the router
///   runs them again on the caught-up state.
/// - Unless it was a conflict, the store is probed (read between two groups): while it cannot be read,
///   mutations are refused (`unavailableReason`) and it is probed again after 0.1 s, doubling up to 5 s,
///   until it answers.
/// - A successful group makes the periodic sync due and may ask for the store's upkeep (one at a time).
package struct RecoveryStateMachine {
    /// What the driver does next, in order.
    package enum Action: Equatable {
        /// Undo every mutation in flight in memory, newest first, and log the failure (the writer takes no
        /// group meanwhile, and goes on afterwards).
        case undoInFlight(WireError)
        /// Bring the undone data sources (and registrations) up to what the other instances committed.
        /// `waiting`: requests wait until it is done, answered with `caughtUp()`.
        case catchUp(waiting: Bool)
        /// Fail the undone mutations with the error, then run the requests that waited.
        case failUndone(WireError)
        /// Read the store (between two groups), answered with `probeAnswered(_:)`.
        case probe
        /// Call `probeTimerFired()` after the delay.
        case scheduleProbe(TimeAmount)
        /// The store cannot be read (`because`): mutations are refused with `unavailableReason` from now on.
        case markUnavailable(because: String)
        /// The store answers again after `retries` probes: mutations are taken again.
        case markAvailable(retries: Int)
        /// Sync the store (between two groups); a failure is answered with `syncFailed()`.
        case sync
        /// Run the store's upkeep (in the background), answered with `maintenanceFinished()`.
        case maintain
    }

    /// Where the probe of the store is.
    private enum Probe {
        case idle
        /// A read of the store is under way.
        case reading
        /// The store could not be read: the next read is scheduled.
        case scheduled
    }

    /// Set while the undone mutations of a conflict wait for the catch-up: the error they fail with.
    private var restoringError: WireError?
    private var probe = Probe.idle
    /// The failed write a probe is about (its message goes into `unavailableReason`), and the delay before
    /// the next probe should this one fail.
    private var probeCause: WireError?
    private var probeDelay = Self.firstProbeDelay
    private var wroteSinceSync = false
    private var maintaining = false

    /// Set while the store cannot be read after a failed write: mutations fail with `storage-failed` and
    /// this reason at once, reads go on.
    package private(set) var unavailableReason: String?
    /// Counters for `stats`: probes after the first while unavailable, failed writes, and the failed
    /// writes that were conflicts (another instance committed to the data source first).
    package private(set) var restoreRetries = 0
    package private(set) var writeFailures = 0
    package private(set) var conflicts = 0

    package init() {}

    /// The delay before probing again after the first failed probe, and the longest one.
    package static let firstProbeDelay = TimeAmount.milliseconds(100)
    package static let maximumProbeDelay = TimeAmount.seconds(5)

    /// Whether the undone data sources of a conflict are being caught up (every request waits).
    package var isRestoring: Bool { restoringError != nil }

    // MARK: Events

    /// A group's write failed with `error`. `shared`: the store is shared with other instances (the undone
    /// data sources can catch up with them).
    package mutating func writeFailed(_ error: any Error, shared: Bool) -> [Action] {
        writeFailures += 1
        let failure: WireError
        let conflict: Bool
        switch (error as? StorageError)?.kind {
        case .conflict?:
            conflicts += 1
            // Another instance committed first: once caught up, the router runs the mutations again.
            failure = WireError(.storageFailed, "The change was not stored: \(error)", details: ["conflict": true])
            conflict = true
        case .unknownOutcome?:
            // Undone like a failed write; should the store hold it after all, this instance catches up
            // with it from the log as it would with another instance's change.
            failure = WireError(.storageFailed, "The change may or may not be stored: \(error)", details: ["outcome": "unknown"])
            conflict = false
        default:
            failure = WireError(.storageFailed, "The change was not stored: \(error)")
            conflict = false
        }
        var actions: [Action] = [.undoInFlight(failure)]
        if shared && conflict {
            restoringError = failure
            return actions + [.catchUp(waiting: true)]
        }
        if shared { actions.append(.catchUp(waiting: false)) }
        if !conflict { actions += startProbe(cause: failure) }
        return actions + [.failUndone(failure)]
    }

    /// The answer to `.catchUp(waiting: true)`.
    package mutating func caughtUp() -> [Action] {
        guard let failure = restoringError else { return [] }
        restoringError = nil
        return [.failUndone(failure)]
    }

    /// The answer to `.probe`.
    package mutating func probeAnswered(_ result: Result<Void, any Error>) -> [Action] {
        guard probe == .reading else { return [] }
        switch result {
        case .success:
            probe = .idle
            guard unavailableReason != nil else { return [] }
            unavailableReason = nil
            return [.markAvailable(retries: restoreRetries)]
        case .failure(let error):
            let wasAvailable = unavailableReason == nil
            let cause = probeCause?.message ?? "unknown"
            unavailableReason = "A write failed (\(cause)) and the store cannot be read (\(error)); changes are refused until it answers, reads go on."
            probe = .scheduled
            return (wasAvailable ? [.markUnavailable(because: "\(error)")] : []) + [.scheduleProbe(probeDelay)]
        }
    }

    /// The delay of `.scheduleProbe` passed.
    package mutating func probeTimerFired() -> [Action] {
        guard probe == .scheduled else { return [] }
        probe = .reading
        restoreRetries += 1
        probeDelay = min(probeDelay * 2, Self.maximumProbeDelay)
        return [.probe]
    }

    /// A group was written; `needsMaintenance`: the store asked for its upkeep.
    package mutating func groupWritten(needsMaintenance: Bool) -> [Action] {
        wroteSinceSync = true
        guard needsMaintenance, !maintaining else { return [] }
        maintaining = true
        return [.maintain]
    }

    /// The answer to `.maintain` (whether or not the upkeep succeeded).
    package mutating func maintenanceFinished() { maintaining = false }

    /// The periodic sync's timer fired: a sync when something was written since the last one.
    package mutating func syncTimerFired() -> [Action] {
        guard wroteSinceSync else { return [] }
        wroteSinceSync = false
        return [.sync]
    }

    /// The sync of `.sync` failed: the next timer tries again.
    package mutating func syncFailed() { wroteSinceSync = true }

    // MARK: Decisions

    private mutating func startProbe(cause: WireError) -> [Action] {
        guard probe == .idle else { return [] }  // one probe at a time: the one under way covers this failure
        probe = .reading
        probeCause = cause
        probeDelay = Self.firstProbeDelay
        return [.probe]
    }
}
