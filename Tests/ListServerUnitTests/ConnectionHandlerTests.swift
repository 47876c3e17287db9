import DiffableCore
import ListWire
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import ListServer

/// One client connection as `ListServer` assembles it (the line framer, then the connection handler)
/// in an EmbeddedChannel, connected so it is active. Connections made with the same `ServerState` are
/// clients of the same server. Everything runs synchronously on the test's thread; what the handler
/// writes and flushes reaches the channel's outbound buffer, one buffer per write.
struct Connection {
    let channel = EmbeddedChannel()
    let state: ServerState

    /// The state of an ephemeral server (`configuration.storage` is `.ephemeral`: nothing is written).
    static func makeState(maximumLineBytes: Int = 1024) -> ServerState {
        var configuration = ServerConfiguration(listener: .path("/unused"))
        configuration.maximumLineBytes = maximumLineBytes
        return ServerState(configuration: configuration, logger: Logger(label: "test"))
    }

    init(state: ServerState = Connection.makeState()) throws {
        self.state = state
        try channel.pipeline.syncOperations.addHandlers(ConnectionHandler.handlers(state: state, router: CommandRouter.shared))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/unused")).wait()
    }

    /// One read burst: `channelRead` with `text`, then `channelReadComplete`.
    func send(_ text: String) throws {
        try channel.writeInbound(channel.allocator.buffer(string: text))
    }

    /// The peer closed its sending side (what the server sees, with remote half-closure allowed).
    func closeInput() throws {
        channel.pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        try channel.throwIfErrorCaught()
    }

    /// The buffers written and flushed since the last call, one per write (after the tasks due on the
    /// connection's loop have run, as a real loop runs them at the end of its turn: events are flushed then).
    func writes() throws -> [String] {
        channel.embeddedEventLoop.run()
        var writes: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { writes.append(String(buffer: buffer)) }
        return writes
    }

    /// The lines of `writes`, parsed; every line must end with its newline.
    func lines(_ writes: [String]) throws -> [JSONValue] {
        let text = writes.joined()
        #expect(text.isEmpty || text.hasSuffix("\n"), "an unterminated line: \(text.debugDescription)")
        return try text.split(separator: "\n").map { try JSONParser.parse(String($0)) }
    }

    /// The reply (and event) lines written since the last call, parsed.
    func replies() throws -> [JSONValue] { try lines(writes()) }

    /// Sends `line` and its newline as one read burst; it must be answered by exactly one line in one write.
    func request(_ line: String) throws -> JSONValue {
        try send(line + "\n")
        let writes = try writes()
        #expect(writes.count == 1, "\(line) was answered in \(writes.count) writes")
        let replies = try lines(writes)
        #expect(replies.count == 1, "\(line) got \(replies.count) reply lines")
        return try #require(replies.first)
    }

    /// Closes the channel (if it is not yet) and turns the loop; true when nothing was left unread.
    func finish() throws -> Bool { try channel.finish(acceptAlreadyClosed: true).isClean }
}

/// `ConnectionHandler` behind the line framer: one reply line per request, in request order and one
/// write per read burst; errors that keep the connection usable and the one that closes it; mutations
/// that apply completely or not at all; what happens when the client's input closes.
@Suite("Connection handler: requests in, replies out, in order")
struct ConnectionHandlerTests {
    static let pong: JSONValue = ["ok": true, "result": [:]]

    @Test func aRequestGetsExactlyOneReplyLine() throws {
        let connection = try Connection()
        #expect(connection.state.connections.count == 1)
        try connection.send(#"{"id":7,"cmd":"ping"}"# + "\n")
        #expect(try connection.writes() == [#"{"id":7,"ok":true,"result":{}}"# + "\n"])
        // Any scalar id is echoed; without one, the reply has none.
        #expect(try connection.request(#"{"id":"seven","cmd":"ping"}"#) == ["id": "seven", "ok": true, "result": [:]])
        #expect(try connection.request(#"{"id":true,"cmd":"nope"}"#).value(atPath: "id") == true)
        #expect(try connection.request(#"{"cmd":"ping"}"#) == Self.pong)
        #expect(try connection.finish())
    }

    @Test func pipelinedRequestsAreAnsweredInOrderInOneWriteAtReadComplete() throws {
        let connection = try Connection()
        let channel = connection.channel
        let requests = [
            #"{"id":1,"cmd":"appendSections","dataSource":"d","sections":["S"]}"#,
            #"{"id":2,"cmd":"appendSections","dataSource":"d","sections":["T"]}"#,
            #"{"id":3,"cmd":"ping"}"#,
        ]
        channel.pipeline.syncOperations.fireChannelRead(NIOAny(channel.allocator.buffer(string: requests.joined(separator: "\n") + "\n")))
        // All three ran, but nothing is written before the read burst ends: a flush finds nothing.
        #expect(connection.state.dataSources["d"]?.version == 2)
        channel.flush()
        #expect(try connection.writes() == [])
        channel.pipeline.syncOperations.fireChannelReadComplete()
        let writes = try connection.writes()
        #expect(writes.count == 1, "one write for the burst")
        let replies = try connection.lines(writes)
        #expect(replies.map { $0["id"] } == [1, 2, 3])
        #expect(replies.map { $0.value(atPath: "result.version") } == [1, 2, nil])
        // The next burst is written on its own.
        #expect(try connection.request(#"{"id":4,"cmd":"ping"}"#)["id"] == 4)
        #expect(try connection.finish())
    }

    @Test func malformedJSONGetsAnErrorAndTheConnectionStaysUsable() throws {
        let connection = try Connection()
        let error = try connection.request("not json")
        #expect(error["ok"] == false && error.value(atPath: "error.code") == "invalid-json" && error["id"] == nil)
        // A truncated request: its id cannot be read either.
        let truncated = try connection.request(#"{"id":1,"cmd":"ping""#)
        #expect(truncated.value(atPath: "error.code") == "invalid-json" && truncated["id"] == nil)
        // Malformed and valid in one burst: both answered, in order.
        try connection.send("{]\n" + #"{"id":2,"cmd":"ping"}"# + "\n")
        let replies = try connection.replies()
        #expect(replies.map { $0.value(atPath: "error.code") } == ["invalid-json", nil])
        #expect(replies.last == ["id": 2, "ok": true, "result": [:]])
        #expect(connection.channel.isActive)
        #expect(connection.state.stats.errorCounts["invalid-json"] == 3)
        #expect(try connection.finish())
    }

    @Test func blankLinesGetNoReply() throws {
        let connection = try Connection()
        try connection.send("\n \n\t\r\n")
        #expect(try connection.writes() == [])
        try connection.send("\n" + #"{"cmd":"ping"}"# + "\n  \n")
        #expect(try connection.replies() == [Self.pong])
        #expect(try connection.finish())
    }

    @Test func mutationsChangeTheState() throws {
        let connection = try Connection()
        let created = try connection.request(#"{"cmd":"appendSections","dataSource":"d","sections":["S"]}"#)
        #expect(created["ok"] == true && created.value(atPath: "result.version") == 1)
        let appended = try connection.request(#"{"cmd":"appendItems","dataSource":"d","items":["a","b","c"]}"#)
        #expect(appended.value(atPath: "result.version") == 2)
        let snapshot = try connection.request(#"{"cmd":"snapshot","dataSource":"d"}"#)
        #expect(snapshot.value(atPath: "result.version") == 2)
        #expect(snapshot.value(atPath: "result.sections") == [["id": "S", "items": ["a", "b", "c"]]])
        #expect(connection.state.dataSources["d"]?.snapshot.itemIdentifiers == ["a", "b", "c"])
        #expect(try connection.finish())
    }

    @Test func aFailingMutationChangesNothing() throws {
        let connection = try Connection()
        try connection.send(
            #"{"cmd":"appendSections","dataSource":"d","sections":["S"]}"# + "\n"
                + #"{"cmd":"appendItems","dataSource":"d","items":["a","b","c"]}"# + "\n")
        #expect(try connection.replies().map { $0["ok"] } == [true, true])
        // Deleting from a data source that does not exist does not create it.
        let missing = try connection.request(#"{"id":1,"cmd":"deleteItems","dataSource":"nope","items":["a"]}"#)
        #expect(missing["id"] == 1 && missing.value(atPath: "error.code") == "data-source-not-found")
        #expect(connection.state.dataSources["nope"] == nil)
        // A batch whose second operation fails: the first is undone, no version is spent.
        let batch = try connection.request(
            #"{"id":2,"cmd":"batch","dataSource":"d","operations":[{"cmd":"deleteItems","items":["a"]},{"cmd":"moveItem","item":"zz","afterItem":"b"}]}"#)
        #expect(batch["id"] == 2 && batch.value(atPath: "error.code") == "item-not-found")
        let snapshot = try connection.request(#"{"cmd":"snapshot","dataSource":"d"}"#)
        #expect(snapshot.value(atPath: "result.version") == 2)
        #expect(snapshot.value(atPath: "result.sections.0.items") == ["a", "b", "c"])
        #expect(try connection.request(#"{"cmd":"listDataSources"}"#).value(atPath: "result.dataSources")?.arrayValue.count == 1)
        #expect(try connection.finish())
    }

    @Test func anOverlongLineGetsLineTooLongAndTheConnectionCloses() throws {
        let connection = try Connection(state: Connection.makeState(maximumLineBytes: 32))
        // A request, a line over the limit, and a request after it, in one burst.
        try connection.send(#"{"id":1,"cmd":"ping"}"# + "\n" + String(repeating: "x", count: 40) + "\n" + #"{"id":2,"cmd":"ping"}"# + "\n")
        let replies = try connection.replies()
        #expect(replies.count == 2, "the request after the long line is not answered")
        #expect(replies.first == ["id": 1, "ok": true, "result": [:]])
        #expect(replies.last?["ok"] == false && replies.last?["id"] == nil)
        #expect(replies.last?.value(atPath: "error.code") == "line-too-long")
        #expect(replies.last?.value(atPath: "error.message")?.stringValue?.contains("32 bytes") == true)
        #expect(connection.state.stats.errorCounts["line-too-long"] == 1)
        #expect(!connection.channel.isActive)
        // Once the loop turns, the handler has left the pipeline and the server's connections.
        connection.channel.embeddedEventLoop.run()
        #expect(connection.state.connections.isEmpty)
        #expect(try connection.finish())
    }

    @Test func aOneShotClientIsAnsweredThenClosedWhenItsInputCloses() throws {
        let connection = try Connection()
        // The last request has no newline: it waits for the end of input.
        try connection.send(#"{"id":1,"cmd":"ping"}"# + "\n" + #"{"id":2,"cmd":"ping"}"#)
        #expect(try connection.replies() == [["id": 1, "ok": true, "result": [:]]])
        #expect(connection.channel.isActive)
        try connection.closeInput()
        #expect(try connection.replies() == [["id": 2, "ok": true, "result": [:]]])
        #expect(!connection.channel.isActive)
        #expect(try connection.finish())
    }

    @Test func aViewStaysOpenAfterItsInputClosesAndGetsEvents() throws {
        let state = Connection.makeState()
        let writer = try Connection(state: state)
        #expect(try writer.request(#"{"cmd":"appendSections","dataSource":"d","sections":["S"]}"#)["ok"] == true)
        let view = try Connection(state: state)
        let attached = try view.request(#"{"id":1,"cmd":"attach","dataSource":"d","view":"v"}"#)
        #expect(attached["id"] == 1 && attached.value(atPath: "result.version") == 1)
        try view.closeInput()
        #expect(view.channel.isActive)
        #expect(try writer.request(#"{"cmd":"appendItems","dataSource":"d","items":["a"]}"#).value(atPath: "result.version") == 2)
        let events = try view.replies()
        #expect(events.map { $0["event"] } == ["changes"])
        #expect(events.first?["version"] == 2 && events.first?["dataSource"] == "d")
        #expect(try writer.finish())
        #expect(try view.finish())
    }
}

/// What each command does to the state that lasts is declared with it (`Command.Effect`): the router
/// parks the mutating ones while a group is made durable and serves only the store-independent ones
/// whatever the store's condition.
@Suite("Command effects")
struct CommandEffectTests {
    @Test func everyCommandThatCommitsIsDeclaredMutating() {
        let router = CommandRouter.shared
        func effect(_ name: String) -> Command.Effect? { router.commands[name]?.effect }
        for edit in editCommands { #expect(effect(edit.name) == .mutates, "\(edit.name)") }
        for name in [
            "apply", "batch", "createDataSource", "dropDataSource", "applySectionSnapshot", "expand", "collapse", "setLayout",
            "setCellProvider", "setSupplementaryProvider", "register", "unregister",
        ] {
            #expect(effect(name) == .mutates, "\(name)")
        }
        for name in ["ping", "hello", "describe", "stats"] { #expect(effect(name) == .independentOfStore, "\(name)") }
        for name in ["attach", "snapshot", "dequeue", "backup", "registrations", "listDataSources"] { #expect(effect(name) == .reads, "\(name)") }
    }
}
