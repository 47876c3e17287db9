import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Sits on the listening socket's pipeline and pauses accepting after `accept` fails.
///
/// Out of file descriptors (`EMFILE`, `ENFILE`), a pending connection stays in the backlog, so the socket
/// stays readable and every `accept` fails at once. NIO keeps the socket registered for reading after a
/// failed accept (its read stays pending), so holding back `read` calls is not enough: without this the
/// event loop spins at 100% CPU. After a failure the listening channel's `autoRead` is switched off (NIO
/// then stops polling the socket) and back on after `pause`; accepting resumes by itself once descriptors
/// are free. The failure is logged at most once per `logInterval`, with the descriptor limit, and the
/// first connection accepted afterwards is logged too.
final class AcceptThrottle: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// How long accepting pauses after a failure.
    let pause: TimeAmount
    /// The least time between two log lines about failures.
    let logInterval: TimeAmount
    private let logger: Logger
    /// Re-enables accepting (set while accepting is paused).
    private var scheduledResume: Scheduled<Void>?
    private var lastLogged: NIODeadline?
    /// Failures since the last log line, and whether accepting failed since the last success.
    private var failuresSinceLog = 0
    private var failing = false

    init(logger: Logger, pause: TimeAmount = .milliseconds(200), logInterval: TimeAmount = .seconds(10)) {
        self.logger = logger
        self.pause = pause
        self.logInterval = logInterval
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if failing {
            failing = false
            logger.notice("accepting connections again", metadata: ["failedAccepts": "\(failuresSinceLog)"])
            failuresSinceLog = 0
            lastLogged = nil
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let ioError = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        let now = context.eventLoop.now
        pauseAccepting(context: context)
        failing = true
        failuresSinceLog += 1
        if let lastLogged, now < lastLogged + logInterval { return }
        lastLogged = now
        let code = ioError.errnoCode
        var metadata: Logger.Metadata = ["errno": "\(code)", "failedAccepts": "\(failuresSinceLog)"]
        failuresSinceLog = 0
        let pauseMilliseconds = pause.nanoseconds / 1_000_000
        if code == EMFILE || code == ENFILE {
            let limit = Self.descriptorLimit()
            metadata["limitNOFILE"] = "\(limit)"
            let which = code == EMFILE ? "this process's limit (RLIMIT_NOFILE) is \(limit)" : "the system's file table is full"
            let name = code == EMFILE ? "EMFILE" : "ENFILE"
            logger.error(
                "cannot accept connections: out of file descriptors (\(name): \(which)); pausing accept for \(pauseMilliseconds) ms at a time until descriptors are free",
                metadata: metadata)
        } else {
            logger.error(
                "cannot accept connections (\(ioError)); pausing accept for \(pauseMilliseconds) ms at a time", metadata: metadata)
        }
    }

    /// Stops polling the listening socket for `pause`, then resumes.
    private func pauseAccepting(context: ChannelHandlerContext) {
        guard scheduledResume == nil, let options = context.channel.syncOptions else { return }
        try? options.setOption(.autoRead, value: false)
        let channel = context.channel
        scheduledResume = context.eventLoop.assumeIsolated().scheduleTask(in: pause) {
            self.scheduledResume = nil
            if channel.isActive { try? channel.syncOptions?.setOption(.autoRead, value: true) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        scheduledResume?.cancel()
        scheduledResume = nil
        context.fireChannelInactive()
    }

    /// The soft limit on open file descriptors.
    static func descriptorLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return UInt64(limit.rlim_cur)
    }
}
