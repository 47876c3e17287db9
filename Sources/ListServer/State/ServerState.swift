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

/// All the state of a running server. Confined to its one event loop: every command runs there, in
/// the order its bytes arrived, so each data source's versions are a total order without locks.
package final class ServerState {
    /// The limits in force; `reload` replaces them (the listener stays).
    var configuration: ServerConfiguration
    package let logger: Logger
    let startedAt = ContinuousClock.now
    /// The one writer of the state that lasts (data sources, registrations) and of the served data
    /// sources; the server changes them only through `commit` and the engine's other writes.
    package let engine: StateEngine
    /// The state that lasts, for reading.
    package var model: StateModel { engine.model }
    /// The thread large requests are decoded and prepared on (see LargeRequests.swift); none in process.
    var largeRequests: NIOThreadPool?
    /// Writes committed changes to the store (none with `--ephemeral`).
    package var pipeline: CommitPipeline? {
        didSet {
            // The store keeps no more of a data source's change log than memory retains.
            pipeline?.oldestRetainedVersion = { [unowned self] name in engine.dataSources[name]?.retained.oldestVersion }
        }
    }
    /// The opened state directory and store (none with `--ephemeral`).
    var storage: OpenedStorage?
    /// Follows the other instances sharing the store (PostgreSQL only).
    var follower: StoreFollower?
    /// The data sources as served (their models and attached views), by name.
    package var dataSources: ServedDataSources { ServedDataSources(engine.dataSources) }
    /// Cell registrations, by name.
    var registrations: [String: Registration] { model.registrations }
    /// Registration names in creation order.
    var registrationOrder: [String] { model.registrationOrder }
    /// Connected plugins by the content type they provide (`emoji` for registrations of `plugin:emoji`).
    var pluginsByType: [String: PluginSession] = [:]
    /// Types announced by a supervised plugin, by type: the name of that plugin. While the supervisor
    /// manages it (running or restarting), no other connection may announce the type.
    var pluginTypeReservations: [String: String] = [:]
    /// The plugin processes listd runs itself (set once the socket listens).
    var supervisor: PluginSupervisor?
    var connections: [Int: ConnectionHandler] = [:]
    /// Open connections per uid (for `maxConnectionsPerUser`, and to read a user's live account parts).
    var connectionsOfUser: [UInt32: [Int: ConnectionHandler]] = [:]
    /// Open connections per uid.
    func connectionCount(of uid: UInt32) -> Int { connectionsOfUser[uid]?.count ?? 0 }
    /// listd's own identity: the owner of what it makes itself, and of in-process connections.
    let serviceIdentity = PeerIdentity.current
    /// User names of the uids that connected or own something.
    let userNames = UserNameCache()
    /// Bytes of unfinished request lines held across all connections (see `shedPartialLines`).
    var partialLineBytes = 0
    /// Connections closed because the output held for peers that do not read passed `maxOutputBytesTotal`.
    var connectionsClosedForHeldOutput = 0
    private var nextConnectionID = 1
    var isShuttingDown = false
    /// The STATUS= line last sent to the service manager.
    var lastReportedStatus = ""

    // Counters for `stats`.
    private var commandCounters: [Int] = []
    var errorCounts: [String: Int] = [:]
    var connectionsAccepted = 0
    var viewsOverflowed = 0
    var eventsSent = 0
    /// Requests refused with `permission-denied`, and by a per-user quota (connections included).
    var permissionDenials = 0
    var quotaRefusals = 0
    /// Identical registers one connection repeated past `RegistrationRepeats.allowed` (the seeds' pitfall).
    var registrationsRepeated = 0
    /// Connections closed at accept: over `maxConnections`, or a user's `maxConnectionsPerUser`.
    var connectionsRefused = 0
    /// When a refused connection was last logged, and how many were not since (see `logRefusal`).
    var lastRefusalLogged: NIODeadline?
    var refusalsNotLogged = 0

    /// The handlers of a connection to this server (an in-process one's: the test kit's), as `identity`.
    package func connectionHandlers(identity: PeerIdentity?) -> [ChannelHandler] {
        ConnectionHandler.handlers(state: self, identity: identity)
    }

    package init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        engine = StateEngine(retention: (configuration.changeLogVersions, configuration.changeLogBytes)) { model, retained in
            DataSource(model: model, retained: retained)
        }
        engine.model.accounts.liveBytes = { [unowned self] holder in liveAccountBytes(of: holder) }
    }

    func countCommand(_ index: Int) {
        if index >= commandCounters.count { commandCounters += Array(repeating: 0, count: index + 1 - commandCounters.count) }
        commandCounters[index] += 1
    }

    /// Requests per command name, for `stats`.
    var commandCounts: [String: Int] {
        let names = CommandRouter.shared.commandOrder
        var counts: [String: Int] = [:]
        for (index, count) in commandCounters.enumerated() where count > 0 && index < names.count { counts[names[index]] = count }
        return counts
    }

    func register(_ connection: ConnectionHandler) -> Int {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = connection
        connectionsOfUser[connection.identity.uid, default: [:]][id] = connection
        connectionsAccepted += 1
        return id
    }

    func unregister(_ connection: ConnectionHandler) {
        if connections.removeValue(forKey: connection.id) != nil {
            let uid = connection.identity.uid
            connectionsOfUser[uid]?[connection.id] = nil
            if connectionsOfUser[uid]?.isEmpty == true { connectionsOfUser[uid] = nil }
        }
        if let plugin = connection.plugin {
            for type in plugin.types where pluginsByType[type] === plugin { pluginsByType[type] = nil }
            plugin.failAll()
            logger.info("plugin disconnected", metadata: ["plugin": "\(plugin.name)"])
        }
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
        let loaded = storage.map { "; \($0.summary)" } ?? ""
        return "Serving \(dataSources.count) data source\(dataSources.count == 1 ? "" : "s"), \(items) item\(items == 1 ? "" : "s"), "
            + "\(connections.count) connection\(connections.count == 1 ? "" : "s"), \(viewCount) view\(viewCount == 1 ? "" : "s")" + loaded
    }

    /// Connections whose output is flushed at the end of this turn of the loop (`flushAtEndOfTurn`).
    private var connectionsToFlush: [ConnectionHandler] = []

    /// Flushes `connection` at the end of this turn of the event loop, with every other connection that
    /// asked in this turn: one task however many connections a change's events went to.
    func flushAtEndOfTurn(_ connection: ConnectionHandler, on loop: EventLoop) {
        if let flushLoop, flushLoop !== loop {
            // A connection on another loop (listd has one; tests may not): a task of its own.
            let bound = NIOLoopBound(connection, eventLoop: loop)
            loop.execute { bound.value.flushScheduledOutput() }
            return
        }
        connectionsToFlush.append(connection)
        guard connectionsToFlush.count == 1 else { return }
        flushLoop = loop
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.execute {
            let state = bound.value
            // Flushing may make another connection ask again (a closed view's last words): those go next turn.
            let connections = state.connectionsToFlush
            state.connectionsToFlush = []
            state.flushLoop = nil
            for connection in connections { connection.flushScheduledOutput() }
        }
    }

    /// The loop the pending flush task runs on.
    private var flushLoop: EventLoop?

    /// Writes an event line to every view of the broadcast's data source (a view with an expansion of
    /// its own gets its own line, when it has one).
    func send(_ broadcast: Broadcast) {
        if broadcast.ownEvents.isEmpty {
            broadcast.dataSource.forEachAttachedView { $0.connection.sendEvent(broadcast.event) }
        } else {
            broadcast.dataSource.forEachAttachedView { attachment in
                attachment.connection.sendEvent(broadcast.ownEvents[ObjectIdentifier(attachment)] ?? broadcast.event)
            }
        }
    }
}

/// An event line for every view of a data source (one buffer, shared), published once the change that
/// made it is durable.
struct Broadcast {
    let dataSource: DataSource
    /// The line, with its newline.
    var event: ByteBuffer
    /// The lines of views that show an expansion of their own (`ViewExpansion`), whose changes differ.
    var ownEvents: [ObjectIdentifier: ByteBuffer] = [:]
}

/// Cell counters of one registration (summed over views), with what is displayed and pooled now.
struct CellTotals {
    var counters = ViewCells.Counters()
    var displayed = 0
    var pooled = 0
}

/// The engine's served data sources as the server's (`DataSource`, which carry the views): a read-only
/// view of `StateEngine.dataSources`.
package struct ServedDataSources {
    private let all: [String: ServedDataSource]

    init(_ all: [String: ServedDataSource]) { self.all = all }

    /// The data source named `name`, if served.
    package subscript(name: String) -> DataSource? {
        all[name].map { unsafeDowncast($0, to: DataSource.self) }
    }

    package var values: LazyMapSequence<Dictionary<String, ServedDataSource>.Values, DataSource> {
        all.values.lazy.map { unsafeDowncast($0, to: DataSource.self) }
    }

    package var keys: Dictionary<String, ServedDataSource>.Keys { all.keys }
    package var count: Int { all.count }
    package var isEmpty: Bool { all.isEmpty }
}
