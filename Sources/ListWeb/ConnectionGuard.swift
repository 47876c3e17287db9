import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How long connections may wait and how many one peer may hold.
public struct ConnectionLimits: Sendable {
    /// A new connection's first request head must be complete within this time, or it is closed.
    public var headerTimeout: TimeAmount
    /// A keep-alive connection with no request for this long is closed (Hummingbird's idle timeout).
    public var idleTimeout: TimeAmount
    /// Connections one peer (remote address; all of a Unix socket's clients together) may hold.
    public var maximumPerPeer: Int

    public init(headerTimeout: TimeAmount = .seconds(10), idleTimeout: TimeAmount = .seconds(30), maximumPerPeer: Int = 256) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.maximumPerPeer = maximumPerPeer
    }
}

/// What one connection is doing, written by its own handler and read when its peer is at its limit.
final class ConnectionActivity: Sendable {
    enum Phase: UInt8 {
        /// No complete request head yet: free to close.
        case awaitingHead
        /// Served HTTP; free to close when quiet for `quietTime`.
        case http
        /// A WebSocket (a page): never closed to make room (pages have their own limit).
        case webSocket
    }

    let channel: any Channel
    let accepted: UInt64
    private let phaseValue = Atomic<UInt8>(Phase.awaitingHead.rawValue)
    private let lastActive = Atomic<Int64>(NIODeadline.now().uptimeNanoseconds.clampedToInt64)

    /// How long an HTTP connection must have been quiet to be closed for a newcomer.
    static let quietTime = TimeAmount.seconds(2)

    init(channel: any Channel, accepted: UInt64) {
        self.channel = channel
        self.accepted = accepted
    }

    var phase: Phase { Phase(rawValue: phaseValue.load(ordering: .relaxed)) ?? .http }
    func set(_ phase: Phase) { phaseValue.store(phase.rawValue, ordering: .relaxed) }
    func touch() { lastActive.store(NIODeadline.now().uptimeNanoseconds.clampedToInt64, ordering: .relaxed) }

    /// Whether closing it to make room for a newcomer loses nothing in progress.
    var isEvictable: Bool {
        switch phase {
        case .awaitingHead: return true
        case .webSocket: return false
        case .http: return NIODeadline.now().uptimeNanoseconds.clampedToInt64 - lastActive.load(ordering: .relaxed) >= Self.quietTime.nanoseconds
        }
    }
}

extension UInt64 {
    fileprivate var clampedToInt64: Int64 { Int64(clamping: self) }
}

/// The open connections of every peer, for the per-peer limit. A peer at its limit that opens another
/// loses its oldest connection that has nothing in progress (one still without a request head, or an
/// HTTP one that has been quiet), so idle connections of one client cannot keep out another request; when
/// all are busy, the newcomer is closed.
final class PeerConnections: Sendable {
    let limit: Int
    private let state = Mutex(State())

    struct State {
        var byPeer: [String: [ObjectIdentifier: ConnectionActivity]] = [:]
        var accepted: UInt64 = 0
    }

    init(limit: Int) { self.limit = max(1, limit) }

    /// Records `channel` of `peer`; answers the connection to close to stay within the limit (nil: none).
    func admit(_ channel: any Channel, peer: String) -> (activity: ConnectionActivity, close: (any Channel)?) {
        state.withLock { state in
            state.accepted += 1
            let activity = ConnectionActivity(channel: channel, accepted: state.accepted)
            var connections = state.byPeer[peer, default: [:]]
            var victim: (any Channel)?
            if connections.count >= limit {
                // Only at the limit: one pass over this peer's connections (at most `limit`).
                let oldest = connections.values.filter(\.isEvictable).min { $0.accepted < $1.accepted }
                if let oldest {
                    connections[ObjectIdentifier(oldest.channel)] = nil
                    victim = oldest.channel
                } else {
                    victim = channel
                }
            }
            if victim !== channel { connections[ObjectIdentifier(channel)] = activity }
            state.byPeer[peer] = connections
            return (activity, victim)
        }
    }

    func remove(_ channel: any Channel, peer: String) {
        state.withLock { state in
            guard var connections = state.byPeer[peer] else { return }
            connections[ObjectIdentifier(channel)] = nil
            state.byPeer[peer] = connections.isEmpty ? nil : connections
        }
    }

    /// Connections held, all peers together.
    var count: Int { state.withLock { $0.byPeer.values.reduce(0) { $0 + $1.count } } }
}

/// On listweb's listening socket (first in its pipeline): every accepted connection is counted for its
/// peer (`PeerConnections`) and gets a `RequestHeadDeadline`; when accepting fails (out of file
/// descriptors: `EMFILE`, `ENFILE`) accepting pauses for `pause` instead of spinning on a socket that stays
/// readable, as listd's listener does.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel

    let connections: PeerConnections
    let limits: ConnectionLimits
    let logger: Logger
    let pause: TimeAmount
    private var resume: Scheduled<Void>?
    private var lastLogged: NIODeadline?

    init(connections: PeerConnections, limits: ConnectionLimits, logger: Logger, pause: TimeAmount = .milliseconds(200)) {
        self.connections = connections
        self.limits = limits
        self.logger = logger
        self.pause = pause
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        let peer = child.remoteAddress?.ipAddress ?? "unix"
        let (activity, victim) = connections.admit(child, peer: peer)
        let connections = self.connections
        child.closeFuture.whenComplete { _ in connections.remove(child, peer: peer) }
        if victim !== child {
            // First in the connection's pipeline, before listweb's HTTP handlers (added when it registers),
            // made on the connection's own event loop (the handler is confined to it).
            let timeout = limits.headerTimeout
            child.eventLoop.execute {
                try? child.pipeline.syncOperations.addHandler(RequestHeadDeadline(activity: activity, timeout: timeout), position: .first)
            }
        }
        context.fireChannelRead(data)
        // Closed after it registers (the accept handler registers it first, on its own event loop).
        if let victim { victim.eventLoop.execute { victim.close(promise: nil) } }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let ioError = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        if resume == nil, let options = context.channel.syncOptions {
            try? options.setOption(.autoRead, value: false)
            let channel = context.channel
            resume = context.eventLoop.assumeIsolated().scheduleTask(in: pause) {
                self.resume = nil
                if channel.isActive { try? channel.syncOptions?.setOption(.autoRead, value: true) }
            }
        }
        let now = NIODeadline.now()
        if let lastLogged, now < lastLogged + .seconds(10) { return }
        lastLogged = now
        var limit = rlimit()
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        logger.error(
            "cannot accept connections (\(ioError)); pausing accept for \(pause.nanoseconds / 1_000_000) ms at a time",
            metadata: ["errno": "\(ioError.errnoCode)", "limitNOFILE": "\(limit.rlim_cur)"])
    }

    func channelInactive(context: ChannelHandlerContext) {
        resume?.cancel()
        resume = nil
        context.fireChannelInactive()
    }
}

/// First in each connection's pipeline: closes it when its first request head is not complete within
/// `timeout` (an empty line ends a head), notes whether it became a WebSocket, and keeps its activity for
/// `PeerConnections`. Later requests on a keep-alive connection are bounded by the idle timeout.
final class RequestHeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    let activity: ConnectionActivity
    let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// The first head's bytes so far (bounded by the HTTP decoder's own limit; kept only until complete).
    private var head: [UInt8] = []
    private var headComplete = false
    /// How far `head` was searched for its end.
    private var scanned = 0
    static let maximumHeadBytes = 96 * 1024

    init(activity: ConnectionActivity, timeout: TimeAmount) {
        self.activity = activity
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        activity.touch()
        if !headComplete {
            let bytes = unwrapInboundIn(data).readableBytesView
            head += bytes.prefix(Self.maximumHeadBytes - head.count)
            let end = Self.headEnd(in: head, from: scanned)
            scanned = head.count
            if let end {
                headComplete = true
                deadline?.cancel()
                deadline = nil
                let text = String(decoding: head[..<end], as: UTF8.self).lowercased()
                activity.set(text.contains("\nupgrade: websocket") ? .webSocket : .http)
                head = []
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        activity.touch()
        context.write(data, promise: promise)
    }

    /// Where the first empty line ("\r\n\r\n") ends, if there is one, searching from `start` on (what
    /// was searched before, but for the three bytes an end may begin with).
    static func headEnd(in bytes: [UInt8], from start: Int = 0) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in max(3, start)..<bytes.count
        where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }
}
