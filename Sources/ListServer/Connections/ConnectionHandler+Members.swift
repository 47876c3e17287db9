import ListAccess
import ListEngine
import NIOCore

/// What a connection's users work out from it: whom it charges, where it runs.
extension ConnectionHandler {
    /// The account this connection's views, queues and output are charged to.
    var accountHolder: AccountHolder { AccountHolder(uid: identity.uid, relay: client.isRelay) }

    /// The connection's event loop (while it is open).
    var eventLoop: EventLoop? { context?.eventLoop }
}
