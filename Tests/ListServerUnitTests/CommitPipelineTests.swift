import CellCore
import DiffableCore
import Foundation
import ListDurability
import ListServerTestKit
import ListEngine
import ListStore
import ListWire
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TestSupport
import Testing

@testable import ListServer

/// A server's state with a commit pipeline over a `FaultInjectingStore`, on an event loop of its own
/// (no sockets): changes go through `ServerState.commit` as a request's do.
private final class DurableState: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop: EventLoop
    let store: FaultInjectingStore
    // Confined to `loop`.
    private var stateValue: ServerState!
    private var pipelineValue: CommitPipeline!

    init() throws {
        loop = group.next()
        store = try FaultInjectingStore()
        try loop.submit { [self] in
            let state = ServerState(
                configuration: ServerConfiguration(listener: .path("/unused")),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            let bound = NIOLoopBound(state, eventLoop: loop)
            let pipeline = CommitPipeline(store: store, model: state.model, loop: loop, logger: state.logger) { undos, touched, _ in
                bound.value.undo(undos, dataSources: touched)
            }
            state.pipeline = pipeline
            stateValue = state
            pipelineValue = pipeline
        }.wait()
    }

    /// Runs `body` on the loop with the state and the pipeline.
    func onLoop<Value: Sendable>(_ body: @escaping @Sendable (ServerState, CommitPipeline) throws -> Value) throws -> Value {
        try loop.submit { [self] in try body(stateValue, pipelineValue) }.wait()
    }

    /// Commits `change`: `nil` once it is durable, or the error it was refused or undone with.
    func commit(_ change: StateChange) -> EventLoopFuture<WireError?> {
        loop.flatSubmit { [self] in
            do throws(WireError) {
                let committed = try stateValue.commit(change, connection: nil)
                let promise = loop.makePromise(of: WireError?.self)
                if let durable = committed.durable {
                    durable.whenResolved { promise.succeed($0) }
                } else {
                    promise.succeed(nil)
                }
                return promise.futureResult
            } catch {
                return loop.makeSucceededFuture(error)
            }
        }
    }

    /// The state in memory, encoded (data sources by name, registrations in order).
    func memory() throws -> String {
        try onLoop { state, _ in Self.encode(state.model) }
    }

    /// The state the store holds, read back through the writer (between two groups), encoded alike.
    func stored() throws -> String {
        let store = self.store
        let loaded = try onLoop { _, pipeline in pipeline.writer.perform { try store.inner.load() } }.wait()
        let model = try StateModel(loading: loaded)
        return Self.encode(model)
    }

    static func encode(_ model: StateModel) -> String {
        String(decoding: InProcessServer.encoding(of: model), as: UTF8.self)
    }

    /// Syncs and closes the store as a stopping server does (`CommitPipeline.close`, without awaiting:
    /// a test blocks no task), then ends the loop.
    func close() throws {
        let (writer, background) = try onLoop { _, pipeline in (pipeline.writer!, pipeline.background) }
        try background?.syncShutdownGracefully()
        try writer.perform { [store] in try store.sync() }.wait()
        let ended = DispatchSemaphore(value: 0)
        writer.shutdown { ended.signal() }
        ended.wait()
        store.close()
        try group.syncShutdownGracefully()
    }
}

private func append(_ items: [String], to name: String = "d", create: Bool = false) -> StateChange {
    .dataSource(
        name: name, ifVersion: nil, createAs: create ? .fresh : nil,
        .edit(create ? .appendSections([Section("s")]) : .appendItems(items.map { Item($0, data: ["n": .int($0.count)]) }, toSection: "s")))
}

@Suite("Commit pipeline: grouping, parking, undo, probing, checkpoints, sync and backup against a store that fails on demand")
struct CommitPipelineTests {
    /// Mutations that arrive while the writer writes wait in the open group and are written as one.
    @Test func mutationsArrivingDuringAWriteAreWrittenAsOneGroup() throws {
        let durable = try DurableState()
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        durable.store.holdWrites()
        let first = durable.commit(append(["a"]))
        try waitUntil("the writer to take the first group") { durable.store.calls(.write) == 2 }
        let rest = (0..<9).map { durable.commit(append(["b\($0)"])) }
        #expect(try durable.onLoop { _, pipeline in pipeline.mustPark(mutation: false) }, "a read waits while changes are in flight")
        durable.store.releaseWrites()
        #expect(try first.wait() == nil)
        for future in rest { #expect(try future.wait() == nil) }
        #expect(durable.store.groups == [2, 1, 9], "the nine that arrived during the second write made the third group (records: creating is two)")
        #expect(try durable.onLoop { _, pipeline in (pipeline.groupsWritten, pipeline.mutationsWritten) } == (3, 11))
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// A read that arrives while a change is in flight runs once it is durable, and sees it.
    @Test func aParkedReadRunsAfterTheGroupIsDurable() throws {
        let durable = try DurableState()
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        durable.store.holdWrites()
        let pending = durable.commit(append(["a"]))
        let seen = try durable.onLoop { state, pipeline -> EventLoopFuture<Int> in
            let promise = durable.loop.makePromise(of: Int.self)
            #expect(pipeline.mustPark(mutation: false))
            pipeline.park { promise.succeed(state.dataSources["d"]!.snapshot.numberOfItems) }
            return promise.futureResult
        }
        durable.store.releaseWrites()
        #expect(try pending.wait() == nil)
        #expect(try seen.wait() == 1, "the parked read saw the durable change")
        try durable.close()
    }

    /// A change that changes nothing stores nothing, and answers as a read does: once the changes before it
    /// are durable (it reports their version).
    @Test func anUnchangedChangeAnswersOnceTheChangesBeforeItAreDurable() throws {
        let durable = try DurableState()
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        durable.store.holdWrites()
        let pending = durable.commit(append(["a"]))
        try waitUntil("the writer to take the group") { durable.store.calls(.write) == 2 }
        let answered = NIOLockedValueBox(false)
        let unchanged = durable.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.deleteItems(["ghost"]))))
        unchanged.whenComplete { _ in answered.withLockedValue { $0 = true } }
        try durable.onLoop { _, _ in }  // the commit ran on the loop; an immediate answer would be in by now
        #expect(!answered.withLockedValue { $0 }, "answered before the change before it was durable")
        durable.store.releaseWrites()
        #expect(try pending.wait() == nil)
        #expect(try unchanged.wait() == nil)
        #expect(durable.store.calls(.write) == 2, "the unchanged change wrote nothing")
        try durable.close()
    }

    /// A failed write undoes its group and every later mutation in memory, newest first, without
    /// reading a data source back; every one of them fails; the next change is stored.
    @Test func aFailedWriteIsUndoneInMemory() throws {
        let durable = try DurableState()
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        #expect(try durable.commit(append(["kept"])).wait() == nil)
        let before = try durable.memory()
        durable.store.holdWrites()
        durable.store.fail(.write)
        let failing = [
            durable.commit(append(["x"])),
            durable.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.deleteItems(["kept"])))),
            durable.commit(append(["y"], to: "e", create: true)),
            durable.commit(.register(try Registration(name: "r", definition: ["contentConfiguration": ["type": "cell", "text": "{{n}}"]]))),
            durable.commit(.dropDataSource(name: "d")),
        ]
        durable.store.releaseWrites()
        for future in failing { #expect(try future.wait()?.code == .storageFailed) }
        #expect(try durable.memory() == before, "memory is as it was before the failed group")
        #expect(try durable.onLoop { state, _ in state.dataSources.keys.sorted() } == ["d"])
        #expect(try durable.onLoop { state, _ in state.dataSources["d"]!.model === state.model.dataSources["d"]! })
        #expect(durable.store.dataSourcesRead.isEmpty, "nothing was read back from the store")
        #expect(try durable.stored() == before)
        try waitUntil("the probe to find the store readable") { durable.store.calls(.load) >= 1 }
        #expect(try durable.onLoop { _, pipeline in pipeline.unavailableReason } == nil)
        #expect(try durable.commit(append(["z"])).wait() == nil)
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// A store that cannot be read after a failed write: changes are refused at once with the reason,
    /// reads go on; listd probes again with backoff and takes changes once it answers.
    @Test func anUnreadableStoreRefusesChangesUntilItAnswers() throws {
        let durable = try DurableState()
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        #expect(try durable.commit(append(["a"])).wait() == nil)
        durable.store.failAlways(.write)
        durable.store.failAlways(.load)
        #expect(try durable.commit(append(["b"])).wait()?.code == .storageFailed)
        try waitUntil("the store to be unavailable") { try durable.onLoop { _, pipeline in pipeline.unavailableReason != nil } }
        let refused = try durable.commit(append(["c"])).wait()
        #expect(refused?.code == .storageFailed && refused?.message.contains("cannot be read") == true, "\(String(describing: refused))")
        let writesWhileRefused = durable.store.calls(.write)
        #expect(try durable.onLoop { state, _ in state.dataSources["d"]!.snapshot.itemIdentifiers } == ["a"])
        try waitUntil("a second probe") { durable.store.calls(.load) >= 2 }
        #expect(durable.store.calls(.write) == writesWhileRefused, "refused changes never reach the store")
        durable.store.heal()
        try waitUntil("the store to answer again") { try durable.onLoop { _, pipeline in pipeline.unavailableReason == nil } }
        #expect(try durable.onLoop { _, pipeline in pipeline.restoreRetries } >= 1)
        #expect(try durable.commit(append(["d"])).wait() == nil)
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// A checkpoint that fails leaves the log to the next one; the state stored stays the state served.
    @Test func aFailedCheckpointIsScheduledAgain() throws {
        let durable = try DurableState()
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        durable.store.fail(.checkpoint)
        let large = String(repeating: "x", count: 400_000)
        func appendLarge(_ id: String) -> StateChange {
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems([Item(id, data: ["text": .string(large)])], toSection: "s")))
        }
        for index in 0..<3 { #expect(try durable.commit(appendLarge("a\(index)")).wait() == nil) }
        try waitUntil("the first checkpoint to be tried") { durable.store.calls(.checkpoint) >= 1 }
        for index in 0..<3 { #expect(try durable.commit(appendLarge("b\(index)")).wait() == nil) }
        try waitUntil("a checkpoint to be written") { try durable.onLoop { _, pipeline in pipeline.checkpointsWritten } >= 1 }
        #expect(try durable.stored() == durable.memory())
        try durable.close()
    }

    /// The periodic sync tries again after a failure.
    @Test func aFailedSyncIsTriedAgain() throws {
        let durable = try DurableState()
        try durable.onLoop { _, pipeline in pipeline.startPeriodicSync() }
        durable.store.fail(.sync)
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        try waitUntil("a sync after the failed one") { durable.store.calls(.sync) >= 2 }
        try durable.close()
    }

    /// A failed backup is reported to the caller; the next one succeeds.
    @Test func aFailedBackupIsReported() throws {
        let durable = try DurableState()
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        durable.store.fail(.backup)
        func backup() throws -> Int {
            let future = try durable.onLoop { _, pipeline -> EventLoopFuture<Int> in
                let promise = durable.loop.makePromise(of: Int.self)
                pipeline.backup { result in promise.completeWith(result.map(\.count)) }
                return promise.futureResult
            }
            return try future.wait()
        }
        #expect(throws: (any Error).self) { try backup() }
        #expect(try backup() > 0)
        try durable.close()
    }

    /// Random changes (some refused, some in groups that fail) against a store whose writes fail at
    /// random: after each step nothing acknowledged is lost and nothing undone is stored (the store
    /// holds exactly the state served), and memory is never ahead of what was acknowledged once idle.
    @Test func randomFailuresLoseNothingAcknowledged() throws {
        let durable = try DurableState()
        var random = SeededGenerator(seed: 7)
        #expect(try durable.commit(append([], create: true)).wait() == nil)
        var acknowledged = 0
        var undone = 0
        for round in 0..<40 {
            let hold = Bool.random(using: &random)
            if hold { durable.store.holdWrites() }
            if Int.random(in: 0..<3, using: &random) == 0 { durable.store.fail(.write) }
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
            if hold { durable.store.releaseWrites() }
            for future in futures {
                switch try future.wait()?.code {
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
