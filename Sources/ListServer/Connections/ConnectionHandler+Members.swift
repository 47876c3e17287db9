import ListAccess
import ListEngine
import NIOCore

/// The members of a connection that commands, the server state and the views read and set, under the
/// names they had before the connection became a state machine: each forwards into `client`, `machine`
/// or `output`.
extension ConnectionHandler {
    /// What the client said it is in `hello`.
    var clientName: String? {
        get { client.name }
        set { client.name = newValue }
    }
    /// The client said in `hello` that it relays for others (listweb's pages): charged like any user,
    /// root's included (see `AccountHolder`).
    var isRelay: Bool {
        get { client.isRelay }
        set { client.isRelay = newValue }
    }
    /// Set when this connection said `hello` as a plugin.
    var plugin: PluginSession? {
        get { client.plugin }
        set { client.plugin = newValue }
    }
    /// The command being run (for the audit log of refusals and the request log).
    var currentCommand: String {
        get { client.currentCommand }
        set { client.currentCommand = newValue }
    }
    /// The error code the last request was answered with (nil: it succeeded), for the request log.
    var lastErrorCode: String? {
        get { client.lastErrorCode }
        set { client.lastErrorCode = newValue }
    }
    /// The account this connection's views, queues and output are charged to.
    var accountHolder: AccountHolder { AccountHolder(uid: identity.uid, relay: isRelay) }

    /// The connection is closing: nothing more is read, run or sent.
    var closing: Bool { machine.isClosing }
    /// Unsent output is above `maximumOutputBytes`: no reading, no requests run, until it drains.
    var outputPaused: Bool { machine.isOutputPaused }
    /// No request is waiting or held and no reply is queued or held back.
    var isIdle: Bool { machine.isIdle }
    /// Request lines waiting their turn, in order.
    var queued: [ByteBuffer] { machine.heldRequestLines }
    /// Bytes of the unfinished line the framer holds (counted in `ServerState.partialLineBytes`).
    var heldPartialBytes: Int { machine.heldPartialBytes }
    /// Replies of the current read burst, not yet handed to the channel.
    var pending: ByteBuffer? { output.gathered }

    /// The connection's event loop (while it is open).
    var eventLoop: EventLoop? { context?.eventLoop }
}
