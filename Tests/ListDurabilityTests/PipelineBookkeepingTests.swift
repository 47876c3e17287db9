import ListDurability
import ListStore
import ListWire
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

/// The pipeline's bookkeeping alone: the mutations in flight (in order, per data source, what waits for
/// them) and when a data source is due for a checkpoint.
@Suite("Commit pipeline bookkeeping")
struct PipelineBookkeepingTests {
    @Test func mutationsInFlightAreCountedPerDataSourceAndLeaveInOrder() throws {
        let loop = EmbeddedEventLoop()
        var inFlight = InFlightMutations()
        inFlight.append(dataSources: ["d"], previousVersion: 1, registrations: false, done: Deferred(), undo: nil)
        inFlight.append(dataSources: ["d", "e"], previousVersion: 2, registrations: false, done: Deferred(), undo: nil)
        inFlight.append(dataSources: [], previousVersion: nil, registrations: true, done: Deferred(), undo: nil)
        #expect(inFlight.count == 3 && inFlight.newestSequence == 2)
        #expect(inFlight.contains(dataSource: "d") && inFlight.contains(dataSource: "e") && inFlight.hasRegistrations)
        let durable = NIOLockedValueBox<[Int]>([])
        inFlight.whenDurable(1, on: loop).whenSuccess { durable.withLockedValue { $0.append(1) } }
        inFlight.whenDurable(2, on: loop).whenSuccess { durable.withLockedValue { $0.append(2) } }
        inFlight.whenDurable(nil, on: loop).whenSuccess { durable.withLockedValue { $0.append(-1) } }
        #expect(durable.withLockedValue { $0 } == [-1], "nothing to wait for")
        let first = inFlight.removeDurable(1)
        #expect(first.group.map(\.sequence) == [0] && first.due.isEmpty)
        #expect(inFlight.contains(dataSource: "d"), "the second still changes d")
        let second = inFlight.removeDurable(1)
        #expect(second.group.map(\.previousVersion) == [2] && second.due.count == 1)
        for promise in second.due { promise.succeed(()) }
        #expect(durable.withLockedValue { $0 } == [-1, 1])
        #expect(!inFlight.contains(dataSource: "d") && !inFlight.contains(dataSource: "e") && inFlight.hasRegistrations)
        inFlight.whenDurable(1, on: loop).whenSuccess { durable.withLockedValue { $0.append(10) } }
        #expect(durable.withLockedValue { $0 } == [-1, 1, 10], "durable already")
        let failed = inFlight.removeAll()
        #expect(failed.undone.map(\.sequence) == [2] && failed.waiting.count == 1, "what waited for the third fails with it")
        struct Undone: Error {}
        for promise in failed.waiting { promise.fail(Undone()) }
        #expect(inFlight.isEmpty && !inFlight.hasRegistrations)
        try loop.syncShutdownGracefully()
    }

    static func change(_ name: String, bytes: Int) -> StoreRecord {
        .change(dataSource: name, version: 1, operation: Array(repeating: 0x20, count: bytes), changes: nil)
    }

    @Test func aCheckpointIsDueOnceTheLogPassesHalfTheCheckpointAndTheMinimum() {
        var ledger = CheckpointLedger(minimumLogBytes: 1_000)
        let replayed = Self.change("d", bytes: 700).replayBytes
        // "small": a small checkpoint, so the minimum decides; "large": half its checkpoint decides.
        ledger.account(.createDataSource(name: "small", incarnation: "i", version: 0, content: Array(repeating: 0, count: 100)))
        ledger.account(.createDataSource(name: "large", incarnation: "i", version: 0, content: Array(repeating: 0, count: 4_000)))
        for name in ["small", "large"] { ledger.account(Self.change(name, bytes: 700)) }
        #expect(ledger.startDue().isEmpty, "under the minimum")
        for name in ["small", "large"] { ledger.account(Self.change(name, bytes: 700)) }
        #expect(ledger.startDue().map(\.name) == ["small"], "past the minimum; the large one is under half its checkpoint (2,000)")
        for name in ["small", "large"] { ledger.account(Self.change(name, bytes: 700)) }
        let due = ledger.startDue()
        #expect(due.map(\.name) == ["large"] && due.first?.logged == 3 * replayed, "the small one is being written: not twice")
        ledger.account(Self.change("large", bytes: 100))
        ledger.finished("large", covered: 3 * replayed, size: 5_000)
        #expect(ledger.checkpointBytes(of: "large") == 5_000, "the new checkpoint's size")
        #expect(ledger.logBytes(of: "large") == Self.change("large", bytes: 100).replayBytes, "what was logged since stays")
    }

    @Test func aFailedOrStaleCheckpointChangesNothingButIsDueAgain() {
        var ledger = CheckpointLedger(minimumLogBytes: 10)
        ledger.account(.checkpoint(dataSource: "d", version: 3, content: [1, 2]))
        ledger.account(Self.change("d", bytes: 50))
        let logged = ledger.logBytes(of: "d")
        #expect(ledger.startDue().count == 1)
        ledger.finished("d", covered: logged!, size: nil)
        #expect(ledger.logBytes(of: "d") == logged && ledger.checkpointBytes(of: "d") == 2)
        #expect(ledger.startDue().count == 1, "due again")
        ledger.finished("d", covered: logged!, size: 99, current: false)
        #expect(ledger.checkpointBytes(of: "d") == 2, "the data source was made again meanwhile")
    }

    @Test func anUndoneLogIsUnknownUntilTheNextCheckpointAndADropForgetsAll() {
        var ledger = CheckpointLedger(minimumLogBytes: 10)
        ledger.loaded(StoredState(dataSources: [StoredDataSource(name: "d", incarnation: "i", checkpoint: DataSourceContent(), checkpointBytes: 8)]))
        #expect(ledger.checkpointBytes(of: "d") == 8 && ledger.logBytes(of: "d") == 0)
        ledger.account(Self.change("d", bytes: 50))
        ledger.forgetLog(of: "d")
        #expect(ledger.logBytes(of: "d") == nil && ledger.startDue().isEmpty, "not scheduled while unknown")
        ledger.account(Self.change("d", bytes: 50))
        #expect(ledger.startDue().count == 1, "counted again from the next change")
        ledger.account(.dropDataSource(name: "d"))
        #expect(ledger.logBytes(of: "d") == nil && ledger.checkpointBytes(of: "d") == nil)
    }
}
