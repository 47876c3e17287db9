import DiffableCore
import ListAccess
import ListEngine
import ListWire
import Logging
import NIOCore

/// One client connection: frames lines, runs each request through the router in order, writes the
/// replies (flushed once per read burst, so pipelined requests are answered in one write), and carries
/// the events of the views attached on it.
///
/// It also bounds what one connection can make listd hold (see `ConnectionHandler+Limits.swift`): while
/// its unsent output is above `maximumOutputBytes` it neither reads nor runs requests; at
/// `maximumOutputBytesHard` it is closed; an unfinished line times out and counts toward the server's
/// cap on unfinished lines.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = FramedLine
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    /// The connection's life: what this handler reports to it, and what it says to do.
    typealias Machine = ConnectionStateMachine<CommandResult>

    let state: ServerState
    /// Runs the lines this connection frames (the command router).
    let router: any RequestRunner
    private(set) var id = 0
    /// Who connected (`SO_PEERCRED` at accept): what the access policy decides on.
    let identity: PeerIdentity
    var context: ChannelHandlerContext?
    /// Views attached on this connection.
    var views = ConnectionViews()
    /// Identical registers this connection repeated (see `RegistrationRepeats`).
    var registrationRepeats = RegistrationRepeats()
    /// What the client said in `hello`, and the request it is running.
    var client = ClientProfile()
    /// Reading, the order of requests and replies, the unfinished line's clock, closing.
    var machine: Machine
    /// What was written and not yet seen leave.
    var output = ConnectionOutput()
    /// The limits in force when the connection opened.
    let limits: ConnectionLimits
    /// A buffer with room for a reply (the last one's): the router writes the next reply into it.
    var replyScratch: [UInt8] = []
    /// The arrays the decoder fills for the next request (`RequestBuffers`).
    var requestBuffers = RequestBuffers()

    /// The handlers of one client connection, in order: the line framer, then the connection handler.
    /// The server, the in-process connections (`InProcessServer`) and the tests all build it here.
    /// `identity` defaults to listd's own (an administrator), for connections without a socket peer.
    static func handlers(state: ServerState, identity: PeerIdentity? = nil, router: any RequestRunner) -> [ChannelHandler] {
        [
            ByteToMessageHandler(LineFramer(maximumLineBytes: state.configuration.maximumLineBytes)),
            ConnectionHandler(state: state, identity: identity ?? state.serviceIdentity, router: router),
        ]
    }

    init(state: ServerState, identity: PeerIdentity, router: any RequestRunner) {
        self.state = state
        self.identity = identity
        limits = ConnectionLimits(state.configuration)
        machine = Machine(partialLineTimeout: limits.partialLineTimeout)
        self.router = router
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        id = state.register(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        perform(machine.releasePartialLine(), context: context)
        state.unregister(self)
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !machine.isClosing else { return }
        switch unwrapInboundIn(data) {
        case .tooLong:
            state.stats.errorCounts[ErrorCode.lineTooLong.rawValue, default: 0] += 1
            let reply = CommandResult.errorLine(
                id: nil, WireError(.lineTooLong, "The line is longer than \(limits.maximumLineBytes) bytes; closing the connection."))
            // After the replies to the lines before it, then the connection closes.
            perform(machine.lineTooLong(answer: CommandResult(reply: .encoded(reply))), context: context)
        case .line(let line):
            if let line = machine.admit(line) { runLine(line, context: context) }
        case .partial(let bytes):
            perform(machine.partialLine(bytes: bytes, now: context.eventLoop.now), context: context)
        }
    }

    /// Runs the held lines while nothing holds them, then the held-back `line-too-long` reply.
    func runHeldLines(context: ChannelHandlerContext) {
        while let next = machine.nextHeldLine() { perform(next, context: context) }
    }

    /// Runs one line now (the held lines are being drained in order).
    private func runLine(_ line: ByteBuffer, context: ChannelHandlerContext) {
        // The request log (debug level): who asked what, how it ended, how long it took.
        let logged = state.logger.logLevel <= .debug
        let started = logged ? NIODeadline.now() : .distantPast
        client.lastErrorCode = nil
        let outcome = line.withUnsafeReadableBytes { bytes -> CommandResult? in
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }  // blank lines are ignored
            return router.handle(line: bytes, connection: self)
        }
        guard let outcome else { return }
        if logged {
            state.logger.debug(
                "request",
                metadata: [
                    "connection": "\(id)", "user": "\(identity.displayName)", "command": "\(client.currentCommand.isEmpty ? "-" : client.currentCommand)",
                    "outcome": "\(client.lastErrorCode ?? (outcome.deferred == nil ? "ok" : "pending"))",
                    "microseconds": "\((NIODeadline.now() - started).nanoseconds / 1_000)",
                ])
        }
        process(outcome, context: context)
        checkOutput(context: context)
    }

    /// Delivers an outcome now, or once it is resolved. A reply that waits for its change to be stored
    /// lets the next requests run (their replies queue behind it); any other deferred reply (a request
    /// waiting for a write to finish before it runs, a dequeue waiting for plugins) holds the next
    /// requests back. An outcome may resolve into another deferred one (a request that waited, ran,
    /// and now waits for its own write).
    private func process(_ outcome: CommandResult, context: ChannelHandlerContext) {
        if outcome.awaited != nil {
            // Made already, held until its change is durable (`DurableReplies`); the next requests run.
            state.holdUntilDurable(outcome, holder: self, slot: machine.replyAwaited().number)
            return
        }
        guard let deferred = outcome.deferred else {
            if machine.deliversReplyAtOnce {
                deliver(outcome, context: context)
            } else {
                machine.queue(outcome)
            }
            return
        }
        if outcome.awaitsStorage {
            let ticket = machine.replyAwaited()
            deferred.whenResolved { [self] final in self.state.holdUntilDurable(final, holder: self, slot: ticket.number) }
            return
        }
        machine.requestWaits()
        deferred.whenResolved { [self] final in
            guard let context = self.context else { return self.publishOnceDone(final) }
            self.machine.requestResolved()
            self.process(final, context: context)
            self.checkOutput(context: context)
            self.runHeldLines(context: context)
            self.writePending(context: context)
            context.flush()
            self.perform(self.machine.closeIfDone(), context: context)
        }
    }

    /// Delivers the queued replies from the front while they are known. On a closed connection, what
    /// they publish still goes out (their changes were made: other views must see every version).
    private func deliverReadyReplies() {
        var delivered = 0
        while let outcome = machine.readyReply(at: delivered) {
            if let context {
                deliver(outcome, context: context)
            } else {
                publish(outcome)
            }
            delivered += 1
        }
        let action = machine.repliesDelivered(delivered)
        if let context { perform(action, context: context) }
    }

    /// Writes and flushes the replies and events at the end of this turn of the event loop: when a
    /// written group makes many of this connection's replies ready one after the other, or a burst of
    /// changes sends it many events, they leave in one write. (One task per turn for all connections:
    /// `ServerState.flushAtEndOfTurn`.)
    func flushLater(context: ChannelHandlerContext) {
        guard !output.flushScheduled else { return }
        output.flushScheduled = true
        state.publisher.flushAtEndOfTurn(self, on: context.eventLoop)
    }

    /// The flush `flushLater` asked for.
    func flushScheduledOutput() {
        output.flushScheduled = false
        guard let context else { return }
        writePending(context: context)
        context.flush()
    }

    private func deliver(_ outcome: CommandResult, context: ChannelHandlerContext) {
        if case .encoded(let reply) = outcome.reply {
            write(context: context, reply: reply)
            // The reply's buffer is the next reply's, emptied once nothing else holds it (JSONWriter).
            // (A small one only: an idle connection keeps it.)
            if replyScratch.capacity == 0, reply.capacity <= 512 { replyScratch = reply }
        }
        publish(outcome)
    }

    /// What a request that finished after its connection closed publishes, once it is final (a change
    /// it made is published; no reply is written).
    private func publishOnceDone(_ outcome: CommandResult) {
        if outcome.awaited != nil { return state.holdUntilDurable(outcome, holder: self, slot: nil) }
        guard let deferred = outcome.deferred else { return publish(outcome) }
        deferred.whenResolved { [self] final in self.publishOnceDone(final) }
    }

    /// Sends what a reply publishes (its broadcast) and does what follows it.
    private func publish(_ outcome: CommandResult) {
        if let broadcast = outcome.broadcast { state.publisher.send(broadcast) }
        for action in outcome.afterReply { action() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writePending(context: context)
        context.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            // A one-shot client (socat, nc) is done: flush its replies and close. A view stays.
            perform(machine.inputClosed(hasViews: !views.isEmpty), context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        state.logger.debug("connection error", metadata: ["connection": "\(id)", "user": "\(identity.displayName)", "error": "\(error)"])
        context.close(promise: nil)
    }

    func write(context: ChannelHandlerContext, reply: [UInt8]) {
        guard admitOutput(reply.count + 1, context: context) else { return }
        // Room for a burst's replies at once (a 16-deep pipeline of small replies without growing).
        if output.gathered == nil { output.gathered = context.channel.allocator.buffer(capacity: max(reply.count + 1, 2048)) }
        output.gathered!.writeBytes(reply)
        output.gathered!.writeInteger(UInt8(ascii: "\n"))
    }

    func writePending(context: ChannelHandlerContext) {
        guard let buffer = output.takeGathered() else { return }
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// Flushes what was written, then closes; after `grace`, closes anyway (a peer that does not read
    /// cannot hold the connection, and its unsent output, open). The machine decided (it is closing).
    private func closeAfterFlush(context: ChannelHandlerContext, grace: TimeAmount) {
        writePending(context: context)
        let channel = context.channel
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0)), promise: done)
        done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        context.eventLoop.scheduleTask(in: grace) { channel.close(promise: nil) }
    }

    /// Carries out what the machine said to do.
    func perform(_ action: Machine.Action?, context: ChannelHandlerContext) {
        guard let action else { return }
        switch action {
        case .run(let line): runLine(line, context: context)
        case .deliver(let outcome): deliver(outcome, context: context)
        case .read: context.read()
        case .pauseReading:
            state.logger.debug("output above maxOutputBytes: not reading", metadata: ["connection": "\(id)", "user": "\(identity.displayName)"])
            state.shedHeldOutput()
        case .weighHeldOutput:
            // Above maxOutputBytes (a reply not read, or a view's events): counted toward maxOutputBytesTotal.
            output.heldOutputChecked = output.channelBytesBound
            state.shedHeldOutput()
        case .resumeReading:
            runHeldLines(context: context)
            writePending(context: context)
            context.flush()
            perform(machine.heldLinesRan(now: context.eventLoop.now), context: context)
        case .flushLater: flushLater(context: context)
        case .closeAfterFlush(let grace): closeAfterFlush(context: context, grace: grace)
        case .closeNow:
            output.gathered = nil
            context.close(promise: nil)
        case .countPartialLineBytes(let bytes): state.connections.partialLineBytes += bytes
        case .checkPartialLineTotal:
            if state.connections.partialLineBytes > state.configuration.maximumPartialLineBytesTotal { state.shedPartialLines() }
        case .schedulePartialLineCheck(let deadline):
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(deadline: deadline) { bound.value.partialLineTimerFired() }
        case .partialLineTimedOut:
            let seconds = limits.partialLineTimeout.nanoseconds / 1_000_000_000
            abandonPartialLine(
                "The line was not finished within \(seconds) second\(seconds == 1 ? "" : "s") (partialLineTimeoutSeconds); closing the connection.",
                reason: "partial line timed out")
        case .announceShutdown:
            if !views.isEmpty { write(context: context, reply: ViewEvent.shutdown) }
        }
    }

    func perform(_ actions: [Machine.Action], context: ChannelHandlerContext) {
        for action in actions { perform(action, context: context) }
    }
}

extension ConnectionHandler: DurableReplyHolder {
    /// A reply that waited (for its change to be stored) is known: delivered with the replies it held back.
    func heldReplyResolved(_ slot: Int?, _ reply: CommandResult) {
        guard let slot else { return publish(reply) }  // its connection closed before it ran
        machine.replyResolved(ReplyQueue.Ticket(number: slot), reply)
        deliverReadyReplies()
    }
}
