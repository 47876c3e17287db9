import NIOCore
import Testing

@testable import ListServer

/// The connection's decisions alone: events in, actions out (no channel, no server state, no loop).
/// Replies are strings, lines are the bytes of their text.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine<String>

    static let timeout = TimeAmount.seconds(5)
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func machine() -> Machine { Machine(partialLineTimeout: timeout) }

    static func line(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// Seconds after `start`, as the action descriptions give them.
    static func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }

    /// The actions as short strings (what each test compares).
    static func describe(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .run(let line): return "run \(String(buffer: line))"
            case .deliver(let reply): return "deliver \(reply)"
            case .read: return "read"
            case .pauseReading: return "pauseReading"
            case .weighHeldOutput: return "weighHeldOutput"
            case .resumeReading: return "resumeReading"
            case .flushLater: return "flushLater"
            case .closeAfterFlush(let grace): return "closeAfterFlush \(grace.nanoseconds / 1_000_000) ms"
            case .closeNow: return "closeNow"
            case .countPartialLineBytes(let bytes): return "count \(bytes)"
            case .checkPartialLineTotal: return "checkPartialLineTotal"
            case .schedulePartialLineCheck(let deadline): return "check at \((deadline - start).nanoseconds / 1_000_000_000) s"
            case .partialLineTimedOut: return "partialLineTimedOut"
            case .announceShutdown: return "announceShutdown"
            }
        }
    }

    static func describe(_ action: Machine.Action?) -> [String] { describe(action.map { [$0] } ?? []) }

    /// What the driver does after `resumeReading`: runs the held lines (and the held-back reply) while
    /// they come, then reports it. `ran` sees each line run (it may report the request's events).
    static func resume(_ machine: inout Machine, now: NIODeadline, ran: (inout Machine, String) -> Void = { _, _ in }) -> [String] {
        var done: [String] = []
        while let next = machine.nextHeldLine() {
            done += describe(next)
            if case .run(let line) = next { ran(&machine, String(buffer: line)) }
        }
        return done + ["then"] + describe(machine.heldLinesRan(now: now))
    }

    /// The replies the driver delivers after a resolution, then what it is told.
    static func deliverReady(_ machine: inout Machine) -> [String] {
        var delivered: [String] = []
        while let reply = machine.readyReply(at: delivered.count) { delivered.append(reply) }
        return delivered + describe(machine.repliesDelivered(delivered.count))
    }

    @Test func linesRunInOrderAndWaitBehindARequestThatWaits() {
        var machine = Self.machine()
        #expect(Self.describe(machine.lineFramed(Self.line("a"))) == ["run a"])
        machine.requestWaits()
        #expect(Self.describe(machine.lineFramed(Self.line("b"))) == [], "held behind the waiting request")
        #expect(Self.describe(machine.lineFramed(Self.line("c"))) == [])
        #expect(Self.describe(machine.nextHeldLine()) == [], "still waiting")
        #expect(!machine.isIdle)
        machine.requestResolved()
        #expect(Self.describe(machine.nextHeldLine()) == ["run b"])
        #expect(Self.describe(machine.nextHeldLine()) == ["run c"])
        #expect(Self.describe(machine.nextHeldLine()) == [])
        #expect(machine.isIdle)
        #expect(Self.describe(machine.closeIfDone()) == [], "the client is not done")
        #expect(Self.describe(machine.lineFramed(Self.line("d"))) == ["run d"], "nothing holds lines any more")
    }

    @Test func repliesLeaveInRequestOrderBehindOneAwaitingStorage() {
        var machine = Self.machine()
        let first = machine.replyAwaited()
        #expect(Self.describe(machine.replyReady("2")) == [], "queued behind the first")
        let third = machine.replyAwaited()
        #expect(Self.describe(machine.replyReady("4")) == [])
        machine.replyResolved(third, "3")
        #expect(Self.deliverReady(&machine) == [], "the first is not known yet")
        #expect(!machine.isIdle)
        machine.replyResolved(first, "1")
        #expect(Self.deliverReady(&machine) == ["1", "2", "3", "4", "flushLater"])
        #expect(machine.isIdle)
        #expect(Self.describe(machine.replyReady("5")) == ["deliver 5"], "nothing queued: at once")
    }

    @Test func unsentOutputAboveTheLimitPausesReadingAndRunningUntilItDrains() {
        var machine = Self.machine()
        #expect(Self.describe(machine.lineFramed(Self.line("a"))) == ["run a"])
        #expect(Self.describe(machine.outputChecked(writable: true)) == [])
        #expect(Self.describe(machine.outputChecked(writable: false)) == ["pauseReading"])
        #expect(machine.isOutputPaused)
        #expect(Self.describe(machine.outputChecked(writable: false)) == [], "paused once")
        #expect(Self.describe(machine.lineFramed(Self.line("b"))) == [], "held while paused")
        #expect(Self.describe(machine.lineFramed(Self.line("c"))) == [])
        #expect(Self.describe(machine.readRequested()) == [], "no reading while paused")
        #expect(machine.heldRequestLines.map { String(buffer: $0) } == ["b", "c"])
        #expect(Self.describe(machine.writabilityChanged(writable: false)) == ["weighHeldOutput"])
        #expect(Self.describe(machine.writabilityChanged(writable: true)) == ["resumeReading"])
        #expect(Self.resume(&machine, now: Self.at(1)) == ["run b", "run c", "then", "read"], "in order, then the read held")
        #expect(!machine.isOutputPaused)
        #expect(Self.describe(machine.readRequested()) == ["read"])
        #expect(Self.describe(machine.writabilityChanged(writable: true)) == [], "not paused: nothing to resume")
    }

    @Test func aHeldLineThatFillsTheOutputAgainPausesTheResumeKeepingTheReadWanted() {
        var machine = Self.machine()
        _ = machine.outputChecked(writable: false)
        _ = machine.lineFramed(Self.line("a"))
        _ = machine.lineFramed(Self.line("b"))
        _ = machine.readRequested()
        #expect(Self.describe(machine.writabilityChanged(writable: true)) == ["resumeReading"])
        let resumed = Self.resume(&machine, now: Self.at(1)) { machine, line in
            if line == "a" { #expect(Self.describe(machine.outputChecked(writable: false)) == ["pauseReading"]) }
        }
        #expect(resumed == ["run a", "then"], "b waits, no read")
        #expect(machine.isOutputPaused)
        #expect(Self.describe(machine.writabilityChanged(writable: true)) == ["resumeReading"])
        #expect(Self.resume(&machine, now: Self.at(2)) == ["run b", "then", "read"], "the read wanted before is issued now")
    }

    @Test func aLimitCrossedClosesAtOnceAndDropsTheHeldLines() {
        var machine = Self.machine()
        _ = machine.outputChecked(writable: false)
        _ = machine.lineFramed(Self.line("a"))
        #expect(Self.describe(machine.outputLimitCrossed()) == ["closeNow"])
        #expect(machine.isClosing)
        #expect(machine.heldRequestLines.isEmpty)
        #expect(Self.describe(machine.lineFramed(Self.line("b"))) == [], "nothing more is run")
        #expect(Self.describe(machine.readRequested()) == [])
        #expect(Self.describe(machine.writabilityChanged(writable: true)) == [], "no resuming once closing")
        #expect(Self.describe(machine.nextHeldLine()) == [])
        #expect(Self.describe(machine.outputLimitCrossed()) == ["closeNow"], "closes at once even when already closing")
        #expect(Self.describe(machine.viewsFellBehind()) == [])
        #expect(Self.describe(machine.shutDown()) == [])
    }

    @Test func aHalfClosedClientIsClosedOnceItsQueuedRepliesAreOut() {
        var machine = Self.machine()
        let ticket = machine.replyAwaited()
        #expect(Self.describe(machine.replyReady("2")) == [])
        #expect(Self.describe(machine.inputClosed(hasViews: false)) == [], "replies still queued")
        #expect(machine.lifecycle == .closeWhenIdle)
        machine.replyResolved(ticket, "1")
        #expect(Self.deliverReady(&machine) == ["1", "2", "closeAfterFlush 2000 ms"])
        #expect(machine.isClosing)

        var idle = Self.machine()
        #expect(Self.describe(idle.inputClosed(hasViews: false)) == ["closeAfterFlush 2000 ms"], "nothing queued: at once")
    }

    @Test func aHalfClosedClientWithAWaitingRequestClosesOnceItIsResolved() {
        var machine = Self.machine()
        machine.requestWaits()
        _ = machine.lineFramed(Self.line("b"))
        #expect(Self.describe(machine.inputClosed(hasViews: false)) == [])
        machine.requestResolved()
        #expect(Self.describe(machine.nextHeldLine()) == ["run b"])
        #expect(Self.describe(machine.closeIfDone()) == ["closeAfterFlush 2000 ms"])
    }

    @Test func aHalfClosedClientWithViewsStaysUntilItsLastViewGoes() {
        var machine = Self.machine()
        #expect(Self.describe(machine.inputClosed(hasViews: true)) == [])
        #expect(machine.lifecycle == .open)
        #expect(Self.describe(machine.outputSent(hasViews: true)) == [], "events to its views")
        #expect(Self.describe(machine.outputSent(hasViews: false)) == ["closeAfterFlush 2000 ms"], "its last view was dropped")

        var open = Self.machine()
        #expect(Self.describe(open.outputSent(hasViews: false)) == [], "its input is open: it may attach again")
    }

    @Test func anOverlongLineIsAnsweredAfterTheRepliesBeforeItThenCloses() {
        var idle = Self.machine()
        _ = idle.partialLine(bytes: 40, now: Self.start)
        #expect(Self.describe(idle.lineTooLong(answer: "too long")) == ["count -40", "deliver too long", "closeAfterFlush 2000 ms"])

        // Behind a reply awaiting storage: queued after it.
        var queued = Self.machine()
        let ticket = queued.replyAwaited()
        #expect(Self.describe(queued.lineTooLong(answer: "too long")) == [])
        queued.replyResolved(ticket, "1")
        #expect(Self.deliverReady(&queued) == ["1", "too long", "closeAfterFlush 2000 ms"])

        // While lines are held: after them.
        var paused = Self.machine()
        _ = paused.outputChecked(writable: false)
        _ = paused.lineFramed(Self.line("a"))
        #expect(Self.describe(paused.lineTooLong(answer: "too long")) == [])
        #expect(Self.describe(paused.lineFramed(Self.line("b"))) == [], "still held")
        _ = paused.writabilityChanged(writable: true)
        #expect(Self.resume(&paused, now: Self.at(1)) == ["run a", "run b", "deliver too long", "then", "closeAfterFlush 2000 ms"])
    }

    @Test func anUnfinishedLineTimesOut() {
        var machine = Self.machine()
        #expect(Self.describe(machine.partialLine(bytes: 10, now: Self.start)) == ["count 10", "check at 5 s", "checkPartialLineTotal"])
        #expect(Self.describe(machine.partialLine(bytes: 25, now: Self.at(2))) == ["count 15", "checkPartialLineTotal"], "the same line: one clock")
        #expect(machine.heldPartialBytes == 25)
        #expect(Self.describe(machine.partialLineTimerFired(now: Self.at(5))) == ["partialLineTimedOut"])
        #expect(Self.describe(machine.abandonPartialLine()) == ["count -25", "closeAfterFlush 1000 ms"])
        #expect(machine.heldPartialBytes == 0)
        #expect(Self.describe(machine.abandonPartialLine()) == [], "once")
        #expect(Self.describe(machine.partialLineTimerFired(now: Self.at(10))) == [])
    }

    @Test func finishingTheLineRestartsTheClock() {
        var machine = Self.machine()
        _ = machine.partialLine(bytes: 10, now: Self.start)
        #expect(Self.describe(machine.lineFramed(Self.line("a"))) == ["run a"])
        #expect(Self.describe(machine.partialLine(bytes: 4, now: Self.at(3))) == ["count -6", "checkPartialLineTotal"], "the timer asked for still comes")
        #expect(Self.describe(machine.partialLineTimerFired(now: Self.at(5))) == ["check at 8 s"], "the new line has time left")
        #expect(Self.describe(machine.partialLineTimerFired(now: Self.at(8))) == ["partialLineTimedOut"])
        #expect(Self.describe(machine.partialLine(bytes: 0, now: Self.at(8))) == ["count -4", "checkPartialLineTotal"])
    }

    @Test func theClockStopsWhileTheConnectionIsPaused() {
        var machine = Self.machine()
        _ = machine.partialLine(bytes: 10, now: Self.start)
        _ = machine.outputChecked(writable: false)
        #expect(Self.describe(machine.partialLineTimerFired(now: Self.at(5))) == [], "not read: the peer cannot finish it")
        #expect(Self.describe(machine.partialLine(bytes: 12, now: Self.at(6))) == ["count 2", "checkPartialLineTotal"], "no clock while paused")
        _ = machine.writabilityChanged(writable: true)
        #expect(Self.resume(&machine, now: Self.at(20)) == ["then", "check at 25 s"])
        #expect(Self.describe(machine.partialLineTimerFired(now: Self.at(24))) == ["check at 25 s"])
        #expect(Self.describe(machine.partialLineTimerFired(now: Self.at(25))) == ["partialLineTimedOut"])
    }

    @Test func abandoningTheLineDropsWhatWaitsAndClosesWithinASecond() {
        var machine = Self.machine()
        machine.requestWaits()
        _ = machine.lineFramed(Self.line("a"))
        _ = machine.partialLine(bytes: 30, now: Self.start)
        #expect(Self.describe(machine.abandonPartialLine()) == ["count -30", "closeAfterFlush 1000 ms"])
        #expect(machine.heldRequestLines.isEmpty)
        machine.requestResolved()
        #expect(Self.describe(machine.nextHeldLine()) == [])
        #expect(Self.describe(machine.releasePartialLine()) == [], "nothing left to count when the handler goes")

        var removed = Self.machine()
        _ = removed.partialLine(bytes: 7, now: Self.start)
        #expect(Self.describe(removed.releasePartialLine()) == ["count -7"])
    }

    @Test func shutdownTellsTheViewsAndDrainsWithinTheGrace() {
        var machine = Self.machine()
        let ticket = machine.replyAwaited()
        #expect(Self.describe(machine.shutDown()) == ["announceShutdown", "closeAfterFlush 2000 ms"])
        #expect(Self.describe(machine.shutDown()) == [], "once")
        #expect(Self.describe(machine.lineFramed(Self.line("a"))) == [], "nothing more runs")
        // A reply that becomes known meanwhile still leaves, flushed while the close waits for the flush.
        machine.replyResolved(ticket, "1")
        #expect(Self.deliverReady(&machine) == ["1", "flushLater"])

        // Unless the client was done anyway: it was to close once idle, and is idle now.
        var done = Self.machine()
        let last = done.replyAwaited()
        _ = done.inputClosed(hasViews: false)
        _ = done.shutDown()
        done.replyResolved(last, "1")
        #expect(Self.deliverReady(&done) == ["1"])
    }

    @Test func otherClosesAreAfterAFlushAndHappenOnce() {
        var plugin = Self.machine()
        #expect(Self.describe(plugin.disconnect()) == ["closeAfterFlush 100 ms"])
        #expect(Self.describe(plugin.disconnect()) == [])
        var view = Self.machine()
        #expect(Self.describe(view.viewsFellBehind()) == ["closeAfterFlush 2000 ms"])
        #expect(Self.describe(view.inputClosed(hasViews: false)) == [], "already closing")
        #expect(Self.describe(view.readRequested()) == [])
    }
}
