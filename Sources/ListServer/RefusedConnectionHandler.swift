import ListAccess
import ListWire
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
            logger.warning("refusing a connection: maxConnections", metadata: ["connections": "\(connections.count)", "user": "\(identity.displayName)"])
        } else if identity.uid != 0, let held = connectionsPerUser[identity.uid], held >= configuration.maximumConnectionsPerUser {
            quotaRefusals += 1
            error = WireError(
                .limitExceeded,
                "User \(identity.displayName) (uid \(identity.uid)) holds \(held) connections, the per-user limit (maxConnectionsPerUser).",
                details: ["quota": "maxConnectionsPerUser", "uid": .int(Int(identity.uid))])
            logger.notice(
                "quota exceeded: refusing a connection",
                metadata: ["user": "\(identity.displayName)", "uid": "\(identity.uid)", "connections": "\(held)"])
        } else {
            return nil
        }
        return CommandRouter.shared.errorReply(id: nil, error)
    }
}
