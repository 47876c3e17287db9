import ListAccess
import ListEngine
import NIOCore

/// What views, their publisher and the display signals need of the connection a view lives on: who it
/// is, whom it charges, its event loop, and the one way events reach it (`sendEvent`), with the flow
/// control a watcher of display signals needs. The connection handler is one; nothing below the
/// connections knows more of it.
protocol ViewConnection: AnyObject {
    /// The connection's number (in logs and `stats`).
    var id: Int { get }
    /// Who connected: what the access policy decides on.
    var identity: PeerIdentity { get }
    /// The account this connection's views, queues and output are charged to.
    var accountHolder: AccountHolder { get }
    /// The connection's event loop (while it is open).
    var eventLoop: EventLoop? { get }
    /// Whether it is closing (nothing more is sent).
    var isClosing: Bool { get }
    /// Whether its channel takes more output now (its unsent output is below `maxOutputBytes`).
    var isWritable: Bool { get }

    /// Writes an event line (with its newline; a broadcast shares one buffer among its views), flushed
    /// at the end of the loop's turn; past the view queue limit, the views get `overflow` instead.
    func sendEvent(_ event: ByteBuffer)
    /// `sendEvent` for an event line built for this connection alone (without its newline).
    func sendEvent(_ bytes: [UInt8])
    /// Flushes what `sendEvent` wrote (the publisher's end-of-turn flush).
    func flushScheduledOutput()
    /// Forgets a view its data source no longer serves and tells the client (`dropped`, with `reason`).
    func viewDropped(_ view: ViewSession, reason: String?)
    /// Whether the connection may hold at least `bytes` of unsent output (a display watcher's limit).
    func mayHoldOutput(atLeast bytes: Int) -> Bool
    /// Has `signals` deliver what it holds for this connection once its output drains.
    func resumeWhenWritable(_ signals: DisplaySignals)
}

extension ViewConnection {
    /// Forgets a view its data source no longer serves and tells the client (`dropped`).
    func viewDropped(_ view: ViewSession) { viewDropped(view, reason: nil) }
}
