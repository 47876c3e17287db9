import CellCore
import DiffableCore
import ListAccess
import ListDurability
import ListEngine
import ListStore
import ListWire
import Logging
import NIOCore
import NIOPosix

/// All the state of a running server, by concern: the configuration, the engine (the one writer of the
/// model), the store, the connections, the plugins, the counters and the publisher of what views get.
/// Confined to its one event loop: every command runs there, in the order its bytes arrived, so each
/// data source's versions are a total order without locks.
package final class ServerState {
    /// The limits in force; `reload` replaces them (the listener stays).
    var configuration: ServerConfiguration {
        didSet { plugins.stopGrace = .milliseconds(configuration.pluginStopGraceMilliseconds) }
    }
    package let logger: Logger
    /// The one writer of the state that lasts (data sources, registrations) and of the served data
    /// sources; the server changes them only through `commit` and the engine's other writes.
    package let engine: StateEngine<DataSourceViews>
    /// The store, its pipeline and follower (empty with `--ephemeral`).
    package var storage = ServerStorage()
    /// The open connections.
    var connections = ConnectionRegistry()
    /// Connected and supervised plugins.
    let plugins: PluginRegistry
    /// The counters `stats` reports.
    var stats = ServerStats()
    /// Sends what views get and flushes it at the end of the loop's turn.
    let publisher = ViewPublisher()
    /// User names of the uids that connected or own something.
    let userNames = UserNameCache()
    var isShuttingDown = false

    /// The state that lasts, for reading.
    package var model: StateModel { engine.model }
    /// The data sources as served (their models and attached views), by name.
    package var dataSources: [String: DataSource] { engine.dataSources }
    /// Cell registrations, by key.
    var registrations: [String: Registration] { model.registrations }
    /// What configuring cells needs now: the registrations, the plugins and the limits on asking them.
    var cellSources: CellSources {
        CellSources(
            registrations: registrations, plugins: plugins, pluginDeadlineMilliseconds: configuration.pluginDeadlineMilliseconds,
            maximumPluginPendingRequests: configuration.maximumPluginPendingRequests, maximumOutputBytesHard: configuration.maximumOutputBytesHard)
    }
    /// Registration keys in creation order.
    var registrationOrder: [String] { model.registrationOrder }
    /// listd's own identity: the owner of what it makes itself, and of in-process connections.
    var serviceIdentity: PeerIdentity { PeerIdentity.current }

    package init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        plugins = PluginRegistry(logger: logger, stopGrace: .milliseconds(configuration.pluginStopGraceMilliseconds))
        engine = StateEngine(retention: (configuration.changeLogVersions, configuration.changeLogBytes)) { _ in DataSourceViews() }
        engine.model.accounts.liveBytes = { [unowned self] holder in liveAccountBytes(of: holder) }
    }

    func register(_ connection: any ServedConnection) -> Int {
        stats.connectionsAccepted += 1
        return connections.add(connection)
    }

    func unregister(_ connection: any ServedConnection) {
        connections.remove(connection)
        if let plugin = connection.plugin { plugins.disconnected(plugin) }
        for attachment in connection.views { dataSources[attachment.dataSource]?.detach(view: attachment.name) }
    }

    /// One registration's cell counters summed over every view.
    func cellTotals(registration: String) -> CellTotals {
        var totals = CellTotals()
        for dataSource in dataSources.values {
            for view in dataSource.attachedViews {
                let counters = view.cells.counters(of: registration)
                totals.counters.created += counters.created
                totals.counters.reused += counters.reused
                totals.counters.released += counters.released
                totals.counters.contentConfigurationsReplaced += counters.contentConfigurationsReplaced
                totals.displayed += view.cells.displayedCount(registration)
                totals.pooled += view.cells.pooledCount(registration)
            }
        }
        return totals
    }

    var totalItems: Int { dataSources.values.reduce(0) { $0 + $1.snapshot.numberOfItems } }

    var viewCount: Int { dataSources.values.reduce(0) { $0 + $1.views.count } }

    /// The one-line status for `sd_notify` STATUS=.
    var statusLine: String {
        let items = totalItems
        let loaded = storage.opened.map { "; \($0.summary)" } ?? ""
        return "Serving \(dataSources.count) data source\(dataSources.count == 1 ? "" : "s"), \(items) item\(items == 1 ? "" : "s"), "
            + "\(connections.count) connection\(connections.count == 1 ? "" : "s"), \(viewCount) view\(viewCount == 1 ? "" : "s")" + loaded
    }
}

extension ServerState {
    /// Tells every view that uses registration `key` that it was created, replaced or deleted.
    func tellViews(registration key: String, change: ViewEvent.RegistrationChange) {
        publisher.tellViews(registration: key, change: change, in: dataSources)
    }
}

/// Cell counters of one registration (summed over views), with what is displayed and pooled now.
struct CellTotals {
    var counters = ViewCells.Counters()
    var displayed = 0
    var pooled = 0
}
