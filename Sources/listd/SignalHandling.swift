import ListServer
import Logging
import ServiceLifecycle
import UnixSignals

/// listd's signals as a service of its `ServiceGroup`: SIGHUP reloads the configuration (the service
/// keeps running); SIGTERM or SIGINT ends it, and since it ends with `gracefullyShutdownGroup`, the group
/// then stops the server's services in turn (see `ListServer.services`).
///
/// The signals are trapped when listd starts, before the store opens or the socket binds, so that a
/// SIGTERM that arrives meanwhile is a graceful stop too: it waits in `signals` until this service runs.
struct SignalHandling: Service, CustomStringConvertible {
    let signals: UnixSignalsSequence
    let logger: Logger
    /// Reloads the configuration (SIGHUP).
    let reload: @Sendable () async -> Void
    /// Called once a stop is asked for, before the services stop (the service manager is told; the
    /// `--stop-timeout` deadline starts).
    let stopping: @Sendable (UnixSignal) -> Void

    var description: String { "signals" }

    func run() async throws {
        for await signal in signals.cancelOnGracefulShutdown() {
            if signal == .sighup {
                await reload()
                continue
            }
            logger.info("stopping (\(signal))")
            stopping(signal)
            return
        }
    }

    /// How the group treats this service's end: a stop asked for by signal stops every service gracefully.
    var configuration: ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: self, successTerminationBehavior: .gracefullyShutdownGroup)
    }
}
