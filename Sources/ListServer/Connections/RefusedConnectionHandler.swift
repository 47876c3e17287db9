import ListAccess
import ListWire
import Logging
import NIOCore

/// A connection listd will not serve: it gets one error line, then is closed.
final class RefusedConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let reply: [UInt8]

    init(reply: [UInt8]) { self.reply = reply }

    func channelActive(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: reply.count + 1)
        buffer.writeBytes(reply)
        buffer.writeInteger(UInt8(ascii: "\n"))
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
        // A peer that never reads cannot keep it open.
        context.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}  // nothing it sends is run
}

extension ServerState {
    /// Why a new connection of `identity` is not served (the error line it gets), or nil to serve it:
    /// listd is stopping, holds `maxConnections`, or the user holds `maxConnectionsPerUser` (root is
    /// exempt from the per-user limit, not the global one).
    func refusal(of identity: PeerIdentity) -> [UInt8]? {
        let error: WireError
        if isShuttingDown {
            error = WireError(.shuttingDown, "listd is stopping and accepts no new connections.")
        } else if connections.count >= configuration.maximumConnections {
            error = WireError(
                .limitExceeded, "listd holds \(connections.count) connections, its limit (maxConnections).",
                details: ["limit": "maxConnections"])
            logRefusal("refusing a connection: maxConnections", identity, connections: connections.count, level: .warning)
        } else if identity.uid != 0, case let held = connections.count(of: identity.uid), held >= configuration.maximumConnectionsPerUser {
            stats.quotaRefusals += 1
            error = WireError(
                .quotaExceeded,
                "User \(identity.displayName) (uid \(identity.uid)) holds \(held) connections, the per-user limit (maxConnectionsPerUser).",
                details: ["quota": "maxConnectionsPerUser", "uid": .int(Int(identity.uid)), "limit": .int(configuration.maximumConnectionsPerUser)])
            logRefusal("quota exceeded: refusing a connection (maxConnectionsPerUser)", identity, connections: held, level: .notice)
        } else {
            return nil
        }
        return CommandResult.errorLine(id: nil, error)
    }

    /// Logs a refused connection, at most once a second: a client reconnecting in a loop cannot flood
    /// the journal (the line says how many refusals went unlogged since the last one).
    private func logRefusal(_ message: String, _ identity: PeerIdentity, connections: Int, level: Logger.Level) {
        let now = NIODeadline.now()
        if let last = stats.lastRefusalLogged, now - last < .seconds(1) {
            stats.refusalsNotLogged += 1
            return
        }
        stats.lastRefusalLogged = now
        logger.log(
            level: level, "\(message)",
            metadata: [
                "user": "\(identity.displayName)", "uid": "\(identity.uid)", "connections": "\(connections)",
                "notLoggedSinceLast": "\(stats.refusalsNotLogged)",
            ])
        stats.refusalsNotLogged = 0
    }
}
