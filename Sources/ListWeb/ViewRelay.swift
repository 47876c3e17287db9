import HummingbirdWebSocket
import ListWire
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// One page's WebSocket, relayed to a connection of its own to listd: the page's requests pass the
/// `RelayPolicy` (refusals are answered here), listd's replies and events go back as they come, the
/// lines of one read in one message (separated by newlines). When either side goes, so does the other
/// (listd then detaches the page's views). listweb tells listd it is a relay (`hello` with `relay: true`):
/// listd charges what pages cost to listweb's user, like any user's, and listweb bounds its pages itself
/// (`maximumPages`).
enum ViewRelay {
    /// The id of listweb's own `hello` on each connection (its reply is not the page's).
    static let helloID = "listweb-hello"
    /// The largest message (and frame) a page may send (listd refuses longer lines anyway); pages split
    /// their requests to stay below it.
    static let maximumMessageBytes = 1 << 20

    static func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, policy: RelayPolicy, link: ListdLink, metrics: MetricsExporter,
        maximumPages: Int, logger: Logger
    ) async throws {
        let counters = metrics.counters
        guard counters.open(limit: maximumPages) else {
            try await outbound.close(.unknown(1013), reason: "listweb serves \(maximumPages) pages at most: close one")
            return
        }
        defer { counters.closed() }
        let timings = RequestTimings()
        // Both directions see it: the page's requests are decided, listd's replies confirm its attaches.
        let policy = SharedPolicy(policy)
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await link.connect(lines: false)
        } catch {
            logger.warning("cannot reach listd for a page", metadata: ["error": "\(error)"])
            try await outbound.close(.unexpectedServerError, reason: "listd cannot be reached")
            return
        }
        try await channel.executeThenClose { fromListd, toListd in
            var hello = ByteBuffer(string: #"{"id":"\#(helloID)","cmd":"hello","client":"listweb","relay":true}"#)
            hello.writeInteger(UInt8(ascii: "\n"))
            try await toListd.write(hello)
            let helloPrefix = Array(#"{"id":"\#(helloID)""#.utf8)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // What listd sent in one read goes to the page as one message: its whole lines, joined
                    // by newlines (a line's end waits for the next read).
                    var partial = ByteBuffer()
                    var splitter = LineSplitter(maximumBytes: ListdLink.maximumLineBytes)
                    for try await chunk in fromListd {
                        partial.writeImmutableBuffer(chunk)
                        var message = ByteBuffer()
                        var lines = 0
                        while let line = try splitter.nextLine(in: &partial) {
                            if line.readableBytesView.starts(with: helloPrefix) { continue }
                            policy.state.withLock { $0.listdReplied(line.readableBytesView) }
                            if let (command, duration) = timings.answered(line) { metrics.recordLatency(command: command, duration: duration) }
                            if lines > 0 { message.writeInteger(UInt8(ascii: "\n")) }
                            message.writeImmutableBuffer(line)
                            lines += 1
                        }
                        partial.discardReadBytes()
                        guard lines > 0 else { continue }
                        counters.relayed(lines: lines, bytes: message.readableBytes)
                        try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: message)))
                    }
                    // listd went away (stopped, restarted): the page reconnects and resumes.
                    try? await outbound.close(.goingAway, reason: "listd closed the connection")
                }
                group.addTask {
                    for try await message in inbound.messages(maxSize: maximumMessageBytes) {
                        guard case .text(let text) = message else { continue }
                        switch policy.state.withLock({ $0.decide(Array(text.utf8)) }) {
                        case .forward(let bytes, let command, let id):
                            // Only short ids are timed (a page's id may be anything up to its message's size).
                            if let id, id.count <= 64, !id.contains(UInt8(ascii: ",")) { timings.sent(id: id, command: command) }
                            var line = ByteBuffer(bytes: bytes)
                            line.writeInteger(UInt8(ascii: "\n"))
                            try await toListd.write(line)
                        case .refuse(let reply):
                            counters.refused()
                            try await outbound.write(.text(String(decoding: reply, as: UTF8.self)))
                        }
                    }
                }
                // Either side ending ends the relay.
                try await group.next()
                group.cancelAll()
            }
        }
    }
}

/// A page's policy, shared by the relay's two directions.
final class SharedPolicy: Sendable {
    let state: Mutex<RelayPolicy>
    init(_ policy: RelayPolicy) { state = Mutex(policy) }
}

/// When each request of a page went to listd, by its id, until its reply comes (for the latency
/// histogram). Bounded: a page that never reads its replies cannot make it grow.
final class RequestTimings: Sendable {
    private let pending = Mutex([[UInt8]: (command: String, sent: ContinuousClock.Instant)]())
    static let limit = 4_096

    func sent(id: [UInt8], command: String) {
        pending.withLock { pending in
            if pending.count >= Self.limit { pending.removeAll() }
            pending[id] = (command, .now)
        }
    }

    /// The command and how long it took, when `line` is the reply to a timed request.
    func answered(_ line: ByteBuffer) -> (String, Duration)? {
        let prefix = Array(#"{"id":"#.utf8)
        let view = line.readableBytesView
        guard view.starts(with: prefix) else { return nil }
        // The id as listd echoes it: the bytes up to the comma before "ok" (an id is a number or a string).
        let start = view.startIndex + prefix.count
        guard let end = view[start...].firstIndex(of: UInt8(ascii: ",")) else { return nil }
        let id = Array(view[start..<end])
        guard let entry = pending.withLock({ $0.removeValue(forKey: id) }) else { return nil }
        return (entry.command, .now - entry.sent)
    }
}
