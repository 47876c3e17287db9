import ListDurability
import ListStore
import ListWire
import NIOCore
import Testing

/// The pipeline's recovery decisions alone: failed writes, probe answers, catch-ups and timers in,
/// actions out (no store, no loop, no writer).
@Suite("Recovery state machine")
struct RecoveryStateMachineTests {
    struct Unreadable: Error, CustomStringConvertible {
        var description: String { "connection refused" }
    }

    /// The actions as short strings (what each test compares).
    static func describe(_ actions: [RecoveryStateMachine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .undoInFlight(let error): return "undo: \(error.message)"
            case .catchUp(let waiting): return waiting ? "catch up, requests wait" : "catch up"
            case .failUndone(let error): return "fail undone\(error.details["conflict"] == true ? " (conflict)" : "")"
            case .probe: return "probe"
            case .scheduleProbe(let delay): return "probe in \(delay.nanoseconds / 1_000_000) ms"
            case .markUnavailable(let reason): return "unavailable: \(reason)"
            case .markAvailable(let retries): return "available after \(retries) retries"
            case .sync: return "sync"
            case .maintain: return "maintain"
            }
        }
    }

    static let ioError = StorageError(.io, "disk full")

    @Test func aFailedWriteIsUndoneFailedAndTheStoreProbed() {
        var machine = RecoveryStateMachine()
        let actions = Self.describe(machine.writeFailed(Self.ioError, shared: false))
        #expect(actions == ["undo: The change was not stored: \(Self.ioError)", "probe", "fail undone"])
        #expect(!machine.isRestoring && machine.unavailableReason == nil)
        #expect(Self.describe(machine.probeAnswered(.success(()))) == [], "the store answers: nothing to tell")
        #expect(machine.writeFailures == 1 && machine.conflicts == 0 && machine.restoreRetries == 0)
    }

    @Test func aWriteOfUnknownOutcomeSaysSo() {
        var machine = RecoveryStateMachine()
        let actions = machine.writeFailed(StorageError(.unknownOutcome, "connection lost during commit"), shared: false)
        guard case .undoInFlight(let error) = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(error.code == .storageFailed && error.details["outcome"] == "unknown" && error.message.contains("may or may not"))
    }

    @Test func anUnreadableStoreIsProbedWithGrowingDelaysUntilItAnswers() {
        var machine = RecoveryStateMachine()
        _ = machine.writeFailed(Self.ioError, shared: false)
        #expect(Self.describe(machine.probeAnswered(.failure(Unreadable()))) == ["unavailable: connection refused", "probe in 100 ms"])
        let reason = try! #require(machine.unavailableReason)
        #expect(reason.contains("disk full") && reason.contains("connection refused") && reason.contains("reads go on"), "\(reason)")
        var delays: [String] = []
        for _ in 0..<8 {
            #expect(Self.describe(machine.probeTimerFired()) == ["probe"])
            delays += Self.describe(machine.probeAnswered(.failure(Unreadable())))
        }
        #expect(delays == ["probe in 200 ms", "probe in 400 ms", "probe in 800 ms", "probe in 1600 ms", "probe in 3200 ms"] + Array(repeating: "probe in 5000 ms", count: 3), "unavailable is said once")
        #expect(Self.describe(machine.probeTimerFired()) == ["probe"])
        #expect(Self.describe(machine.probeAnswered(.success(()))) == ["available after 9 retries"])
        #expect(machine.unavailableReason == nil && machine.restoreRetries == 9)
        #expect(Self.describe(machine.probeTimerFired()) == [], "a stale timer does nothing")
        // The next failure starts again from the first delay.
        #expect(Self.describe(machine.writeFailed(Self.ioError, shared: false)).contains("probe"))
        #expect(Self.describe(machine.probeAnswered(.failure(Unreadable()))) == ["unavailable: connection refused", "probe in 100 ms"])
    }

    @Test func oneProbeAtATime() {
        var machine = RecoveryStateMachine()
        _ = machine.writeFailed(Self.ioError, shared: false)
        let second = Self.describe(machine.writeFailed(StorageError(.io, "again"), shared: false))
        #expect(second == ["undo: The change was not stored: \(StorageError(.io, "again"))", "fail undone"], "the probe under way covers it")
        _ = machine.probeAnswered(.failure(Unreadable()))
        #expect(machine.unavailableReason?.contains("disk full") == true, "the reason names the write that started the probe")
        #expect(Self.describe(machine.probeAnswered(.success(()))) == [], "an answer nobody asked for is ignored")
        #expect(machine.unavailableReason != nil)
    }

    @Test func aConflictOnASharedStoreWaitsForTheCatchUpAndIsNotProbed() {
        var machine = RecoveryStateMachine()
        let conflict = StorageError(.conflict, "data source d is not at version 1")
        #expect(Self.describe(machine.writeFailed(conflict, shared: true)) == ["undo: The change was not stored: \(conflict)", "catch up, requests wait"])
        #expect(machine.isRestoring)
        #expect(Self.describe(machine.caughtUp()) == ["fail undone (conflict)"])
        #expect(!machine.isRestoring && machine.conflicts == 1 && machine.writeFailures == 1)
        #expect(Self.describe(machine.caughtUp()) == [], "nothing waits any more")
    }

    @Test func otherFailuresOnASharedStoreCatchUpWithoutWaiting() {
        var machine = RecoveryStateMachine()
        #expect(Self.describe(machine.writeFailed(Self.ioError, shared: true)) == ["undo: The change was not stored: \(Self.ioError)", "catch up", "probe", "fail undone"])
        #expect(!machine.isRestoring)
        // A conflict without a shared store (nothing to catch up with) fails at once, unprobed.
        var alone = RecoveryStateMachine()
        #expect(Self.describe(alone.writeFailed(StorageError(.conflict, "taken"), shared: false)).suffix(1) == ["fail undone (conflict)"])
        #expect(!alone.isRestoring)
    }

    @Test func syncsOnlyAfterWritesAndAgainAfterAFailure() {
        var machine = RecoveryStateMachine()
        #expect(Self.describe(machine.syncTimerFired()) == [], "nothing written")
        #expect(Self.describe(machine.groupWritten(needsMaintenance: false)) == [])
        #expect(Self.describe(machine.syncTimerFired()) == ["sync"])
        #expect(Self.describe(machine.syncTimerFired()) == [], "synced")
        machine.syncFailed()
        #expect(Self.describe(machine.syncTimerFired()) == ["sync"], "tried again")
    }

    @Test func upkeepRunsOneAtATime() {
        var machine = RecoveryStateMachine()
        #expect(Self.describe(machine.groupWritten(needsMaintenance: true)) == ["maintain"])
        #expect(Self.describe(machine.groupWritten(needsMaintenance: true)) == [], "one under way")
        machine.maintenanceFinished()
        #expect(Self.describe(machine.groupWritten(needsMaintenance: true)) == ["maintain"])
    }
}
