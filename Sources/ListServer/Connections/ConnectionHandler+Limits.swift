import ListWire
import NIOCore

/// What one connection may make listd hold: its unsent output and its unfinished line.
///
/// - Output: the channel's write buffer water marks are `maximumOutputBytes` (high) and half of it
///   (low). Once a request leaves the channel unwritable, the connection stops reading (its `read`s are
///   held) and stops running requests (framed lines are held, in order) until the peer has read
///   enough for the channel to become writable again. Unsent bytes reaching `maximumOutputBytesHard`
///   (events pushed to a view that never reads, replies that waited) close the connection; one reply
///   bigger than that limit with nothing else unsent is still sent, as reading clients need it.
/// - Unfinished lines: the framer reports what it holds (`FramedLine.partial`). A line not finished within
///   `partialLineTimeoutSeconds` (its clock stops while the connection is not read) closes the
///   connection with `line-too-long`; the bytes count toward `ConnectionRegistry.partialLineBytes`, whose
///   cap closes connections of the user holding the most, its longest lines first
///   (`State/ServerState+ConnectionLimits.swift`).
extension ConnectionHandler {
    /// Bytes written to the channel and not yet accepted by the socket.
    func bufferedBytes(context: ChannelHandlerContext) -> Int {
        let exact = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        output.channelBytesBound = exact
        return exact
    }

    /// Whether the channel may hold `limit` bytes or more: from the running upper bound when it is
    /// below (no option read, which costs as much as a small request), else asked exactly.
    func channelMayHold(atLeast limit: Int, context: ChannelHandlerContext) -> Bool {
        output.channelBytesBound >= limit && bufferedBytes(context: context) >= limit
    }

    /// Bytes of replies and events not yet accepted by the socket (written or still being gathered).
    func unsentBytes(context: ChannelHandlerContext) -> Int {
        bufferedBytes(context: context) + output.gatheredBytes
    }

    /// Whether `count` more bytes of output may be queued; if they would bring the unsent output to the
    /// hard limit, closes the connection (and logs why) and returns false.
    func admitOutput(_ count: Int, context: ChannelHandlerContext) -> Bool {
        if output.surelyAdmits(count, hardLimit: limits.maximumOutputBytesHard) { return true }
        let unsent = unsentBytes(context: context)
        guard unsent > 0, unsent + count >= limits.maximumOutputBytesHard else { return true }
        state.logger.warning(
            "closing a connection that does not read its output",
            metadata: [
                "connection": "\(id)", "user": "\(identity.displayName)", "unsentBytes": "\(unsent + count)",
                "maxOutputBytesHard": "\(limits.maximumOutputBytesHard)",
            ])
        perform(machine.outputLimitCrossed(), context: context)
        return false
    }

    /// After a request ran: hands a large gathered output to the channel, and pauses the connection
    /// when its unsent output is above `maximumOutputBytes` (the channel is no longer writable).
    func checkOutput(context: ChannelHandlerContext) {
        guard !machine.isClosing else { return }
        // Gathered replies go to the channel (whose water marks pause the connection) once they are
        // a chunk's worth, or at the end of the read burst (channelReadComplete).
        if output.shouldHandOff(maximumOutputBytes: limits.maximumOutputBytes) {
            writePending(context: context)
            context.flush()
        }
        perform(machine.outputChecked(writable: context.channel.isWritable), context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        perform(machine.writabilityChanged(writable: context.channel.isWritable), context: context)
        context.fireChannelWritabilityChanged()
    }

    /// Reads wait while output is paused or the connection is closing.
    func read(context: ChannelHandlerContext) {
        perform(machine.readRequested(), context: context)
    }

    /// Closes at once, dropping what is unsent: the server's cap on held output picked this connection.
    func closeHoldingOutput() {
        guard let context else { return }
        perform(machine.outputLimitCrossed(), context: context)
    }

    // MARK: Unfinished lines

    /// The timer the machine asked for (`schedulePartialLineCheck`).
    func partialLineTimerFired() {
        guard let context else { return }
        perform(machine.partialLineTimerFired(now: context.eventLoop.now), context: context)
    }

    /// Replies `line-too-long` with `message` and closes the connection (within a second, read or not);
    /// requests not yet run are dropped.
    func abandonPartialLine(_ message: String, reason: String) {
        guard let context, !machine.isClosing else { return }
        let held = machine.heldPartialBytes
        let actions = machine.abandonPartialLine()
        state.stats.errorCounts[ErrorCode.lineTooLong.rawValue, default: 0] += 1
        state.logger.warning("closing a connection: \(reason)", metadata: ["connection": "\(id)", "user": "\(identity.displayName)", "partialLineBytes": "\(held)"])
        write(context: context, reply: CommandResult.errorLine(id: nil, WireError(.lineTooLong, message)))
        perform(actions, context: context)
    }
}
