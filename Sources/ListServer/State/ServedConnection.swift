import ListAccess

/// A connection as the server state and the registry of open connections see it: a connection views
/// live on and plugins come on (`ViewConnection`, `PluginConnection`), with the views it holds, what it
/// said it is, what it makes listd hold, and the ways the server closes it. The connection handler is
/// the one kind there is; the state knows nothing else of it.
protocol ServedConnection: ViewConnection, PluginConnection {
    /// Views attached on this connection.
    var views: ConnectionViews { get }
    /// The plugin it said it is in `hello`, if it did.
    var plugin: PluginSession? { get }
    /// What it said it is in `hello` (`client`).
    var clientName: String? { get }
    /// Bytes it holds now in queues (request lines waiting their turn, an unfinished line) and as output
    /// its peer has not taken yet (for the user's account).
    var liveBytes: (queues: Int, output: Int) { get }
    /// Bytes of the unfinished request line it holds (0 once it is closing).
    var heldPartialBytes: Int { get }
    /// Its unsent output when it holds more than `maxOutputBytes` (paused, or a peer that does not read
    /// its events), else nil.
    var heldOutputBytes: Int? { get }

    /// Discards its unfinished line, answers `line-too-long` with `message` and closes (logging `reason`).
    func abandonPartialLine(_ message: String, reason: String)
    /// Closes it for holding output past `maxOutputBytesTotal`.
    func closeHoldingOutput()
    /// Tells the client the server is stopping (views get a `shutdown` event), then closes.
    func shutDown()
}
