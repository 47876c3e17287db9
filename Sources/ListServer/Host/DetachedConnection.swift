import ListAccess
import ListWire

/// A client connection without a channel (for fuzzers): each request line goes straight to the command
/// router and the engine, and its reply comes back as bytes, with none of SwiftNIO's pipeline, framing,
/// buffers or event loop in between.
///
/// It is the connection handler a socket connection has, never added to a channel: what the commands
/// reach of their connection (identity, `hello`, views, cells) is the real one's. What needs a channel
/// does nothing here: the events of views attached on it and lines to a plugin are not written, and the
/// commands that wait on the event loop (plugins' answers, `minVersion`) answer at once, as they do
/// without one. It is not in the server's registry of open connections (listd's limits on connections
/// do not count it), and it keeps what it attached until its data sources are dropped.
package final class DetachedConnection {
    private let handler: ConnectionHandler
    /// Replies of requests that finished later (a deferred result), in order, until taken.
    private var lateReplies: [[UInt8]] = []
    /// Requests whose reply has not come yet.
    package private(set) var pendingReplies = 0

    /// A connection to `state` as `identity` (default: listd's own, an administrator).
    package init(state: ServerState, identity: PeerIdentity? = nil) {
        handler = ConnectionHandler(state: state, identity: identity ?? state.serviceIdentity, router: CommandRouter.shared)
    }

    /// Runs one request line (without its newline; a framer has dropped a trailing `\r`) as the
    /// connection handler runs a framed line: the router, then the reply delivered (its broadcast
    /// published, what follows it done). Returns the reply line (without newline), or nil when there is
    /// none now: a blank line (ignored), or a request that finishes later (see `takeLateReplies`).
    package func run(line: UnsafeRawBufferPointer) -> [UInt8]? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        handler.client.lastErrorCode = nil
        return settle(handler.router.handle(line: line, connection: handler), late: false)
    }

    /// Delivers `outcome` now, or once it is resolved (perhaps into another outcome that waits in
    /// turn); a reply delivered late goes to `lateReplies`.
    private func settle(_ outcome: CommandResult, late: Bool) -> [UInt8]? {
        if outcome.awaited != nil {
            if !late { pendingReplies += 1 }
            handler.state.holdUntilDurable(outcome, holder: self, slot: nil)
            return nil
        }
        guard let deferred = outcome.deferred else {
            let reply = deliver(outcome)
            guard late else { return reply }
            pendingReplies -= 1
            if let reply { lateReplies.append(reply) }
            return nil
        }
        if !late { pendingReplies += 1 }
        deferred.whenResolved { [self] final in _ = settle(final, late: true) }
        return nil
    }

    /// The replies of requests that finished later, in the order they finished; emptied.
    package func takeLateReplies() -> [[UInt8]] {
        defer { lateReplies.removeAll() }
        return lateReplies
    }

    private func deliver(_ outcome: CommandResult) -> [UInt8]? {
        if let broadcast = outcome.broadcast { handler.state.publisher.send(broadcast) }
        for action in outcome.afterReply { action() }
        if case .encoded(let reply) = outcome.reply { return reply }
        return nil
    }
}

extension DetachedConnection: DurableReplyHolder {
    func heldReplyResolved(_ slot: Int?, _ reply: CommandResult) {
        _ = settle(reply, late: true)
    }
}
