import DiffableCore
import NIOCore

/// The life of one client connection, without I/O (in the style of `FollowerStateMachine` and of
/// postgres-nio's connection state machine): what the channel and the requests report goes in (a line
/// framed or too long, a reply known, writability, input closed, a limit crossed, the unfinished line's
/// timer), what to do comes out as actions, which `ConnectionHandler` carries out.
///
/// - Requests run one at a time, in the order their lines arrive, and their replies leave in that order:
///   a reply that waits for its change to be stored lets the next requests run (their replies queue
///   behind it, `ReplyQueue`); a request that waits before it can reply (`requestWaits`) holds the next
///   lines back until it is resolved.
/// - Output back-pressure: once a request leaves the channel unwritable (its unsent output above
///   `maxOutputBytes`) the connection is paused: it neither reads nor runs requests (framed lines are held
///   in order) until the channel is writable again; then the held lines run, and a read asked for
///   meanwhile is issued.
/// - An unfinished line has a clock (stopped while the connection is paused, as the peer cannot finish a
///   line that is not read): past `partialLineTimeout` the connection answers `line-too-long` and closes.
/// - Closing: a client that is done (its input ended without views, or it sent an overlong line) is
///   closed once idle, after its replies; limits, a plugin breaking the protocol and shutdown close it
///   after a flush (within a grace period) or at once. Once closing, nothing more is read or run.
struct ConnectionStateMachine<Reply> {
    /// What the driver does, in order.
    enum Action {
        /// Run a request line; its outcome comes back as `replyReady`, `replyAwaited` or `requestWaits`.
        case run(ByteBuffer)
        /// Write a reply (and do what else its outcome carries).
        case deliver(Reply)
        /// Ask the channel for more input.
        case read
        /// Reading and running requests just stopped: weigh this connection's held output against the
        /// server's cap (`maxOutputBytesTotal`).
        case pauseReading
        /// The channel became unwritable: weigh its held output against the server's cap.
        case weighHeldOutput
        /// Output drained: run the held lines (`nextHeldLine` until nil), write and flush, then report
        /// `heldLinesRan`.
        case resumeReading
        /// Write and flush what waits at the end of this turn of the event loop.
        case flushLater
        /// Write what waits, flush, then close; close anyway after `grace` (a peer that does not read
        /// cannot hold the connection open).
        case closeAfterFlush(grace: TimeAmount)
        /// Drop the output not yet handed to the channel and close at once.
        case closeNow
        /// Add this many bytes (negative: remove) to the server's count of unfinished-line bytes.
        case countPartialLineBytes(Int)
        /// Check the server's count of unfinished-line bytes against its cap.
        case checkPartialLineTotal
        /// Report `partialLineTimerFired` at this time.
        case schedulePartialLineCheck(at: NIODeadline)
        /// The unfinished line timed out: answer `line-too-long` and close (`abandonPartialLine`).
        case partialLineTimedOut
        /// Tell the client's views the server is stopping.
        case announceShutdown
    }

    /// Whether the connection serves on, is to close once idle, or is closing.
    enum Lifecycle: Equatable {
        case open
        /// The client is done (its input ended without views, or a line was too long): close once idle.
        case closeWhenIdle
        /// Closing: nothing more is read or run. `wasToCloseWhenIdle`: it was also done (replies that
        /// become known now are not flushed on their own).
        case closing(wasToCloseWhenIdle: Bool)
    }

    /// Whether requests are read and run.
    enum Reading: Equatable {
        case flowing
        /// Unsent output is above `maxOutputBytes`: no reading, no requests run. `readWanted`: a read
        /// was asked for meanwhile.
        case paused(readWanted: Bool)
        /// The output drained: the held lines are running (`resumeReading`), then reading goes on.
        case resuming(readWanted: Bool)
    }

    private(set) var lifecycle = Lifecycle.open
    private(set) var reading = Reading.flowing
    /// A request waits before it can reply (a dequeue waiting for plugins, a request waiting for a write
    /// to finish before it runs): later lines are held, so replies stay in request order.
    private(set) var requestWaiting = false
    /// The peer closed its sending side.
    private(set) var inputClosed = false
    /// Request lines that wait their turn (behind a waiting request, or while output is paused), in order.
    private var heldLines = FrontQueue<ByteBuffer>()
    /// The `line-too-long` reply, when the overlong line came while lines were held: delivered after them.
    private var heldFinalReply: Reply?
    private var replies = ReplyQueue<Reply>()
    /// Bytes of the unfinished line the framer holds (counted in the server's total).
    private(set) var heldPartialBytes = 0
    /// When the unfinished line began (nil: none, or its clock is stopped while the connection is paused).
    private(set) var partialLineStarted: NIODeadline?
    private var partialLineCheckScheduled = false
    /// How long a line may stay unfinished.
    let partialLineTimeout: TimeAmount

    init(partialLineTimeout: TimeAmount) {
        self.partialLineTimeout = partialLineTimeout
    }

    var isClosing: Bool { if case .closing = lifecycle { true } else { false } }
    var isOutputPaused: Bool { if case .paused = reading { true } else { false } }
    /// No request is waiting or held and no reply is queued or held back.
    var isIdle: Bool { !requestWaiting && replies.isEmpty && heldLines.isEmpty && heldFinalReply == nil }
    /// Lines are held (behind a waiting request, or while output is paused).
    var isHoldingLines: Bool { requestWaiting || isOutputPaused || !heldLines.isEmpty }
    /// The request lines held, in order.
    var heldRequestLines: [ByteBuffer] { heldLines.elements }
    private var isToCloseWhenIdle: Bool {
        switch lifecycle {
        case .open: false
        case .closeWhenIdle: true
        case .closing(let wasToCloseWhenIdle): wasToCloseWhenIdle
        }
    }

    // MARK: Input

    /// A whole line arrived: run it now, or hold it behind what holds lines.
    mutating func lineFramed(_ line: ByteBuffer) -> Action? {
        admit(line).map(Action.run)
    }

    /// `lineFramed` without an action (the driver's hot path: no enum to build and take apart): the line
    /// to run now, or nil (held, or the connection is closing).
    mutating func admit(_ line: ByteBuffer) -> ByteBuffer? {
        guard !isClosing else { return nil }
        partialLineStarted = nil
        if isHoldingLines {
            heldLines.append(line)
            return nil
        }
        return line
    }

    /// An overlong line arrived (nothing more will be framed): `reply` (its `line-too-long`) goes after
    /// the replies to the lines before it, then the connection closes.
    mutating func lineTooLong(answer reply: Reply) -> [Action] {
        guard !isClosing else { return [] }
        var actions = releasePartialLine()
        if lifecycle == .open { lifecycle = .closeWhenIdle }
        if isHoldingLines {
            heldFinalReply = reply
            return actions
        }
        if let deliver = replyReady(reply) { actions.append(deliver) }
        if isIdle, let close = close(grace: .seconds(2)) { actions.append(close) }
        return actions
    }

    /// The framer now holds `bytes` of an unfinished line (0: none).
    mutating func partialLine(bytes: Int, now: NIODeadline) -> [Action] {
        guard !isClosing else { return [] }
        var actions: [Action] = [.countPartialLineBytes(bytes - heldPartialBytes)]
        heldPartialBytes = bytes
        if bytes == 0 {
            partialLineStarted = nil
        } else if partialLineStarted == nil && !isOutputPaused {
            partialLineStarted = now
            actions += schedulePartialLineCheck()
        }
        actions.append(.checkPartialLineTotal)
        return actions
    }

    /// The peer closed its sending side: a one-shot client (socat, nc) is closed once its replies are
    /// out; a connection with views stays.
    mutating func inputClosed(hasViews: Bool) -> Action? {
        inputClosed = true
        return hasViews ? nil : closeWhenIdle()
    }

    /// The channel asks for more input: issued unless the connection is paused or closing.
    mutating func readRequested() -> Action? {
        switch reading {
        case .paused:
            reading = .paused(readWanted: true)
            return nil
        case .resuming where isClosing:
            reading = .resuming(readWanted: true)
            return nil
        case .flowing where isClosing:
            return nil
        case .flowing, .resuming:
            return .read
        }
    }

    /// The next held line to run, or the held-back `line-too-long` reply, while nothing holds them
    /// (nil: nothing more now).
    mutating func nextHeldLine() -> Action? {
        guard !requestWaiting, !isOutputPaused, !isClosing else { return nil }
        if let line = heldLines.popFirst() { return .run(line) }
        guard let reply = heldFinalReply else { return nil }
        heldFinalReply = nil
        return replyReady(reply)
    }

    // MARK: Replies

    /// A request's reply is known: delivered now, or queued behind the replies before it.
    mutating func replyReady(_ reply: Reply) -> Action? {
        if deliversReplyAtOnce { return .deliver(reply) }
        queue(reply)
        return nil
    }

    /// Whether a reply known now is delivered at once (nothing is queued before it); if not, `queue` it.
    /// (`replyReady` in two steps, for the driver's hot path: the reply is not moved through an action.)
    var deliversReplyAtOnce: Bool { replies.isEmpty }

    /// Queues a known reply behind the replies before it.
    mutating func queue(_ reply: Reply) { replies.append(reply) }

    /// A request's reply waits for its change to be stored; the next requests run, their replies queue
    /// behind it. Report it with `replyResolved`.
    mutating func replyAwaited() -> ReplyQueue<Reply>.Ticket { replies.append(nil) }

    /// The awaited reply `ticket` names is known. Then deliver `readyReply(at: 0)`, `readyReply(at: 1)`…
    /// while there is one, and report how many with `repliesDelivered`.
    mutating func replyResolved(_ ticket: ReplyQueue<Reply>.Ticket, _ reply: Reply) { replies.fill(ticket, with: reply) }

    /// The queued reply `offset` places from the front, when it and every one before it are known.
    func readyReply(at offset: Int) -> Reply? { replies.known(at: offset) }

    /// The first `count` queued replies were delivered: close if the client is done and nothing else
    /// waits, else flush at the end of the turn.
    mutating func repliesDelivered(_ count: Int) -> Action? {
        guard count > 0 else { return nil }
        replies.removeFirst(count)
        if isIdle && isToCloseWhenIdle { return close(grace: .seconds(2)) }
        return .flushLater
    }

    /// A request waits before it can reply; later lines are held until `requestResolved`.
    mutating func requestWaits() { requestWaiting = true }

    /// The waiting request is resolved (its outcome is processed next).
    mutating func requestResolved() { requestWaiting = false }

    /// After a resolved request's outcome and the lines it held ran: close if the client is done and
    /// nothing else waits.
    mutating func closeIfDone() -> Action? {
        isIdle && isToCloseWhenIdle ? close(grace: .seconds(2)) : nil
    }

    /// Output went to a client whose views may just have gone (an event, a line to a plugin): a client
    /// whose input ended and that has no view left is closed once idle.
    mutating func outputSent(hasViews: Bool) -> Action? {
        inputClosed && !hasViews ? closeWhenIdle() : nil
    }

    // MARK: Output

    /// A request ran (or a reply was delivered): when the channel is no longer writable (unsent output
    /// above `maxOutputBytes`), reading and running requests stop, and the unfinished line's clock.
    mutating func outputChecked(writable: Bool) -> Action? {
        guard !writable, !isClosing else { return nil }
        switch reading {
        case .paused: return nil
        case .flowing: reading = .paused(readWanted: false)
        case .resuming(let readWanted): reading = .paused(readWanted: readWanted)
        }
        partialLineStarted = nil
        return .pauseReading
    }

    /// The channel's writability changed (its unsent output crossed a water mark).
    mutating func writabilityChanged(writable: Bool) -> Action? {
        guard !isClosing else { return nil }
        if !writable { return .weighHeldOutput }
        guard case .paused(let readWanted) = reading else { return nil }
        reading = .resuming(readWanted: readWanted)
        return .resumeReading
    }

    /// The held lines ran after `resumeReading`: unless they paused the connection again, the unfinished
    /// line's clock restarts, and the connection closes (a client that is done and idle) or reads on.
    mutating func heldLinesRan(now: NIODeadline) -> [Action] {
        guard case .resuming(let readWanted) = reading else { return [] }
        reading = .flowing
        var actions: [Action] = []
        if heldPartialBytes > 0 {
            partialLineStarted = now
            actions += schedulePartialLineCheck()
        }
        if isIdle && isToCloseWhenIdle {
            if let close = close(grace: .seconds(2)) { actions.append(close) }
        } else if readWanted {
            actions.append(.read)
        }
        return actions
    }

    /// Unsent output reached a limit (`maxOutputBytesHard`, or the server's `maxOutputBytesTotal` picked
    /// this connection): held lines are dropped and the connection closes at once.
    mutating func outputLimitCrossed() -> Action {
        lifecycle = .closing(wasToCloseWhenIdle: isToCloseWhenIdle)
        heldLines.removeAll()
        return .closeNow
    }

    // MARK: Unfinished lines

    /// The timer asked for by `schedulePartialLineCheck` fired.
    mutating func partialLineTimerFired(now: NIODeadline) -> [Action] {
        partialLineCheckScheduled = false
        guard !isClosing, let started = partialLineStarted else { return [] }
        if now >= started + partialLineTimeout { return [.partialLineTimedOut] }
        return schedulePartialLineCheck()
    }

    /// The unfinished line is given up (timed out, or the server's cap on unfinished lines picked it):
    /// the driver answers `line-too-long` before carrying out the actions; held lines and replies are
    /// dropped and the connection closes within a second.
    mutating func abandonPartialLine() -> [Action] {
        guard !isClosing else { return [] }
        var actions = releasePartialLine()
        heldLines.removeAll()
        heldFinalReply = nil
        if let close = close(grace: .seconds(1)) { actions.append(close) }
        return actions
    }

    /// Stops counting the unfinished line (it was discarded, or the connection is gone).
    mutating func releasePartialLine() -> [Action] {
        let held = heldPartialBytes
        heldPartialBytes = 0
        partialLineStarted = nil
        return held == 0 ? [] : [.countPartialLineBytes(-held)]
    }

    // MARK: Closing

    /// The server is stopping: the client's views are told, then the connection closes after a flush.
    mutating func shutDown() -> [Action] {
        guard let close = close(grace: .seconds(2)) else { return [] }
        return [.announceShutdown, close]
    }

    /// A plugin broke the protocol: closed after a short flush.
    mutating func disconnect() -> Action? { close(grace: .milliseconds(100)) }

    /// The client's views fell `maxViewQueueBytes` behind (they were told `overflow`): closed after a flush.
    mutating func viewsFellBehind() -> Action? { close(grace: .seconds(2)) }

    private mutating func closeWhenIdle() -> Action? {
        if isIdle { return close(grace: .seconds(2)) }
        switch lifecycle {
        case .open: lifecycle = .closeWhenIdle
        case .closing: lifecycle = .closing(wasToCloseWhenIdle: true)
        case .closeWhenIdle: break
        }
        return nil
    }

    private mutating func close(grace: TimeAmount) -> Action? {
        if isClosing { return nil }
        lifecycle = .closing(wasToCloseWhenIdle: isToCloseWhenIdle)
        return .closeAfterFlush(grace: grace)
    }

    private mutating func schedulePartialLineCheck() -> [Action] {
        guard !partialLineCheckScheduled, let started = partialLineStarted else { return [] }
        partialLineCheckScheduled = true
        return [.schedulePartialLineCheck(at: started + partialLineTimeout)]
    }
}
