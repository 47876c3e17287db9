import ListAccess

/// What a plugin's session needs of the connection the plugin came on: who it is, a way to write it a
/// line, and a way to close it. The connection handler is one; the plugins know nothing else of it.
protocol PluginConnection: AnyObject {
    /// Who connected (the supervisor's restart is by pid).
    var identity: PeerIdentity { get }
    /// Writes a line (a configure request) and flushes it at once.
    func sendLine(_ bytes: [UInt8])
    /// Closes the connection at once, logging why.
    func disconnect(reason: String)
}
