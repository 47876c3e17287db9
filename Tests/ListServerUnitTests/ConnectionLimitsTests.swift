import DiffableCore
import ListWire
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import ListServer

/// Counts the reads that reach the socket end of the pipeline, and can hold back flushes (a peer that
/// does not read: written bytes stay in the channel, counted by `bufferedWritableBytes`).
private final class SocketEnd: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    var reads = 0
    var holdsFlushes = false

    func read(context: ChannelHandlerContext) {
        reads += 1
        context.read()
    }

    func flush(context: ChannelHandlerContext) {
        if !holdsFlushes { context.flush() }
    }
}

/// A connection as the server assembles it, with a `SocketEnd` at the socket's side, on a server with
/// the given limits.
private struct LimitedConnection {
    let channel = EmbeddedChannel()
    let socket = SocketEnd()

    static func state(_ change: (inout ServerConfiguration) -> Void) -> ServerState {
        var configuration = ServerConfiguration(listener: .path("/unused"))
        change(&configuration)
        return ServerState(configuration: configuration, logger: Logger(label: "test"))
    }

    init(state: ServerState) throws {
        try channel.pipeline.syncOperations.addHandlers([socket] + ConnectionHandler.handlers(state: state, router: CommandRouter.shared))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/unused")).wait()
    }

    func send(_ text: String) throws { try channel.writeInbound(channel.allocator.buffer(string: text)) }

    /// The lines written (and flushed) since the last call, parsed.
    func replies() throws -> [JSONValue] {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return try text.split(separator: "\n").map { try JSONParser.parse(String($0)) }
    }

    /// The peer became able to take output again (below the low water mark).
    func drained() {
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
    }

    func advance(seconds: Int64) { channel.embeddedEventLoop.advanceTime(by: .seconds(seconds)) }
}

/// The limits on what one connection can make listd hold: unsent output (soft: stop reading and running
/// requests; hard: close), an unfinished line's age, and unfinished lines across connections.
@Suite("Connection limits: output back-pressure, unfinished lines")
struct ConnectionLimitsTests {
    @Test func unsentOutputAboveTheLimitStopsReadingAndRunningRequestsUntilItDrains() throws {
        let connection = try LimitedConnection(state: LimitedConnection.state { $0.maximumOutputBytes = 1_000 })
        connection.channel.isWritable = false  // the write buffer is above its high water mark
        try connection.send(#"{"id":1,"cmd":"ping"}"# + "\n" + #"{"id":2,"cmd":"ping"}"# + "\n" + #"{"id":3,"cmd":"ping"}"# + "\n")
        #expect(try connection.replies().map { $0["id"] } == [1], "the requests after the first wait")
        connection.channel.read()
        #expect(connection.socket.reads == 0, "no reading while the output is above the limit")
        connection.drained()
        #expect(try connection.replies().map { $0["id"] } == [2, 3], "run in order once the output drained")
        #expect(connection.socket.reads == 1, "the held read is issued")
        #expect(try connection.channel.finish(acceptAlreadyClosed: true).isClean)
    }

    @Test func anOverlongLineWhileRequestsWaitIsAnsweredAfterThem() throws {
        let connection = try LimitedConnection(state: LimitedConnection.state { $0.maximumLineBytes = 64 })
        connection.channel.isWritable = false
        try connection.send(#"{"id":1,"cmd":"ping"}"# + "\n" + #"{"id":2,"cmd":"ping"}"# + "\n" + String(repeating: "x", count: 100))
        #expect(try connection.replies().map { $0["id"] } == [1])
        connection.drained()
        let replies = try connection.replies()
        #expect(replies.map { $0["id"] } == [2, nil])
        #expect(replies.last?["error"]?["code"] == "line-too-long")
        #expect(!connection.channel.isActive)
    }

    @Test func unsentOutputReachingTheHardLimitClosesTheConnection() throws {
        let connection = try LimitedConnection(state: LimitedConnection.state {
            $0.maximumOutputBytes = 60
            $0.maximumOutputBytesHard = 100
        })
        connection.socket.holdsFlushes = true  // the peer reads nothing: every reply stays unsent
        for _ in 0..<4 { try connection.send(#"{"cmd":"ping"}"# + "\n") }  // 4 × 24 bytes unsent
        #expect(connection.channel.isActive)
        try connection.send(#"{"cmd":"ping"}"# + "\n")  // would bring it to 120
        #expect(!connection.channel.isActive, "closed at maxOutputBytesHard")

        // One reply bigger than the hard limit, with nothing else unsent, is still sent.
        let reader = try LimitedConnection(state: LimitedConnection.state { $0.maximumOutputBytesHard = 100 })
        try reader.send(#"{"cmd":"describe"}"# + "\n")
        #expect(try reader.replies().first?["ok"] == true)
        #expect(reader.channel.isActive)
    }

    @Test func aLineNotFinishedWithinTheTimeoutClosesTheConnection() throws {
        let connection = try LimitedConnection(state: LimitedConnection.state { $0.partialLineTimeoutSeconds = 5 })
        try connection.send(#"{"cmd":"pi"#)
        connection.advance(seconds: 4)
        #expect(try connection.replies().isEmpty && connection.channel.isActive)
        // Finishing it and starting another restarts the clock.
        try connection.send(#"ng"}"# + "\n" + #"{"cmd""#)
        #expect(try connection.replies().first?["ok"] == true)
        connection.advance(seconds: 4)
        #expect(try connection.replies().isEmpty && connection.channel.isActive)
        connection.advance(seconds: 2)
        let replies = try connection.replies()
        #expect(replies.first?["error"]?["code"] == "line-too-long")
        #expect(replies.first?["error"]?["message"]?.stringValue?.contains("not finished within 5 seconds") == true)
        #expect(!connection.channel.isActive)
    }

    @Test func theClockStopsWhileTheConnectionIsNotRead() throws {
        let connection = try LimitedConnection(state: LimitedConnection.state { $0.partialLineTimeoutSeconds = 5 })
        connection.channel.isWritable = false
        try connection.send(#"{"id":1,"cmd":"ping"}"# + "\n" + #"{"cmd""#)
        #expect(try connection.replies().count == 1)
        connection.advance(seconds: 10)  // listd does not read it: the peer cannot finish its line
        #expect(connection.channel.isActive)
        connection.drained()
        connection.advance(seconds: 4)
        #expect(connection.channel.isActive)
        connection.advance(seconds: 2)
        #expect(try connection.replies().first?["error"]?["code"] == "line-too-long")
        #expect(!connection.channel.isActive)
    }

    @Test func pastTheGlobalCapTheLargestUnfinishedLineIsClosed() throws {
        let state = LimitedConnection.state { $0.maximumPartialLineBytesTotal = 100 }
        let small = try LimitedConnection(state: state)
        let large = try LimitedConnection(state: state)
        let last = try LimitedConnection(state: state)
        try small.send(String(repeating: " ", count: 30))
        try large.send(String(repeating: " ", count: 60))
        #expect(state.connections.partialLineBytes == 90)
        try last.send(String(repeating: " ", count: 20))
        let replies = try large.replies()
        #expect(replies.first?["error"]?["code"] == "line-too-long")
        #expect(replies.first?["error"]?["message"]?.stringValue?.contains("maxPartialLineBytesTotal") == true)
        #expect(!large.channel.isActive)
        #expect(small.channel.isActive && last.channel.isActive)
        #expect(state.connections.partialLineBytes == 50)
        try small.send(#"{"cmd":"ping"}"# + "\n")
        #expect(try small.replies().first?["ok"] == true)
        #expect(state.connections.partialLineBytes == 20)
        _ = try last.channel.finish(acceptAlreadyClosed: true)
        #expect(state.connections.partialLineBytes == 0, "a closed connection's unfinished line is no longer counted")
    }
}
