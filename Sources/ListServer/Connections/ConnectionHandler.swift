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

    let state: ServerState
    let router: CommandRouter
    private(set) var id = 0
    /// Views attached on this connection.
    var views = ConnectionViews()
    /// Identical registers this connection repeated (see `RegistrationRepeats`).
    var registrationRepeats = RegistrationRepeats()
    /// What the client said it is in `hello`.
    var clientName: String?
    /// The client said in `hello` that it relays for others (listweb's pages): charged like any user,
    /// root's included (see `AccountHolder`).
    var isRelay = false
    /// The account this connection's views, queues and output are charged to.
    var accountHolder: AccountHolder { AccountHolder(uid: identity.uid, relay: isRelay) }
    /// Set when this connection said `hello` as a plugin.
    var plugin: PluginSession?
    /// A request is waiting before it can reply (a dequeue waiting for plugins, a request waiting for a
    /// write to finish before it runs): later lines wait in `queued`, so replies stay in request order.
    var waiting = false
    var queued: [ByteBuffer] = []
    /// The `line-too-long` reply, when it arrived while a request was waiting: sent after the replies
    /// to the lines before it.
    var lastReply: [UInt8]?
    var closeWhenIdle = false
    /// Who connected (`SO_PEERCRED` at accept): what the access policy decides on.
    let identity: PeerIdentity
    /// The command being run (for the audit log of refusals and the request log).
    var currentCommand = ""
    /// The error code the last request was answered with (nil: it succeeded), for the request log.
    var lastErrorCode: String?
    var context: ChannelHandlerContext?
    private var inputClosed = false
    var closing = false

    /// The line limit this connection's framer was made with (a reload changes only new connections').
    let maximumLineBytes: Int
    /// The output limits in force when the connection opened (its write buffer's water marks use them).
    let maximumOutputBytes: Int
    let maximumOutputBytesHard: Int
    /// How long a line may stay unfinished.
    let partialLineTimeout: TimeAmount

    /// Unsent output is above `maximumOutputBytes`: no reading, no requests run, until it drains.
    var outputPaused = false
    /// `channelBytesBound` when this connection's held output was last weighed against `maxOutputBytesTotal`.
    var heldOutputChecked = 0
    /// A read was asked for while reading was held; issued when reading resumes.
    var readHeld = false
    /// Bytes of the unfinished line the framer holds (counted in `ServerState.partialLineBytes`).
    var heldPartialBytes = 0
    /// When the unfinished line began (nil: none, or its clock is stopped while output is paused).
    var partialLineStarted: NIODeadline?
    var partialLineCheckScheduled = false
    /// At least the bytes the channel holds unsent: raised by every write to it, set exactly whenever
    /// `bufferedBytes(context:)` asks the channel (see `admitOutput`).
    var channelBytesBound = 0

    /// The handlers of one client connection, in order: the line framer, then the connection handler.
    /// The server, the in-process connections (`InProcessServer`) and the tests all build it here.
    /// `identity` defaults to listd's own (an administrator), for connections without a socket peer.
    static func handlers(state: ServerState, identity: PeerIdentity? = nil, router: CommandRouter = .shared) -> [ChannelHandler] {
        [
            ByteToMessageHandler(LineFramer(maximumLineBytes: state.configuration.maximumLineBytes)),
            ConnectionHandler(state: state, identity: identity ?? state.serviceIdentity, router: router),
        ]
    }

    init(state: ServerState, identity: PeerIdentity, router: CommandRouter) {
        self.state = state
        self.identity = identity
        maximumLineBytes = state.configuration.maximumLineBytes
        maximumOutputBytes = state.configuration.maximumOutputBytes
        maximumOutputBytesHard = max(state.configuration.maximumOutputBytesHard, state.configuration.maximumOutputBytes)
        partialLineTimeout = .seconds(Int64(state.configuration.partialLineTimeoutSeconds))
        self.router = router
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        id = state.register(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        releasePartialLine()
        state.unregister(self)
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .tooLong:
            releasePartialLine()
            state.errorCounts[ErrorCode.lineTooLong.rawValue, default: 0] += 1
            let reply = router.errorReply(
                id: nil, WireError(.lineTooLong, "The line is longer than \(maximumLineBytes) bytes; closing the connection."))
            // After the replies to the lines before it, then the connection closes.
            closeWhenIdle = true
            if isHoldingLines {
                lastReply = reply
            } else {
                process(CommandResult(reply: .encoded(reply)), context: context)
                if isIdle { closeAfterFlush(context: context) }
            }
        case .line(let line):
            partialLineStarted = nil
            handleLine(line, context: context)
        case .partial(let bytes):
            partialLine(bytes: bytes, context: context)
        }
    }

    /// Lines wait in `queued` (behind a waiting request, or while output is paused).
    var isHoldingLines: Bool { waiting || outputPaused || !queued.isEmpty }

    func handleLine(_ line: ByteBuffer, context: ChannelHandlerContext) {
        if isHoldingLines {
            queued.append(line)
            return
        }
        runLine(line, context: context)
    }

    /// Runs the queued lines while nothing holds them, then the held-back `line-too-long` reply.
    func runQueuedLines(context: ChannelHandlerContext) {
        while !waiting, !outputPaused, !closing, !queued.isEmpty { runLine(queued.removeFirst(), context: context) }
        if !waiting, !outputPaused, !closing, queued.isEmpty, let reply = lastReply {
            lastReply = nil
            process(CommandResult(reply: .encoded(reply)), context: context)
        }
    }

    /// Runs one line now (the queue is being drained in order).
    private func runLine(_ line: ByteBuffer, context: ChannelHandlerContext) {
        // The request log (debug level): who asked what, how it ended, how long it took.
        let logged = state.logger.logLevel <= .debug
        let started = logged ? NIODeadline.now() : .distantPast
        lastErrorCode = nil
        let outcome = line.withUnsafeReadableBytes { bytes -> CommandResult? in
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }  // blank lines are ignored
            return router.handle(line: bytes, connection: self)
        }
        guard let outcome else { return }
        if logged {
            state.logger.debug(
                "request",
                metadata: [
                    "connection": "\(id)", "user": "\(identity.displayName)", "command": "\(currentCommand.isEmpty ? "-" : currentCommand)",
                    "outcome": "\(lastErrorCode ?? (outcome.deferred == nil ? "ok" : "pending"))",
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
        guard let deferred = outcome.deferred else {
            if replies.isEmpty { deliver(outcome, context: context) } else { replies.append(PendingReply(outcome)) }
            return
        }
        if outcome.awaitsStorage {
            let slot = PendingReply(nil)
            replies.append(slot)
            deferred.whenResolved { [self] final in
                slot.outcome = final
                guard let context = self.context else { return }
                self.deliverReadyReplies(context: context)
            }
            return
        }
        waiting = true
        deferred.whenResolved { [self] final in
            guard let context = self.context else { return }
            self.waiting = false
            self.process(final, context: context)
            self.checkOutput(context: context)
            self.runQueuedLines(context: context)
            self.writePending(context: context)
            context.flush()
            if self.isIdle && self.closeWhenIdle { self.closeAfterFlush(context: context) }
        }
    }

    /// Replies that wait for earlier ones, in request order (`outcome` is set once it is known).
    private final class PendingReply {
        var outcome: CommandResult?
        init(_ outcome: CommandResult?) { self.outcome = outcome }
    }

    private var replies: [PendingReply] = []

    /// No request is waiting or queued and no reply is held back.
    var isIdle: Bool { !waiting && replies.isEmpty && queued.isEmpty && lastReply == nil }

    /// Delivers the queued replies from the front while they are known.
    private func deliverReadyReplies(context: ChannelHandlerContext) {
        var delivered = 0
        while delivered < replies.count, let outcome = replies[delivered].outcome {
            deliver(outcome, context: context)
            delivered += 1
        }
        guard delivered > 0 else { return }
        replies.removeFirst(delivered)
        if isIdle && closeWhenIdle {
            closeAfterFlush(context: context)
        } else {
            flushLater(context: context)
        }
    }

    private var flushScheduled = false

    /// Writes and flushes the replies and events at the end of this turn of the event loop: when a
    /// written group makes many of this connection's replies ready one after the other, or a burst of
    /// changes sends it many events, they leave in one write. (One task per turn for all connections:
    /// `ServerState.flushAtEndOfTurn`.)
    private func flushLater(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        state.flushAtEndOfTurn(self, on: context.eventLoop)
    }

    /// The flush `flushLater` asked for.
    func flushScheduledOutput() {
        flushScheduled = false
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
        if let broadcast = outcome.broadcast { state.send(broadcast) }
        for action in outcome.afterReply { action() }
    }

    /// A buffer with room for a reply (the last one's): the router writes the next reply into it.
    var replyScratch: [UInt8] = []

    func channelReadComplete(context: ChannelHandlerContext) {
        writePending(context: context)
        context.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            // A one-shot client (socat, nc) is done: flush its replies and close. A view stays.
            if views.isEmpty {
                if isIdle { closeAfterFlush(context: context) } else { closeWhenIdle = true }
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        state.logger.debug("connection error", metadata: ["connection": "\(id)", "user": "\(identity.displayName)", "error": "\(error)"])
        context.close(promise: nil)
    }

    /// Replies of the current read burst, written as one buffer at the end of the burst (or before
    /// anything else is written, so the order of lines never changes).
    var pending: ByteBuffer?

    func write(context: ChannelHandlerContext, reply: [UInt8]) {
        guard admitOutput(reply.count + 1, context: context) else { return }
        // Room for a burst's replies at once (a 16-deep pipeline of small replies without growing).
        if pending == nil { pending = context.channel.allocator.buffer(capacity: max(reply.count + 1, 2048)) }
        pending!.writeBytes(reply)
        pending!.writeInteger(UInt8(ascii: "\n"))
    }

    func writePending(context: ChannelHandlerContext) {
        guard let buffer = pending else { return }
        pending = nil
        channelBytesBound += buffer.readableBytes
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// Flushes what was written, then closes; after `grace`, closes anyway (a peer that does not read
    /// cannot hold the connection, and its unsent output, open).
    func closeAfterFlush(context: ChannelHandlerContext, grace: TimeAmount = .seconds(2)) {
        guard !closing else { return }
        closing = true
        writePending(context: context)
        let channel = context.channel
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0)), promise: done)
        done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        context.eventLoop.scheduleTask(in: grace) { channel.close(promise: nil) }
    }

    /// Detaches every view of this connection from its data source.
    private func detachAllViews() {
        for attachment in views {
            state.dataSources[attachment.dataSource]?.detach(view: attachment.name)
            attachment.releaseCharges()
        }
        views.removeAll()
    }

    /// The one way an event reaches this connection's views (every kind: changes, reloads,
    /// `layoutChanged`, `cellUpdated`, `selectionChanged`, `dropped`, a resumed view's backlog): written
    /// at once and flushed at the end of the loop's turn, counted in `stats` (`events.sent`), unless this connection's unsent output
    /// would pass the view queue limit (`maxViewQueueBytes`): then its views get a last `overflow` event
    /// and the connection is closed. `event` is one line with its newline (a broadcast shares one buffer
    /// among its views).
    func sendEvent(_ event: ByteBuffer) {
        guard let context, !closing else { return }
        if !views.isEmpty, fellBehind(adding: event.readableBytes, context: context) { return }
        guard admitOutput(event.readableBytes, context: context) else { return }
        writePending(context: context)
        channelBytesBound += event.readableBytes
        // Flushed at the end of this turn of the event loop: the events of a burst of changes (a writer's
        // pipelined requests) leave in one write.
        context.write(wrapOutboundOut(event), promise: nil)
        flushLater(context: context)
        state.eventsSent += 1
        // A view whose peer does not read keeps growing past the moment it stopped being writable: its
        // share of maxOutputBytesTotal is looked at again for every maxOutputBytes more.
        if channelBytesBound >= heldOutputChecked + maximumOutputBytes, !context.channel.isWritable {
            heldOutputChecked = channelBytesBound
            state.shedHeldOutput()
        }
        closeIfFinished(context: context)
    }

    /// `sendEvent` for an event line built for this connection alone (without its newline).
    func sendEvent(_ bytes: [UInt8]) {
        guard let context, !closing else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 1)
        buffer.writeBytes(bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        sendEvent(buffer)
    }

    /// Whether `count` more bytes of events would put this connection's views `maxViewQueueBytes` behind:
    /// then they get `overflow` and are disconnected (counted in `stats`), and nothing more is sent.
    private func fellBehind(adding count: Int, context: ChannelHandlerContext) -> Bool {
        let limit = state.configuration.maximumViewQueueBytes
        if channelMayHold(atLeast: limit - count + 1, context: context) {
            let buffered = channelBytesBound
            state.viewsOverflowed += 1
            state.logger.warning(
                "view fell behind; disconnecting", metadata: ["connection": "\(id)", "user": "\(identity.displayName)", "bufferedBytes": "\(buffered)"])
            detachAllViews()
            write(context: context, reply: ViewEvent.overflow(limit: state.configuration.maximumViewQueueBytes))
            closeAfterFlush(context: context)
            return true
        }
        return false
    }

    /// Tells the client the server is stopping (views get a `shutdown` event), then closes.
    func shutDown() {
        guard let context, !closing else { return }
        if !views.isEmpty { write(context: context, reply: ViewEvent.shutdown) }
        closeAfterFlush(context: context)
    }

    /// The connection's event loop (while it is open).
    var eventLoop: EventLoop? { context?.eventLoop }

    /// Closes at once, logging why (a plugin that broke the protocol).
    func disconnect(reason: String) {
        guard let context, !closing else { return }
        state.logger.warning("disconnecting", metadata: ["connection": "\(id)", "user": "\(identity.displayName)", "plugin": "\(plugin?.name ?? "-")", "reason": "\(reason)"])
        closeAfterFlush(context: context, grace: .milliseconds(100))
    }

    /// Forgets a view of this connection that its data source no longer serves and tells the client:
    /// `{"event": "dropped", "dataSource", "view", "reason"?}` (the data source was dropped, or with
    /// `reason`, e.g. `access`, why else).
    func viewDropped(_ view: ViewSession, reason: String? = nil) {
        views.remove(view)
        view.releaseCharges()
        sendEvent(ViewEvent.dropped(dataSource: view.dataSource, view: view.name, reason: reason))
    }

    /// Writes a line that is not an event of this connection's views (a configure request to a plugin,
    /// whose own limits apply), flushed at once.
    func sendLine(_ bytes: [UInt8]) {
        guard let context, !closing else { return }
        write(context: context, reply: bytes)
        writePending(context: context)
        context.flush()
        closeIfFinished(context: context)
    }

    /// A one-shot client whose input ended and whose last view just went: closes once its replies are out.
    private func closeIfFinished(context: ChannelHandlerContext) {
        if inputClosed && views.isEmpty {
            // A one-shot client that just lost its last view: close once its replies are out.
            if isIdle { closeAfterFlush(context: context) } else { closeWhenIdle = true }
        }
    }
}
