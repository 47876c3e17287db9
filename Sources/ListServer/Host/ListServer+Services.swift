import Logging
import ServiceLifecycle

/// listd's parts as swift-service-lifecycle services. Started in the order of `ListServer.services`, a
/// graceful shutdown of their `ServiceGroup` stops them in the reverse order: the server drains its
/// connections, then the supervisor stops the plugins, then the store writes what was accepted and closes.
extension ListServer: Service {
    /// The services of a running server, in start order.
    public var services: [any Service] { [StorageService(server: self), PluginsService(server: self), self] }

    /// Serves (on the event loop) until the group shuts down gracefully or is cancelled, then stops
    /// accepting and drains the connections: views are told `shutdown`, output is flushed.
    public func run() async throws {
        try? await gracefulShutdown()
        await drainConnections(grace: .seconds(5))
    }
}

/// The store as a service: on shutdown, once the connections drained, what was accepted is written and
/// the store closed (nothing with `--ephemeral`).
struct StorageService: Service, CustomStringConvertible {
    let server: ListServer
    var description: String { "storage" }

    func run() async throws {
        try? await gracefulShutdown()
        await server.closeStorage()
    }
}

/// The plugin supervisor as a service: on shutdown, once the connections drained (their views may have
/// needed the plugins), every supervised plugin is stopped.
struct PluginsService: Service, CustomStringConvertible {
    let server: ListServer
    var description: String { "plugins" }

    func run() async throws {
        try? await gracefulShutdown()
        await server.stopPlugins()
    }
}
