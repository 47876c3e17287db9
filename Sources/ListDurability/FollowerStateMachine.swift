import CellCore
import ListStore
import NIOCore

/// What the follower reads of this instance: the data sources it serves and the local changes not yet
/// durable. The state machine asks; it never changes anything.
package protocol FollowedState {
    /// The version and incarnation of the data source served as `name`, if any.
    func served(_ name: String) -> (version: Int, incarnation: String)?
    /// The names of the data sources served.
    var servedNames: [String] { get }
    /// Whether a local change to the data source is not yet durable (the store may not have it).
    func hasInFlight(dataSource name: String) -> Bool
    /// Whether a local registration change is not yet durable.
    var hasRegistrationsInFlight: Bool { get }
}

/// The follower's decisions, without I/O (in the style of postgres-nio's connection state machine):
/// the store's notices, the results of the reads it asked for, local changes and timers go in; what to
/// read, apply, serve, drop, log and schedule comes out as actions, which a driver (`StoreFollower`)
/// carries out and answers with the next event.
///
/// - A data source's new versions are read after the version held here and applied change by change;
///   one that cannot be followed that way (its log was trimmed, it was made again, a change does not
///   apply) is read whole.
/// - Data sources created or dropped elsewhere, and registrations, are compared with the store.
/// - What a local change still in flight touches is left alone until it is durable (or undone): until
///   then the local state is ahead of the store, and the write decides which change won. A read that
///   started before a local change does not undo it (reads carry the count of local changes at their
///   start, `since`).
/// - A failed read is retried by comparing everything after a delay: 0.2 s, doubling to 5 s while reads
///   keep failing.
package struct FollowerStateMachine {
    /// What the driver does next, in order.
    package enum Action {
        /// Read the changes of `dataSource` after `version`, answered with `changesRead`.
        case readChanges(dataSource: String, after: Int, incarnation: String)
        /// Read `dataSource` whole, answered with `wholeRead`.
        case readWhole(dataSource: String, since: Int)
        /// Read every stored data source's version, answered with `versionsRead`.
        case readVersions(since: Int)
        /// Read the stored registrations, answered with `registrationsRead`.
        case readRegistrations(since: Int)
        /// Apply changes read from the store, in order (see `step`), answered with `changesApplied`.
        case apply(dataSource: String, incarnation: String, [FollowedChange])
        /// Serve a data source as stored (its views reload, or learn it was made again).
        case serve(StoredDataSource)
        /// Stop serving a data source the store no longer has (its views learn it was dropped).
        case drop(dataSource: String)
        /// Make the registrations the stored ones.
        case restoreRegistrations([Registration])
        /// Tell those waiting for a catch-up that it is done.
        case resolve([Deferred<Void>])
        /// Log a failed read (`dataSource` nil: a comparison or the registrations).
        case logReadFailure(dataSource: String?, error: String)
        /// Call `retryTimerFired` after `delay`.
        case scheduleRetry(TimeAmount)
        /// Call `compareTimerFired` after `delay` (a local change was in flight during a comparison).
        case scheduleComparison(TimeAmount)
    }

    /// What applying changes read left to do (the driver's answer to `.apply`).
    package enum Applied {
        /// Nothing (or what remains waits for a local change in flight, which asks again once durable).
        case applied
        /// Read again from the version held now (the changes did not start right after it).
        case readAgain
        /// Read the data source whole (a change did not apply here).
        case readWhole
    }

    /// What to do with one change read, given what is served now (see `Action.apply`).
    package enum Step: Equatable {
        /// Apply it through the commit path.
        case apply
        /// Already held here: go on with the next.
        case skip
        /// It does not follow the version held here: stop, `Applied.readAgain`.
        case readAgain
        /// The data source is gone, made again, or has a local change in flight: stop, `Applied.applied`.
        case stop
    }

    /// The reads under way: of each data source, of every data source's version, of the registrations.
    private var reads: [String: SerialRead] = [:]
    private var comparison = SerialRead()
    private var registrationRead = SerialRead()
    /// Registrations to read again once the local registration change in flight is stored.
    private var pendingRegistrations = false
    /// Local changes, counted, and the count at each data source's (and the registrations') last one.
    private var touches = 0
    private var lastTouch: [String: Int] = [:]
    private var registrationsTouched = 0
    /// The delay before comparing again after a failed read, and whether that comparison is scheduled.
    private var retryDelay = TimeAmount.milliseconds(200)
    private var retryScheduled = false

    /// The newest version of each data source the store is known to have.
    package private(set) var newestKnown: [String: Int] = [:]
    /// Counters for `stats`.
    package private(set) var noticesReceived = 0
    package private(set) var readFailures = 0

    package init() {}

    /// The delay between a comparison that skipped a data source with a local change in flight and the next.
    package static let comparisonDelay = TimeAmount.milliseconds(50)
    /// The longest delay between retries after failed reads.
    package static let maximumRetryDelay = TimeAmount.seconds(5)

    /// How many versions this instance is behind the newest the store is known to have, over all data
    /// sources (0 when caught up).
    package func lag(_ state: FollowedState) -> Int {
        newestKnown.reduce(0) { total, entry in total + max(0, entry.value - (state.served(entry.key)?.version ?? entry.value)) }
    }

    // MARK: Events

    /// A local change to a data source (`nil`: to the registrations) was applied.
    package mutating func touched(_ dataSource: String?) {
        touches += 1
        if let dataSource { lastTouch[dataSource] = touches } else { registrationsTouched = touches }
    }

    /// The store noticed a change another instance (or this one) committed.
    package mutating func notice(_ notice: StoreNotice, _ state: FollowedState) -> [Action] {
        noticesReceived += 1
        switch notice {
        case .changed(let name, let version):
            newestKnown[name] = max(newestKnown[name] ?? 0, version)
            return version > state.served(name)?.version ?? -1 ? catchUp(name, state) : []
        case .dataSources:
            return compare()
        case .registrations:
            return loadRegistrations()
        case .resync:
            return compare() + loadRegistrations()
        }
    }

    /// Brings a data source up to the store (reads it whole when it is not served here); `done` resolves
    /// once a read that started after this call is applied.
    package mutating func catchUp(_ name: String, done: Deferred<Void>? = nil, _ state: FollowedState) -> [Action] {
        reads[name, default: SerialRead()].ask(done) ? read(name, state) : []
    }

    /// Compares every data source with the store: serves the ones created elsewhere, drops the ones
    /// dropped elsewhere, reads the ones made again elsewhere whole, catches up the ones behind.
    package mutating func compare() -> [Action] {
        comparison.ask() ? [.readVersions(since: touches)] : []
    }

    /// Reads the registrations and makes them this instance's (unless a local change to them is in flight).
    package mutating func loadRegistrations(done: Deferred<Void>? = nil) -> [Action] {
        registrationRead.ask(done) ? [.readRegistrations(since: touches)] : []
    }

    /// The answer to `.readChanges`.
    package mutating func changesRead(
        _ name: String, incarnation: String, _ result: Result<FollowedChanges, any Error>, _ state: FollowedState
    ) -> [Action] {
        switch result {
        case .success(.changes(let stored, let changes)) where stored == incarnation:
            return [.apply(dataSource: name, incarnation: incarnation, changes)]
        case .success(.changes), .success(.gap):
            return [.readWhole(dataSource: name, since: touches)]
        case .success(.missing):
            return compare() + finishReading(name, state)
        case .failure(let error):
            return readFailed(error, reading: name) + finishReading(name, state)
        }
    }

    /// What to do with the change to `version` read for a data source of `incarnation`.
    package static func step(version: Int, incarnation: String, served: (version: Int, incarnation: String)?, inFlight: Bool) -> Step {
        guard let served, served.incarnation == incarnation, !inFlight else { return .stop }
        if version <= served.version { return .skip }
        return version == served.version + 1 ? .apply : .readAgain
    }

    /// The answer to `.apply`.
    package mutating func changesApplied(_ name: String, _ applied: Applied, _ state: FollowedState) -> [Action] {
        switch applied {
        case .applied: return finishReading(name, state)
        case .readAgain:
            reads[name]?.askAgain()
            return finishReading(name, state)
        case .readWhole: return [.readWhole(dataSource: name, since: touches)]
        }
    }

    /// The answer to `.readWhole` (`nil`: the store has no such data source).
    package mutating func wholeRead(_ name: String, since: Int, _ result: Result<StoredDataSource?, any Error>, _ state: FollowedState) -> [Action] {
        var actions: [Action]
        switch result {
        case .success(let stored):
            if state.hasInFlight(dataSource: name) || (lastTouch[name] ?? 0) > since {
                actions = [.scheduleComparison(Self.comparisonDelay)]  // a local change came between: compare again once it is stored
            } else if let stored {
                actions = [.serve(stored)]
            } else {
                actions = [.drop(dataSource: name)]
            }
        case .failure(let error):
            actions = readFailed(error, reading: name)
        }
        return actions + finishReading(name, state)
    }

    /// The answer to `.readVersions`.
    package mutating func versionsRead(_ result: Result<[StoredVersion], any Error>, since: Int, _ state: FollowedState) -> [Action] {
        var actions: [Action] = []
        switch result {
        case .success(let versions):
            retryDelay = .milliseconds(200)
            var stored = Set<String>()
            var skipped = false
            for entry in versions {
                stored.insert(entry.name)
                newestKnown[entry.name] = max(newestKnown[entry.name] ?? 0, entry.version)
                if state.hasInFlight(dataSource: entry.name) || (lastTouch[entry.name] ?? 0) > since {
                    skipped = true
                    continue
                }
                let served = state.served(entry.name)
                if served?.incarnation != entry.incarnation || entry.version > served?.version ?? -1 { actions += catchUp(entry.name, state) }
            }
            for name in state.servedNames where !stored.contains(name) {
                if state.hasInFlight(dataSource: name) || (lastTouch[name] ?? 0) > since {
                    skipped = true
                } else {
                    newestKnown[name] = nil
                    actions.append(.drop(dataSource: name))
                }
            }
            if skipped { actions.append(.scheduleComparison(Self.comparisonDelay)) }
        case .failure(let error):
            actions = readFailed(error, reading: nil)
        }
        if comparison.finish().runAgain { actions.append(.readVersions(since: touches)) }
        return actions
    }

    /// The answer to `.readRegistrations`.
    package mutating func registrationsRead(_ result: Result<[Registration], any Error>, since: Int, _ state: FollowedState) -> [Action] {
        var actions: [Action] = []
        switch result {
        case .success(let registrations):
            if state.hasRegistrationsInFlight {
                pendingRegistrations = true  // read again once it is stored (`localChangesDurable`)
            } else if registrationsTouched > since {
                registrationRead.askAgain()  // a local change came between and is stored: read again now
            } else {
                actions.append(.restoreRegistrations(registrations))
            }
        case .failure(let error):
            actions = readFailed(error, reading: nil)
        }
        let finished = registrationRead.finish()
        actions.append(finished.runAgain ? .readRegistrations(since: touches) : .resolve(finished.waiting))
        return actions
    }

    /// A local group is durable: what other instances committed to those data sources meanwhile could
    /// not be applied while it was in flight.
    package mutating func localChangesDurable(_ names: Set<String>, _ state: FollowedState) -> [Action] {
        var actions: [Action] = []
        for name in names.sorted() {
            if let served = state.served(name), (newestKnown[name] ?? 0) > served.version, !state.hasInFlight(dataSource: name) {
                actions += catchUp(name, state)
            }
        }
        if pendingRegistrations, !state.hasRegistrationsInFlight {
            pendingRegistrations = false
            actions += loadRegistrations()
        }
        return actions
    }

    /// The delay of `.scheduleRetry` passed.
    package mutating func retryTimerFired() -> [Action] {
        retryScheduled = false
        return compare() + loadRegistrations()
    }

    /// The delay of `.scheduleComparison` passed.
    package mutating func compareTimerFired() -> [Action] { compare() }

    // MARK: Decisions

    private mutating func read(_ name: String, _ state: FollowedState) -> [Action] {
        guard let served = state.served(name) else { return [.readWhole(dataSource: name, since: touches)] }
        return [.readChanges(dataSource: name, after: served.version, incarnation: served.incarnation)]
    }

    private mutating func finishReading(_ name: String, _ state: FollowedState) -> [Action] {
        guard let finished = reads[name]?.finish() else { return [] }
        if finished.runAgain { return read(name, state) }
        reads[name] = nil
        return finished.waiting.isEmpty ? [] : [.resolve(finished.waiting)]
    }

    /// A read of the store failed (it went away, or this connection to it broke): compare everything
    /// again after a delay, so a change whose notice came while the store could not be read is not
    /// missed until the next notice.
    private mutating func readFailed(_ error: any Error, reading name: String?) -> [Action] {
        readFailures += 1
        var actions: [Action] = [.logReadFailure(dataSource: name, error: "\(error)")]
        guard !retryScheduled else { return actions }
        retryScheduled = true
        actions.append(.scheduleRetry(retryDelay))
        retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
        return actions
    }
}

/// A read that runs one at a time. Asked for while it runs, it runs once more afterwards (what it
/// read may predate the ask); those waiting are told once a run ends with no other due.
struct SerialRead {
    private(set) var isRunning = false
    private var again = false
    private var waiting: [Deferred<Void>] = []

    /// Asks for a run (`done` resolves after one that started after this ask). Returns true when the
    /// caller starts it now; false when it runs after the current one.
    mutating func ask(_ done: Deferred<Void>? = nil) -> Bool {
        if let done { waiting.append(done) }
        if isRunning {
            again = true
            return false
        }
        isRunning = true
        return true
    }

    /// Makes another run due after the current one.
    mutating func askAgain() { again = true }

    /// The current run ended: whether the caller starts the next one now, else what waited (the read is
    /// then idle).
    mutating func finish() -> (runAgain: Bool, waiting: [Deferred<Void>]) {
        if again {
            again = false
            return (true, [])
        }
        isRunning = false
        defer { waiting = [] }
        return (false, waiting)
    }
}
