import CellCore
import DiffableCore
import ListDurability
import ListEngine
import ListStore
import ListWire
import NIOConcurrencyHelpers
import NIOCore
import StoreTestKit
import TestSupport
import Testing

@Suite("Commit pipeline over the engine: grouping, parking, undo, probing, checkpoints, sync and backup against a store that fails on demand")
struct CommitPipelineTests {
    /// Mutations that arrive while the writer writes wait in the open group and are written as one.
    /// (`numbered`, here and below: the changes are reported by number, once per group, as the server
    /// does without other instances; else each waits with a `Deferred` of its own.)
    @Test(arguments: [false, true]) func mutationsArrivingDuringAWriteAreWrittenAsOneGroup(numbered: Bool) throws {
        let durable = try DurableEngine(numbered: numbered)
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        durable.faults.holdWrites()
        let first = durable.commit(append(["a"]))
        try waitUntil("the writer to take the first group") { durable.faults.calls(.write) == 2 }
        let rest = (0..<9).map { durable.commit(append(["b\($0)"])) }
        #expect(try durable.onLoop { _, pipeline in pipeline.mustPark(mutation: false) }, "a read waits while changes are in flight")
        #expect(try durable.onLoop { _, pipeline in pipeline.writesInFlight } == 10)
        durable.faults.releaseWrites()
        #expect(try first.waitBounded() == nil)
        for future in rest { #expect(try future.waitBounded() == nil) }
        #expect(durable.faults.groups == [2, 1, 9], "the nine that arrived during the second write made the third group (records: creating is two)")
        let stats = try durable.onLoop { _, pipeline in pipeline.stats }
        #expect((stats.groupsWritten, stats.mutationsWritten, stats.recordsWritten) == (3, 11, 12))
        #expect(try durable.onLoop { _, pipeline in pipeline.writesInFlight } == 0)
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// A read that arrives while a change is in flight runs once it is durable, and sees it.
    @Test func aParkedReadRunsAfterTheGroupIsDurable() throws {
        let durable = try DurableEngine()
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        durable.faults.holdWrites()
        let pending = durable.commit(append(["a"]))
        let seen = try durable.onLoop { engine, pipeline -> EventLoopFuture<Int> in
            let promise = durable.loop.makePromise(of: Int.self)
            #expect(pipeline.mustPark(mutation: false))
            #expect(!pipeline.mustPark(mutation: true), "a mutation does not wait for one in flight")
            pipeline.park { promise.succeed(engine.dataSources["d"]!.snapshot.numberOfItems) }
            #expect(pipeline.mustPark(mutation: true), "a mutation waits behind a parked read")
            return promise.futureResult
        }
        durable.faults.releaseWrites()
        #expect(try pending.waitBounded() == nil)
        #expect(try seen.waitBounded() == 1, "the parked read saw the durable change")
        #expect(try durable.onLoop { _, pipeline in pipeline.mustPark(mutation: false) } == false)
        try durable.close()
    }

    /// A change that changes nothing stores nothing, and answers as a read does: once the changes before it
    /// are durable.
    @Test func anUnchangedChangeAnswersOnceTheChangesBeforeItAreDurable() throws {
        let durable = try DurableEngine()
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        durable.faults.holdWrites()
        let pending = durable.commit(append(["a"]))
        try waitUntil("the writer to take the group") { durable.faults.calls(.write) == 2 }
        let answered = NIOLockedValueBox(false)
        let unchanged = durable.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.deleteItems(["ghost"]))))
        unchanged.whenComplete { _ in answered.withLockedValue { $0 = true } }
        try durable.onLoop { _, _ in }  // the commit ran on the loop; an immediate answer would be in by now
        #expect(!answered.withLockedValue { $0 }, "answered before the change before it was durable")
        durable.faults.releaseWrites()
        #expect(try pending.waitBounded() == nil)
        #expect(try unchanged.waitBounded() == nil)
        #expect(durable.faults.calls(.write) == 2, "the unchanged change wrote nothing")
        try durable.close()
    }

    /// A failed write undoes its group and every later mutation in memory, newest first, without
    /// reading a data source back; every one of them fails; the server is told what undoing did (for
    /// its views); the next change is stored.
    @Test(arguments: [false, true]) func aFailedWriteIsUndoneInMemory(numbered: Bool) throws {
        let durable = try DurableEngine(numbered: numbered)
        let row = try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell", "text": "{{n}}"]])
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        #expect(try durable.commit(append(["kept"])).waitBounded() == nil)
        #expect(try durable.commit(.register(row)).waitBounded() == nil)
        let before = try durable.memory()
        durable.faults.holdWrites()
        durable.faults.fail(.write)
        let failing = [
            durable.commit(append(["x"])),
            durable.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.deleteItems(["kept"])))),
            durable.commit(append(["y"], to: "e", create: true)),
            durable.commit(.register(try Registration(name: "r", definition: ["contentConfiguration": ["type": "cell", "text": "{{n}}"]]))),
            durable.commit(.replaceRegistration(try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell", "text": "x"]]))),
            durable.commit(.dropDataSource(name: "d")),
        ]
        durable.faults.releaseWrites()
        for future in failing { #expect(try future.waitBounded()?.code == .storageFailed) }
        #expect(try durable.memory() == before, "memory is as it was before the failed group")
        #expect(try durable.onLoop { engine, _ in engine.dataSources.keys.sorted() } == ["d"])
        #expect(try durable.onLoop { engine, _ in engine.dataSources["d"]!.model === engine.model.dataSources["d"]! })
        #expect(try durable.undone() == [#"touched ["d", "e"] gone ["e"] registrations ["0:r deleted", "0:row replaced"]"#])
        #expect(durable.faults.dataSourcesRead.isEmpty, "nothing was read back from the store")
        #expect(try durable.stored() == before)
        try waitUntil("the probe to find the store readable") { durable.faults.calls(.load) >= 1 }
        #expect(try durable.onLoop { _, pipeline in pipeline.unavailableReason } == nil)
        #expect(try durable.onLoop { _, pipeline in (pipeline.writeFailures, pipeline.conflicts, pipeline.isIdle) } == (1, 0, true))
        #expect(try durable.commit(append(["z"])).waitBounded() == nil)
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// Undoing an unregister gives the registration back: the server is told it was made again.
    @Test func anUndoneUnregisterMakesTheRegistrationAgain() throws {
        let durable = try DurableEngine()
        #expect(try durable.commit(.register(try Registration(name: "r", definition: ["contentConfiguration": ["type": "cell"]]))).waitBounded() == nil)
        durable.faults.fail(.write)
        #expect(try durable.commit(.unregister(name: "r")).waitBounded()?.code == .storageFailed)
        #expect(try durable.onLoop { engine, _ in engine.model.registration(named: "r", owner: 0) != nil })
        #expect(try durable.undone() == [#"touched [] gone [] registrations ["0:r created"]"#])
        try durable.close()
    }

    /// A store that cannot be read after a failed write: changes are refused at once with the reason,
    /// reads go on; the store is probed again with backoff and takes changes once it answers.
    @Test func anUnreadableStoreRefusesChangesUntilItAnswers() throws {
        let durable = try DurableEngine()
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        #expect(try durable.commit(append(["a"])).waitBounded() == nil)
        durable.faults.failAlways(.write)
        durable.faults.failAlways(.load)
        #expect(try durable.commit(append(["b"])).waitBounded()?.code == .storageFailed)
        try waitUntil("the store to be unavailable") { try durable.onLoop { _, pipeline in pipeline.unavailableReason != nil } }
        let refused = try durable.commit(append(["c"])).waitBounded()
        #expect(refused?.code == .storageFailed && refused?.message.contains("cannot be read") == true, "\(String(describing: refused))")
        let writesWhileRefused = durable.faults.calls(.write)
        #expect(try durable.onLoop { engine, _ in engine.dataSources["d"]!.snapshot.itemIdentifiers } == ["a"])
        try waitUntil("a second probe") { durable.faults.calls(.load) >= 2 }
        #expect(durable.faults.calls(.write) == writesWhileRefused, "refused changes never reach the store")
        durable.faults.heal()
        try waitUntil("the store to answer again") { try durable.onLoop { _, pipeline in pipeline.unavailableReason == nil } }
        #expect(try durable.onLoop { _, pipeline in pipeline.restoreRetries } >= 1)
        #expect(try durable.commit(append(["d"])).waitBounded() == nil)
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// A write that loses against another instance's (a shared store, the same version) is a conflict:
    /// requests wait until the undone data sources are caught up, then the mutations fail (the router
    /// runs them again), and no probe is made.
    @Test func aConflictWaitsForTheCatchUpBeforeFailing() throws {
        let shared = MemorySharedStore()
        let durable = try DurableEngine(store: shared)
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        let caughtUp = try durable.onLoop { _, pipeline -> NIOLoopBound<Deferred<Void>> in
            let done = Deferred<Void>()
            pipeline.catchUp = { names, registrations in
                #expect(names == ["d"] && !registrations)
                return done
            }
            return NIOLoopBound(done, eventLoop: durable.loop)
        }
        shared.commitAsOther("d", .edit(.appendItems([Item("theirs")], toSection: "s")), notify: false)
        let answered = NIOLockedValueBox<WireError??>(nil)
        durable.commit(append(["mine"])).whenSuccess { error in answered.withLockedValue { $0 = .some(error) } }
        try waitUntil("the conflict") { try durable.onLoop { _, pipeline in pipeline.conflicts } == 1 }
        #expect(try durable.onLoop { _, pipeline in (pipeline.mustPark(mutation: true), pipeline.isIdle) } == (true, false), "requests wait")
        #expect(answered.withLockedValue { $0 } == nil, "not failed before the catch-up")
        try durable.onLoop { _, _ in caughtUp.value.resolve(()) }
        try waitUntil("the failure") { answered.withLockedValue { $0 } != nil }
        let error = try #require(answered.withLockedValue { $0 } ?? nil)
        #expect(error.code == .storageFailed && error.details["conflict"] == true, "\(error)")
        #expect(try durable.onLoop { _, pipeline in (pipeline.mustPark(mutation: true), pipeline.isIdle, pipeline.unavailableReason) } == (false, true, nil))
        try durable.close()
    }

    /// A checkpoint that fails leaves the log to the next one; the state stored stays the state served.
    @Test func aFailedCheckpointIsScheduledAgain() throws {
        let durable = try DurableEngine()
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        durable.faults.fail(.checkpoint)
        let large = String(repeating: "x", count: 400_000)
        func appendLarge(_ id: String) -> StateChange {
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems([Item(id, data: ["text": .string(large)])], toSection: "s")))
        }
        for index in 0..<3 { #expect(try durable.commit(appendLarge("a\(index)")).waitBounded() == nil) }
        try waitUntil("the first checkpoint to be tried") { durable.faults.calls(.checkpoint) >= 1 }
        for index in 0..<3 { #expect(try durable.commit(appendLarge("b\(index)")).waitBounded() == nil) }
        try waitUntil("a checkpoint to be written") { try durable.onLoop { _, pipeline in pipeline.stats.checkpointsWritten } >= 1 }
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// The periodic sync tries again after a failure.
    @Test func aFailedSyncIsTriedAgain() throws {
        let durable = try DurableEngine()
        try durable.onLoop { _, pipeline in pipeline.startPeriodicSync() }
        durable.faults.fail(.sync)
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        try waitUntil("a sync after the failed one") { durable.faults.calls(.sync) >= 2 }
        try durable.close()
    }

    /// A failed backup is reported to the caller; the next one succeeds.
    @Test func aFailedBackupIsReported() throws {
        let durable = try DurableEngine()
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        durable.faults.fail(.backup)
        func backup() throws -> Int {
            let future = try durable.onLoop { _, pipeline -> EventLoopFuture<Int> in
                let promise = durable.loop.makePromise(of: Int.self)
                pipeline.backup { result in promise.completeWith(result.map(\.count)) }
                return promise.futureResult
            }
            return try future.waitBounded()
        }
        #expect(throws: (any Error).self) { try backup() }
        #expect(try backup() > 0)
        try durable.close()
    }

    /// Random changes (some refused, some in groups that fail) against a store whose writes fail at
    /// random: after each step nothing acknowledged is lost and nothing undone is stored (the store
    /// holds exactly the state served), and memory is never ahead of what was acknowledged once idle.
    @Test(arguments: [false, true]) func randomFailuresLoseNothingAcknowledged(numbered: Bool) throws {
        let durable = try DurableEngine(numbered: numbered)
        var random = SeededGenerator(seed: 7)
        #expect(try durable.commit(append([], create: true)).waitBounded() == nil)
        var acknowledged = 0
        var undone = 0
        for round in 0..<40 {
            let hold = Bool.random(using: &random)
            if hold { durable.faults.holdWrites() }
            if Int.random(in: 0..<3, using: &random) == 0 { durable.faults.fail(.write) }
            var futures: [EventLoopFuture<WireError?>] = []
            for index in 0..<Int.random(in: 1...6, using: &random) {
                let id = "r\(round)-\(index)"
                let change: StateChange
                switch Int.random(in: 0..<5, using: &random) {
                case 0: change = .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.deleteItems(["r\(round - 1)-0"])))
                case 1: change = .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.moveItem("r\(round - 1)-1", .before("r\(round - 2)-0"))))
                case 2: change = .dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceSnapshot(try Snapshot([(Section("s"), [Item(id)])]), reloadData: false))
                default: change = append([id])
                }
                futures.append(durable.commit(change))
            }
            if hold { durable.faults.releaseWrites() }
            for future in futures {
                switch try future.waitBounded()?.code {
                case nil: acknowledged += 1
                case .storageFailed?: undone += 1
                default: break  // refused by the model (an item that is not there)
                }
            }
            #expect(try durable.stored() == durable.memory(), "round \(round)")
            #expect(try durable.onLoop { _, pipeline in pipeline.isIdle })
        }
        #expect(acknowledged > 40 && undone > 5, "\(acknowledged) acknowledged, \(undone) undone")
        try durable.close()
    }
}
