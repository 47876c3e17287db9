import Logging

/// The plugins of a running server: the connected ones by the content type they provide, the types held
/// for supervised plugins that are coming up, and the supervisor that runs them. Confined to the
/// server's event loop. Shared by reference: each session removes itself when it closes.
final class PluginRegistry {
    /// Connected plugins by the content type they provide (`emoji` for registrations of `plugin:emoji`).
    var byType: [String: PluginSession] = [:]
    /// Types announced by a supervised plugin, by type: the name of that plugin. While the supervisor
    /// manages it (running or restarting), no other connection may announce the type.
    var reservations: [String: String] = [:]
    /// The plugin processes listd runs itself (set once the socket listens).
    var supervisor: PluginSupervisor?
    /// How long a supervised plugin restarted for being unhealthy gets to stop
    /// (`pluginStopGraceMilliseconds`; kept current by the server state).
    var stopGrace: Duration
    /// Where plugins' connects, disconnects and failures are logged.
    let logger: Logger

    init(logger: Logger, stopGrace: Duration) {
        self.logger = logger
        self.stopGrace = stopGrace
    }

    /// Forgets a plugin whose connection closed: its types are free again, its pending requests fail.
    func disconnected(_ plugin: PluginSession) {
        for type in plugin.types where byType[type] === plugin { byType[type] = nil }
        plugin.failAll()
        logger.info("plugin disconnected", metadata: ["plugin": "\(plugin.name)"])
    }

    /// Holds the types `specs` provide for their supervised plugins (those not connected already).
    func reserve(_ specs: [SupervisedPluginSpec]) {
        for spec in specs {
            for type in spec.provides where byType[type] == nil { reservations[type] = spec.name }
        }
    }
}
