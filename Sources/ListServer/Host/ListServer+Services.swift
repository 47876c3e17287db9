import Logging
import ServiceLifecycle

/// listd's parts as swift-service-lifecycle services. Started in the order of `ListServer.services`, a
/// graceful shutdown of their `ServiceGroup` stops them in the reverse order: the server drains its
/// connections, then the supervisor stops the plugins, then the store writes what was accepted and closes.
extension ListServer: Service {
    /// The services of a running server, in start order.
    public var services: [any Service] {
        [StoppingPart(description: "storage") { await self.closeStorage() }, StoppingPart(description: "plugins") { await self.stopPlugins() }, self]
    }

    /// Serves (on the event loop) until the group shuts down gracefully or is cancelled, then stops
    /// accepting and drains the connections: views are told `shutdown`, output is flushed.
    public func run() async throws {
        try? await gracefulShutdown()
        await drainConnections(grace: .seconds(5))
    }
}

/// A part of the server whose service is to stop it in its turn: it waits for the group's graceful
/// shutdown (or its cancellation), then runs `stop`. The plugins (`stopPlugins`: their views may have
/// needed them until the connections drained) and the store (`closeStorage`: what was accepted is
/// written, then the store closes; nothing with `--ephemeral`).
struct StoppingPart: Service, CustomStringConvertible {
    let description: String
    let stop: @Sendable () async -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }
}
