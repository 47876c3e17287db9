// The SwiftNIO floor: a server built the way listd's connections are (SwiftNIO on a Unix socket, one
// event loop, a ByteToMessageDecoder that frames lines, one reply line per request, the replies of a
// read burst flushed once) that does no work per request. Driven by the same client at the same loads
// as listd and Redis (`server-benchmarks redis`), it tells how much of listd's gap to Redis is the I/O
// stack's and how much is listd's own command path.

import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Frames `\n`-terminated lines (without the limits and reports of listd's `LineFramer`).
private struct PlainLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return .needMoreData }
        let line = buffer.readSlice(length: newline - buffer.readerIndex + 1)!
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }
}

/// Answers every line with a fixed reply the size of listd's reply to a single-item append, gathered
/// per read burst and flushed once, as `ConnectionHandler` does.
private final class FixedReplyHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private static let reply = Array(#"{"ok":true,"result":{"dataSource":"r50x1-0","version":1234,"changes":{"stages":[{"itemInserts":[[0,1233]]}]}}}"#.utf8) + [0x0A]
    private var pending: ByteBuffer?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if pending == nil { pending = context.channel.allocator.buffer(capacity: Self.reply.count) }
        pending!.writeBytes(Self.reply)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if let buffer = pending {
            pending = nil
            context.write(wrapOutboundOut(buffer), promise: nil)
        }
        context.flush()
    }
}

/// Serves the floor on `socket` until killed (`server-benchmarks nio-floor-server PATH`).
func runNIOFloorServer(socket: String) -> Never {
    unlink(socket)
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel = try! ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(PlainLineDecoder()))
                try channel.pipeline.syncOperations.addHandler(FixedReplyHandler())
            }
        }
        .bind(unixDomainSocketPath: socket).wait()
    try! channel.closeFuture.wait()
    exit(0)
}

/// Starts the floor server as a child process (so that its CPU is counted apart from the client's).
func startNIOFloor(socket: String) -> pid_t {
    unlink(socket)
    var pid: pid_t = 0
    let arguments = ["/proc/self/exe", "nio-floor-server", socket]
    var cArguments = arguments.map { strdup($0) } + [nil]
    precondition(posix_spawn(&pid, arguments[0], nil, nil, &cArguments, environ) == 0, "cannot start the SwiftNIO floor server")
    for _ in 0..<500 where access(socket, F_OK) != 0 { usleep(10_000) }
    usleep(20_000)
    return pid
}
