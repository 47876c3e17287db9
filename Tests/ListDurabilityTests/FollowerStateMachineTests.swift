import CellCore
import ListDurability
import ListStore
import NIOCore
import Testing

/// The follower's decisions alone: events in, actions out, against a made-up instance (no store, no
/// loop, no threads).
@Suite("Follower state machine")
struct FollowerStateMachineTests {
    /// What the machine reads of an instance, set by each test.
    final class Instance: FollowedState {
        var dataSources: [String: (version: Int, incarnation: String)] = [:]
        var inFlight: Set<String> = []
        var registrationsInFlight = false

        func served(_ name: String) -> (version: Int, incarnation: String)? { dataSources[name] }
        var servedNames: [String] { dataSources.keys.sorted() }
        func hasInFlight(dataSource name: String) -> Bool { inFlight.contains(name) }
        var hasRegistrationsInFlight: Bool { registrationsInFlight }
    }

    struct ReadFailed: Error, CustomStringConvertible {
        var description: String { "connection lost" }
    }

    /// The actions as short strings (what each test compares).
    static func describe(_ actions: [FollowerStateMachine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .readChanges(let name, let after, let incarnation): return "readChanges \(name) after \(after) of \(incarnation)"
            case .readWhole(let name, let since): return "readWhole \(name) since \(since)"
            case .readVersions(let since): return "readVersions since \(since)"
            case .readRegistrations(let since): return "readRegistrations since \(since)"
            case .apply(let name, let incarnation, let changes): return "apply \(name) of \(incarnation): \(changes.map(\.version))"
            case .serve(let stored): return "serve \(stored.name) of \(stored.incarnation)"
            case .drop(let name): return "drop \(name)"
            case .restoreRegistrations(let registrations): return "restoreRegistrations \(registrations.map(\.name))"
            case .resolve(let waiting): return "resolve \(waiting.count)"
            case .logReadFailure(let name, let error): return "log \(name ?? "*"): \(error)"
            case .scheduleRetry(let delay): return "retry in \(delay.nanoseconds / 1_000_000) ms"
            case .scheduleComparison(let delay): return "compare in \(delay.nanoseconds / 1_000_000) ms"
            }
        }
    }

    static func change(_ version: Int) -> FollowedChange {
        FollowedChange(version: version, operation: .edit(.deleteAllItems), changes: nil)
    }

    static func stored(_ name: String, _ incarnation: String) -> StoredDataSource {
        StoredDataSource(name: name, incarnation: incarnation, checkpoint: DataSourceContent(), checkpointBytes: 0)
    }

    @Test func aNoticeOfANewerVersionReadsTheChangesAfterTheOneHeld() {
        let instance = Instance()
        instance.dataSources["d"] = (3, "i")
        var machine = FollowerStateMachine()
        #expect(Self.describe(machine.notice(.changed(dataSource: "d", version: 3), instance)) == [], "not newer")
        #expect(Self.describe(machine.notice(.changed(dataSource: "d", version: 5), instance)) == ["readChanges d after 3 of i"])
        #expect(machine.lag(instance) == 2)
        // A second notice while the read runs asks for one more read after it, not a second read now.
        #expect(Self.describe(machine.notice(.changed(dataSource: "d", version: 6), instance)) == [])
        let read = machine.changesRead("d", incarnation: "i", .success(.changes(incarnation: "i", [Self.change(4), Self.change(5)])), instance)
        #expect(Self.describe(read) == ["apply d of i: [4, 5]"])
        instance.dataSources["d"] = (5, "i")
        #expect(Self.describe(machine.changesApplied("d", .applied, instance)) == ["readChanges d after 5 of i"], "the read asked for meanwhile")
        instance.dataSources["d"] = (6, "i")
        #expect(Self.describe(machine.changesApplied("d", .applied, instance)) == [])
        #expect(machine.lag(instance) == 0)
        #expect(machine.noticesReceived == 3)
    }

    @Test func aDataSourceNotServedHereOrMadeAgainIsReadWhole() {
        let instance = Instance()
        var machine = FollowerStateMachine()
        #expect(Self.describe(machine.notice(.changed(dataSource: "new", version: 1), instance)) == ["readWhole new since 0"])
        #expect(Self.describe(machine.wholeRead("new", since: 0, .success(Self.stored("new", "j")), instance)) == ["serve new of j"])
        instance.dataSources["d"] = (2, "i")
        _ = machine.notice(.changed(dataSource: "d", version: 3), instance)
        let otherIncarnation = machine.changesRead("d", incarnation: "i", .success(.changes(incarnation: "k", [])), instance)
        #expect(Self.describe(otherIncarnation) == ["readWhole d since 0"])
        #expect(Self.describe(machine.wholeRead("d", since: 0, .success(nil), instance)) == ["drop d"], "no longer stored")
    }

    @Test func aGapOrAChangeThatDoesNotApplyReadsWhole() {
        let instance = Instance()
        instance.dataSources["d"] = (1, "i")
        var machine = FollowerStateMachine()
        _ = machine.notice(.changed(dataSource: "d", version: 9), instance)
        #expect(Self.describe(machine.changesRead("d", incarnation: "i", .success(.gap(incarnation: "i")), instance)) == ["readWhole d since 0"])
        #expect(Self.describe(machine.wholeRead("d", since: 0, .success(Self.stored("d", "i")), instance)) == ["serve d of i"])
        _ = machine.notice(.changed(dataSource: "d", version: 10), instance)
        _ = machine.changesRead("d", incarnation: "i", .success(.changes(incarnation: "i", [Self.change(2)])), instance)
        #expect(Self.describe(machine.changesApplied("d", .readWhole, instance)) == ["readWhole d since 0"])
    }

    @Test func eachChangeReadIsAppliedSkippedOrStopsTheRun() {
        let served = (version: 4, incarnation: "i")
        #expect(FollowerStateMachine.step(version: 5, incarnation: "i", served: served, inFlight: false) == .apply)
        #expect(FollowerStateMachine.step(version: 4, incarnation: "i", served: served, inFlight: false) == .skip)
        #expect(FollowerStateMachine.step(version: 7, incarnation: "i", served: served, inFlight: false) == .readAgain)
        #expect(FollowerStateMachine.step(version: 5, incarnation: "i", served: served, inFlight: true) == .stop)
        #expect(FollowerStateMachine.step(version: 5, incarnation: "j", served: served, inFlight: false) == .stop)
        #expect(FollowerStateMachine.step(version: 5, incarnation: "i", served: nil, inFlight: false) == .stop)
    }

    @Test func aWholeReadIsNotServedOverALocalChange() {
        let instance = Instance()
        var machine = FollowerStateMachine()
        _ = machine.notice(.changed(dataSource: "d", version: 1), instance)  // readWhole since 0
        machine.touched("d")  // a local change came between
        #expect(Self.describe(machine.wholeRead("d", since: 0, .success(Self.stored("d", "i")), instance)) == ["compare in 50 ms"])
        instance.inFlight = ["d"]
        _ = machine.notice(.changed(dataSource: "d", version: 2), instance)  // readWhole since 1
        #expect(Self.describe(machine.wholeRead("d", since: 1, .success(nil), instance)) == ["compare in 50 ms"], "not dropped while in flight")
    }

    @Test func aComparisonCatchesUpServesAndDropsButLeavesLocalChangesAlone() {
        let instance = Instance()
        instance.dataSources = ["behind": (1, "i"), "same": (4, "i"), "gone": (2, "i"), "mine": (1, "i")]
        instance.inFlight = ["mine"]
        var machine = FollowerStateMachine()
        #expect(Self.describe(machine.notice(.dataSources, instance)) == ["readVersions since 0"])
        #expect(Self.describe(machine.compare()) == [], "one comparison at a time")
        let versions = [
            StoredVersion(name: "behind", incarnation: "i", version: 3), StoredVersion(name: "same", incarnation: "i", version: 4),
            StoredVersion(name: "created", incarnation: "c", version: 1),
        ]
        let actions = Self.describe(machine.versionsRead(.success(versions), since: 0, instance))
        #expect(actions == ["readChanges behind after 1 of i", "readWhole created since 0", "drop gone", "compare in 50 ms", "readVersions since 0"])
        #expect(machine.newestKnown["behind"] == 3)
    }

    @Test func registrationsWaitForALocalRegistrationChange() {
        let instance = Instance()
        let row = try! Registration(name: "row", definition: ["contentConfiguration": ["type": "cell"]])
        var machine = FollowerStateMachine()
        let done = Deferred<Void>()
        #expect(Self.describe(machine.loadRegistrations(done: done)) == ["readRegistrations since 0"])
        instance.registrationsInFlight = true
        #expect(Self.describe(machine.registrationsRead(.success([row]), since: 0, instance)) == ["resolve 1"], "not restored over it")
        instance.registrationsInFlight = false
        #expect(Self.describe(machine.localChangesDurable([], instance)) == ["readRegistrations since 0"], "read again once durable")
        machine.touched(nil)
        #expect(Self.describe(machine.registrationsRead(.success([row]), since: 0, instance)) == ["readRegistrations since 1"])
        #expect(Self.describe(machine.registrationsRead(.success([row]), since: 1, instance)) == ["restoreRegistrations [\"row\"]", "resolve 0"])
    }

    @Test func failedReadsAreRetriedWithAGrowingDelay() {
        let instance = Instance()
        instance.dataSources["d"] = (1, "i")
        var machine = FollowerStateMachine()
        _ = machine.notice(.changed(dataSource: "d", version: 2), instance)
        let failed = machine.changesRead("d", incarnation: "i", .failure(ReadFailed()), instance)
        #expect(Self.describe(failed) == ["log d: connection lost", "retry in 200 ms"])
        var delays: [String] = []
        for _ in 0..<6 {
            let retried = Self.describe(machine.retryTimerFired())
            #expect(retried == ["readVersions since 0", "readRegistrations since 0"])
            let versions = Self.describe(machine.versionsRead(.failure(ReadFailed()), since: 0, instance))
            delays += versions.filter { $0.hasPrefix("retry") }
            let registrations = Self.describe(machine.registrationsRead(.failure(ReadFailed()), since: 0, instance))
            #expect(!registrations.contains { $0.hasPrefix("retry") }, "one retry scheduled at a time")
        }
        #expect(delays == ["retry in 400 ms", "retry in 800 ms", "retry in 1600 ms", "retry in 3200 ms", "retry in 5000 ms", "retry in 5000 ms"])
        #expect(machine.readFailures == 13)
        // A comparison that reads again resets the delay.
        _ = machine.retryTimerFired()
        _ = machine.versionsRead(.success([StoredVersion(name: "d", incarnation: "i", version: 1)]), since: 0, instance)
        _ = machine.registrationsRead(.success([]), since: 0, instance)
        let next = Self.describe(machine.changesRead("d", incarnation: "i", .failure(ReadFailed()), instance))
        #expect(next.last == "retry in 200 ms")
    }

    @Test func catchUpWaitersResolveAfterAReadThatStartedAfterThem() {
        let instance = Instance()
        instance.dataSources["d"] = (1, "i")
        var machine = FollowerStateMachine()
        let first = Deferred<Void>()
        #expect(Self.describe(machine.catchUp("d", done: first, instance)) == ["readChanges d after 1 of i"])
        let second = Deferred<Void>()
        #expect(Self.describe(machine.catchUp("d", done: second, instance)) == [])
        // The first read ends: the second waiter's read runs; both resolve when it ends.
        _ = machine.changesRead("d", incarnation: "i", .success(.changes(incarnation: "i", [])), instance)
        #expect(Self.describe(machine.changesApplied("d", .applied, instance)) == ["readChanges d after 1 of i"])
        _ = machine.changesRead("d", incarnation: "i", .success(.changes(incarnation: "i", [])), instance)
        #expect(Self.describe(machine.changesApplied("d", .applied, instance)) == ["resolve 2"])
    }

    @Test func aDurableLocalGroupCatchesUpWhatWaitedForIt() {
        let instance = Instance()
        instance.dataSources = ["d": (2, "i"), "e": (5, "i")]
        instance.inFlight = ["d"]
        var machine = FollowerStateMachine()
        let waited = machine.changesRead("d", incarnation: "i", .success(.changes(incarnation: "i", [])), instance)
        #expect(Self.describe(waited) == ["apply d of i: []"])
        _ = machine.notice(.changed(dataSource: "d", version: 4), instance)
        _ = machine.changesApplied("d", .applied, instance)
        instance.inFlight = []
        #expect(Self.describe(machine.localChangesDurable(["d", "e"], instance)) == ["readChanges d after 2 of i"], "e is not behind")
    }
}
