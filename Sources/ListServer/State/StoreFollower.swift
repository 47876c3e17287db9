import CellCore
import ListDurability
import ListEngine
import ListStore
import Logging
import NIOCore
import NIOPosix

/// Keeps this instance's state up to date with what the other listd instances sharing the store commit:
/// the driver of `FollowerStateMachine`, which decides what to read and apply when. The store's notices
/// say that something changed; the follower reads what on a thread of its own (`reader`) and carries out
/// the machine's actions on the event loop: a data source's new versions are applied change by change
/// through the commit path (without storing them again), so this instance's views get the same
/// `changes` events, in version order; a data source read whole is served through the engine (its
/// views reload, or are told it was dropped).
final class StoreFollower {
    let store: SharedStore
    private unowned let state: ServerState
    private let pipeline: CommitPipeline
    private let loop: EventLoop
    /// The thread the store is read on.
    let reader: NIOThreadPool
    private let logger: Logger
    private var machine = FollowerStateMachine()

    /// Counters for `stats` (the machine keeps the others).
    private(set) var changesFollowed = 0
    private(set) var dataSourcesReloaded = 0
    var noticesReceived: Int { machine.noticesReceived }
    var readFailures: Int { machine.readFailures }

    init(store: SharedStore, state: ServerState, pipeline: CommitPipeline, loop: EventLoop, logger: Logger) {
        self.store = store
        self.state = state
        self.pipeline = pipeline
        self.loop = loop
        self.logger = logger
        reader = NIOThreadPool(numberOfThreads: 1)
        reader.start()
    }

    /// What the machine reads of this instance.
    private var followed: Followed { Followed(state: state, pipeline: pipeline) }

    /// Starts following: the store's notices are handled on the event loop.
    func start() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        store.startFollowing { notice in
            loop.execute { bound.value.handle(notice) }
        }
        pipeline.durable = { names in
            let follower = bound.value
            follower.run(follower.machine.localChangesDurable(names, follower.followed))
        }
        pipeline.catchUp = { names, registrations in bound.value.catchUp(names, registrations: registrations) }
    }

    /// How many versions this instance is behind the newest the store is known to have, over all data
    /// sources (0 when caught up).
    var lag: Int { machine.lag(followed) }

    /// The newest version of each data source the store is known to have.
    var newestKnown: [String: Int] { machine.newestKnown }

    /// A local change to a data source (`nil`: to the registrations) was applied.
    func touched(_ dataSource: String?) { machine.touched(dataSource) }

    func handle(_ notice: StoreNotice) { run(machine.notice(notice, followed)) }

    /// Compares every data source with the store.
    func compare() { run(machine.compare()) }

    /// Brings the named data sources (and the registrations) up to the store; resolves once done.
    func catchUp(_ names: Set<String>, registrations: Bool) -> Deferred<Void> {
        var waiting: [Deferred<Void>] = []
        for name in names {
            let done = Deferred<Void>()
            waiting.append(done)
            run(machine.catchUp(name, done: done, followed))
        }
        if registrations {
            let done = Deferred<Void>()
            waiting.append(done)
            run(machine.loadRegistrations(done: done))
        }
        let done = Deferred<Void>()
        var remaining = waiting.count
        if remaining == 0 { done.resolve(()) }
        for entry in waiting {
            entry.whenResolved {
                remaining -= 1
                if remaining == 0 { done.resolve(()) }
            }
        }
        return done
    }

    /// Carries out the machine's actions, in order.
    private func run(_ actions: [FollowerStateMachine.Action]) {
        for action in actions { perform(action) }
    }

    private func perform(_ action: FollowerStateMachine.Action) {
        let bound = NIOLoopBound(self, eventLoop: loop)
        let store = self.store
        switch action {
        case .readChanges(let name, let version, let incarnation):
            reader.runIfActive(eventLoop: loop) { () throws -> FollowedChanges in try store.changes(of: name, after: version) }
                .whenComplete { result in
                    let follower = bound.value
                    follower.run(follower.machine.changesRead(name, incarnation: incarnation, result, follower.followed))
                }
        case .readWhole(let name, let since):
            reader.runIfActive(eventLoop: loop) { () throws -> StoredDataSource? in try store.dataSource(named: name, atVersion: nil) }
                .whenComplete { result in
                    let follower = bound.value
                    follower.run(follower.machine.wholeRead(name, since: since, result, follower.followed))
                }
        case .readVersions(let since):
            reader.runIfActive(eventLoop: loop) { () throws -> [StoredVersion] in try store.versions() }.whenComplete { result in
                let follower = bound.value
                follower.run(follower.machine.versionsRead(result, since: since, follower.followed))
            }
        case .readRegistrations(let since):
            reader.runIfActive(eventLoop: loop) { () throws -> [Registration] in try store.storedRegistrations() }.whenComplete { result in
                let follower = bound.value
                follower.run(follower.machine.registrationsRead(result, since: since, follower.followed))
            }
        case .apply(let name, let incarnation, let changes):
            run(machine.changesApplied(name, apply(changes, to: name, incarnation: incarnation), followed))
        case .serve(let stored):
            if state.serveFollowed(stored) { dataSourcesReloaded += 1 }
        case .drop(let name):
            state.dropFollowed(name)
        case .restoreRegistrations(let registrations):
            state.restoreFollowedRegistrations(registrations)
        case .resolve(let waiting):
            for entry in waiting { entry.resolve(()) }
        case .logReadFailure(let name, let error):
            logger.warning("cannot read what other instances committed; trying again", metadata: ["dataSource": "\(name ?? "*")", "error": "\(error)"])
        case .scheduleRetry(let delay):
            loop.scheduleTask(in: delay) {
                let follower = bound.value
                follower.run(follower.machine.retryTimerFired())
            }
        case .scheduleComparison(let delay):
            loop.scheduleTask(in: delay) {
                let follower = bound.value
                follower.run(follower.machine.compareTimerFired())
            }
        }
    }

    /// Applies changes read from the store, in order, from the version after the one held here.
    private func apply(_ changes: [FollowedChange], to name: String, incarnation: String) -> FollowerStateMachine.Applied {
        for change in changes {
            let served = state.dataSources[name].map { (version: $0.version, incarnation: $0.incarnation) }
            switch FollowerStateMachine.step(
                version: change.version, incarnation: incarnation, served: served, inFlight: pipeline.hasInFlight(dataSource: name))
            {
            case .stop: return .applied
            case .skip: continue
            case .readAgain: return .readAgain
            case .apply:
                do {
                    try state.publishFollowed(
                        .dataSource(name: name, ifVersion: change.version - 1, createAs: nil, change.operation), storedEvent: change.changes)
                    changesFollowed += 1
                } catch {
                    logger.error(
                        "a change another instance committed does not apply here; reading the data source whole",
                        metadata: ["dataSource": "\(name)", "version": "\(change.version)", "error": "\(error.message)"])
                    return .readWhole
                }
            }
        }
        return .applied
    }

    /// This instance as the machine reads it.
    private struct Followed: FollowedState {
        unowned let state: ServerState
        let pipeline: CommitPipeline

        func served(_ name: String) -> (version: Int, incarnation: String)? {
            state.dataSources[name].map { ($0.version, $0.incarnation) }
        }

        var servedNames: [String] { Array(state.dataSources.keys) }
        func hasInFlight(dataSource name: String) -> Bool { pipeline.hasInFlight(dataSource: name) }
        var hasRegistrationsInFlight: Bool { pipeline.hasRegistrationsInFlight }
    }
}
