import CellCore
import ListEngine
import ListStore
import Logging
import NIOCore
import NIOPosix

/// Keeps this instance's state up to date with what the other listd instances sharing the store commit.
///
/// The store's notices say that something changed; the follower reads what on a thread of its own
/// (`reader`) and applies it on the event loop:
/// - a data source's new versions are applied change by change through the commit path (without
///   storing them again), so this instance's views get the same `changes` events, in version order;
/// - a data source that cannot be followed change by change (its log was trimmed past the version
///   held here, or it was dropped and made again) is read whole: its views reload, or are told it was
///   dropped;
/// - data sources created or dropped elsewhere, and registrations, are compared with the store.
///
/// What a local mutation still in flight touches is left alone until that mutation is durable (or
/// undone): until then the local state is ahead of the store, and the write decides which change won.
final class StoreFollower {
    let store: SharedStore
    private unowned let state: ServerState
    private let pipeline: CommitPipeline
    private let loop: EventLoop
    /// The thread the store is read on.
    let reader: NIOThreadPool
    private let logger: Logger

    /// The reads under way: of each data source, of every data source's version, of the registrations.
    private var reads: [String: SerialRead] = [:]
    private var comparison = SerialRead()
    private var registrationRead = SerialRead()
    /// Registrations to read again once the local registration change in flight is stored.
    private var pendingRegistrations = false
    /// Local changes, counted, and the count at each data source's (and the registrations') last one:
    /// a comparison read before a local change does not undo it.
    private var touches = 0
    private var lastTouch: [String: Int] = [:]
    private var registrationsTouched = 0

    /// The newest version of each data source the store is known to have.
    private(set) var newestKnown: [String: Int] = [:]
    /// Counters for `stats`.
    private(set) var changesFollowed = 0
    private(set) var dataSourcesReloaded = 0
    private(set) var noticesReceived = 0
    private(set) var readFailures = 0

    init(store: SharedStore, state: ServerState, pipeline: CommitPipeline, loop: EventLoop, logger: Logger) {
        self.store = store
        self.state = state
        self.pipeline = pipeline
        self.loop = loop
        self.logger = logger
        reader = NIOThreadPool(numberOfThreads: 1)
        reader.start()
    }

    /// Starts following: the store's notices are handled on the event loop.
    func start() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        store.startFollowing { notice in
            loop.execute { bound.value.handle(notice) }
        }
        pipeline.durable = { names in bound.value.localChangesDurable(names) }
        pipeline.catchUp = { names, registrations in bound.value.catchUp(names, registrations: registrations) }
    }

    /// How many versions this instance is behind the newest the store is known to have, over all data
    /// sources (0 when caught up).
    var lag: Int {
        newestKnown.reduce(0) { total, entry in
            total + max(0, entry.value - (state.dataSources[entry.key]?.version ?? entry.value))
        }
    }

    /// A local change to a data source (`nil`: to the registrations) was applied.
    func touched(_ dataSource: String?) {
        touches += 1
        if let dataSource { lastTouch[dataSource] = touches } else { registrationsTouched = touches }
    }

    func handle(_ notice: StoreNotice) {
        noticesReceived += 1
        switch notice {
        case .changed(let name, let version):
            newestKnown[name] = max(newestKnown[name] ?? 0, version)
            if version > state.dataSources[name]?.version ?? -1 { _ = catchUp(name) }
        case .dataSources:
            compare()
        case .registrations:
            _ = loadRegistrations()
        case .resync:
            compare()
            _ = loadRegistrations()
        }
    }

    /// Brings the named data sources (and the registrations) up to the store; resolves once done.
    func catchUp(_ names: Set<String>, registrations: Bool) -> Deferred<Void> {
        var waiting = names.map { catchUp($0) }
        if registrations { waiting.append(loadRegistrations()) }
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

    /// Reads and applies the data source's versions after the one held here (reads it whole when it is
    /// not served here, or cannot be followed change by change); resolves once applied.
    func catchUp(_ name: String) -> Deferred<Void> {
        let done = Deferred<Void>()
        if reads[name, default: SerialRead()].ask(done) { read(name) }
        return done
    }

    private func read(_ name: String) {
        guard let dataSource = state.dataSources[name] else { return reloadWhole(name) { [self] in finishReading(name) } }
        let (version, incarnation) = (dataSource.version, dataSource.incarnation)
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        reader.runIfActive(eventLoop: loop) { () throws -> FollowedChanges in
            try store.changes(of: name, after: version)
        }.whenComplete { result in
            bound.value.read(name, incarnation: incarnation, result)
        }
    }

    private func read(_ name: String, incarnation: String, _ result: Result<FollowedChanges, Error>) {
        switch result {
        case .success(.changes(let stored, let changes)) where stored == incarnation:
            switch apply(changes, to: name, incarnation: incarnation) {
            case .applied: break
            case .readAgain: reads[name]?.askAgain()
            case .readWhole: return reloadWhole(name) { [self] in finishReading(name) }
            }
        case .success(.changes), .success(.gap):
            return reloadWhole(name) { [self] in finishReading(name) }
        case .success(.missing):
            compare()
        case .failure(let error):
            readFailed(error, reading: name)
        }
        finishReading(name)
    }

    private func finishReading(_ name: String) {
        guard let finished = reads[name]?.finish() else { return }
        if finished.runAgain { return read(name) }
        reads[name] = nil
        for entry in finished.waiting { entry.resolve(()) }
    }

    /// What applying the changes read left to do.
    private enum Applied {
        /// Nothing (or what remains waits for a local change in flight, which asks again once durable).
        case applied
        /// Read again from the version held now (the changes did not start right after it).
        case readAgain
        /// Read the data source whole (a change did not apply here).
        case readWhole
    }

    /// Applies changes read from the store, in order, from the version after the one held here.
    private func apply(_ changes: [FollowedChange], to name: String, incarnation: String) -> Applied {
        for change in changes {
            guard let dataSource = state.dataSources[name], dataSource.incarnation == incarnation, !pipeline.hasInFlight(dataSource: name) else {
                return .applied
            }
            if change.version <= dataSource.version { continue }
            guard change.version == dataSource.version + 1 else { return .readAgain }
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
        return .applied
    }

    /// Reads a data source whole and serves it as stored (its views reload, or learn it was dropped).
    private func reloadWhole(_ name: String, then done: @escaping () -> Void) {
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        let since = touches
        let finished = NIOLoopBound(done, eventLoop: loop)
        reader.runIfActive(eventLoop: loop) { () throws -> StoredDataSource? in
            try store.dataSource(named: name, atVersion: nil)
        }.whenComplete { result in
            let follower = bound.value
            defer { finished.value() }
            switch result {
            case .success(let stored):
                guard !follower.pipeline.hasInFlight(dataSource: name), (follower.lastTouch[name] ?? 0) <= since else {
                    follower.compareSoon()  // a local change came between: compare again once it is stored
                    return
                }
                if let stored {
                    if follower.state.serveFollowed(stored) { follower.dataSourcesReloaded += 1 }
                } else {
                    follower.state.dropFollowed(name)
                }
            case .failure(let error):
                follower.readFailed(error, reading: name)
            }
        }
    }

    /// Compares every data source with the store: serves the ones created elsewhere, drops the ones
    /// dropped elsewhere, reads the ones made again elsewhere whole, catches up the ones behind.
    func compare() {
        if comparison.ask() { readVersions() }
    }

    private func readVersions() {
        let since = touches
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        reader.runIfActive(eventLoop: loop) { () throws -> [StoredVersion] in try store.versions() }.whenComplete { result in
            bound.value.compared(result, since: since)
        }
    }

    private func compared(_ result: Result<[StoredVersion], Error>, since: Int) {
        switch result {
        case .success(let versions):
            retryDelay = .milliseconds(200)
            var stored = Set<String>()
            var skipped = false
            for entry in versions {
                stored.insert(entry.name)
                newestKnown[entry.name] = max(newestKnown[entry.name] ?? 0, entry.version)
                if pipeline.hasInFlight(dataSource: entry.name) || (lastTouch[entry.name] ?? 0) > since {
                    skipped = true
                    continue
                }
                let served = state.dataSources[entry.name]
                if served?.incarnation != entry.incarnation || entry.version > served?.version ?? -1 { _ = catchUp(entry.name) }
            }
            for name in state.dataSources.keys where !stored.contains(name) {
                if pipeline.hasInFlight(dataSource: name) || (lastTouch[name] ?? 0) > since {
                    skipped = true
                } else {
                    newestKnown[name] = nil
                    state.dropFollowed(name)
                }
            }
            if skipped { compareSoon() }
        case .failure(let error):
            readFailed(error, reading: nil)
        }
        if comparison.finish().runAgain { readVersions() }
    }

    /// Compares again shortly (a local change was in flight during the comparison).
    private func compareSoon() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(in: .milliseconds(50)) { bound.value.compare() }
    }

    /// Reads the registrations and makes them this instance's (unless a local change to them is in flight).
    func loadRegistrations() -> Deferred<Void> {
        let done = Deferred<Void>()
        if registrationRead.ask(done) { readRegistrations() }
        return done
    }

    private func readRegistrations() {
        let since = touches
        let store = self.store
        let bound = NIOLoopBound(self, eventLoop: loop)
        reader.runIfActive(eventLoop: loop) { () throws -> [Registration] in try store.storedRegistrations() }.whenComplete { result in
            let follower = bound.value
            switch result {
            case .success(let registrations):
                if follower.pipeline.hasRegistrationsInFlight {
                    follower.pendingRegistrations = true  // read again once it is stored (`localChangesDurable`)
                } else if follower.registrationsTouched > since {
                    follower.registrationRead.askAgain()  // a local change came between and is stored: read again now
                } else {
                    follower.state.restoreFollowedRegistrations(registrations)
                }
            case .failure(let error):
                follower.readFailed(error, reading: nil)
            }
            let finished = follower.registrationRead.finish()
            if finished.runAgain { return follower.readRegistrations() }
            for entry in finished.waiting { entry.resolve(()) }
        }
    }

    /// After a local group is durable: what other instances committed to those data sources meanwhile
    /// could not be applied while it was in flight.
    private func localChangesDurable(_ names: Set<String>) {
        for name in names {
            if let dataSource = state.dataSources[name], (newestKnown[name] ?? 0) > dataSource.version, !pipeline.hasInFlight(dataSource: name) {
                _ = catchUp(name)
            }
        }
        if pendingRegistrations, !pipeline.hasRegistrationsInFlight {
            pendingRegistrations = false
            _ = loadRegistrations()
        }
    }

    /// A read of the store failed (it went away, or this connection to it broke): compares everything
    /// again after a delay (0.2 s doubling to 5 s while reads keep failing), so a change whose notice
    /// came while the store could not be read is not missed until the next notice.
    private func readFailed(_ error: Error, reading name: String?) {
        readFailures += 1
        logger.warning(
            "cannot read what other instances committed; trying again", metadata: ["dataSource": "\(name ?? "*")", "error": "\(error)"])
        guard !retryScheduled else { return }
        retryScheduled = true
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, .seconds(5))
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(in: delay) {
            let follower = bound.value
            follower.retryScheduled = false
            follower.compare()
            _ = follower.loadRegistrations()
        }
    }

    /// The delay before comparing again after a failed read, and whether that comparison is scheduled.
    private var retryDelay = TimeAmount.milliseconds(200)
    private var retryScheduled = false
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
