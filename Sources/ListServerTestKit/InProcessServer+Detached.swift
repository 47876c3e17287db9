import ListAccess
import ListServer

/// A connection of an `InProcessServer` without a channel: request lines go straight to the command
/// router and the engine and the reply comes back, with no SwiftNIO pipeline, framing or event loop
/// between (a fuzzer pays for the command path and nothing else). The events of views attached on it
/// and lines to a plugin are not written; commands that would wait on the event loop answer at once.
/// Not in the server's registry of open connections. See `InProcessConnection` for the whole pipeline.
public final class DetachedInProcessConnection {
    private let connection: DetachedConnection

    init(_ connection: DetachedConnection) { self.connection = connection }

    /// Runs one request line (without its newline or a trailing `\r`, which the framer drops) and
    /// returns its reply (without newline); nil for a blank line, or when the request finishes later
    /// (`takeLateReplies`).
    public func run(_ line: UnsafeRawBufferPointer) -> [UInt8]? { connection.run(line: line) }

    /// `run(_:)` of an array's bytes.
    public func run(_ line: [UInt8]) -> [UInt8]? { line.withUnsafeBytes { connection.run(line: $0) } }

    /// Requests run whose reply has not come yet.
    public var pendingReplies: Int { connection.pendingReplies }

    /// The replies of requests that finished later, in the order they finished; emptied.
    public func takeLateReplies() -> [[UInt8]] { connection.takeLateReplies() }
}

extension InProcessServer {
    /// A new connection without a channel (see `DetachedInProcessConnection`), as `identity` (default:
    /// the process's own, an administrator).
    public func connectDetached(as identity: PeerIdentity? = nil) -> DetachedInProcessConnection {
        DetachedInProcessConnection(DetachedConnection(state: state, identity: identity))
    }
}
