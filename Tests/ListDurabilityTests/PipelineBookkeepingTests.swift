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
        inFlight.append(dataSource: "d", previousVersion: 1, registrations: false, done: Deferred(), undo: nil)
        inFlight.append(dataSource: "d", previousVersion: 2, registrations: false, done: nil, undo: nil)
        inFlight.append(dataSource: "e", previousVersion: 7, registrations: false, done: Deferred(), undo: nil)
        inFlight.append(dataSource: nil, previousVersion: nil, registrations: true, done: Deferred(), undo: nil)
        #expect(inFlight.count == 4 && inFlight.newestSequence == 3)
        #expect(inFlight.contains(dataSource: "d") && inFlight.contains(dataSource: "e") && inFlight.hasRegistrations)
        let durable = NIOLockedValueBox<[Int]>([])
        inFlight.whenDurable(1, on: loop).whenSuccess { durable.withLockedValue { $0.append(1) } }
        inFlight.whenDurable(3, on: loop).whenSuccess { durable.withLockedValue { $0.append(3) } }
        inFlight.whenDurable(nil, on: loop).whenSuccess { durable.withLockedValue { $0.append(-1) } }
        #expect(durable.withLockedValue { $0 } == [-1], "nothing to wait for")
        var removed: [Int] = []
        let first = inFlight.removeDurable(1) { removed.append($0.sequence) }
        #expect(removed == [0] && first.isEmpty && inFlight.durableSequence == 0)
        #expect(inFlight.contains(dataSource: "d"), "the second still changes d")
        let second = inFlight.removeDurable(2) { removed.append($0.previousVersion ?? -1) }
        #expect(removed == [0, 2, 7] && second.count == 1)
        for promise in second { promise.succeed(()) }
        #expect(durable.withLockedValue { $0 } == [-1, 1])
        #expect(!inFlight.contains(dataSource: "d") && !inFlight.contains(dataSource: "e") && inFlight.hasRegistrations)
        #expect(inFlight.pending.map(\.sequence) == [3] && inFlight.newestSequence == 3)
        inFlight.whenDurable(1, on: loop).whenSuccess { durable.withLockedValue { $0.append(10) } }
        #expect(durable.withLockedValue { $0 } == [-1, 1, 10], "durable already")
        let failed = inFlight.removeAll()
        #expect(failed.undone.map(\.sequence) == [3] && failed.waiting.count == 1, "what waited for the fourth fails with it")
        struct Undone: Error {}
        for promise in failed.waiting { promise.fail(Undone()) }
        #expect(inFlight.isEmpty && !inFlight.hasRegistrations && inFlight.newestSequence == nil)
        try loop.syncShutdownGracefully()
    }

    @Test func manyGroupsLeaveTheQueueInOrderAcrossItsCompaction() {
        var inFlight = InFlightMutations()
        var removed: [Int] = []
        var next = 0
        // Groups of three written while two more arrive: the queue's front is compacted now and then.
        for _ in 0..<200 {
            for _ in 0..<3 { inFlight.append(dataSource: "d\(next % 5)", previousVersion: next, registrations: false, done: nil, undo: nil); next += 1 }
            if inFlight.count > 4 { _ = inFlight.removeDurable(3) { removed.append($0.sequence) } }
        }
        _ = inFlight.removeDurable(inFlight.count) { removed.append($0.sequence) }
        #expect(removed == Array(0..<next) && inFlight.isEmpty && inFlight.durableSequence == next - 1)
        #expect((0..<5).allSatisfy { !inFlight.contains(dataSource: "d\($0)") })
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
