import ListDurability
import ListEngine
import NIOCore
import NIOPosix

/// Names the commands and connections still use for parts of the state that moved into its registries
/// (`connections`, `plugins`, `stats`, `storage`, `publisher`). Transitional: call sites move to the
/// parts themselves.
extension ServerState {
    package var pipeline: CommitPipeline? {
        get { storage.pipeline }
        set { storage.pipeline = newValue }
    }
    var follower: StoreFollower? {
        get { storage.follower }
        set { storage.follower = newValue }
    }
    var largeRequests: NIOThreadPool? { storage.largeRequests }
    var startedAt: ContinuousClock.Instant { stats.startedAt }
    var pluginsByType: [String: PluginSession] {
        get { plugins.byType }
        set { plugins.byType = newValue }
    }
    var pluginTypeReservations: [String: String] {
        get { plugins.reservations }
        set { plugins.reservations = newValue }
    }
    var supervisor: PluginSupervisor? { plugins.supervisor }
    var partialLineBytes: Int {
        get { connections.partialLineBytes }
        set { connections.partialLineBytes = newValue }
    }
    func connectionCount(of uid: UInt32) -> Int { connections.count(of: uid) }
    func countCommand(_ index: Int) { stats.countCommand(index) }
    var commandCounts: [String: Int] { stats.commandCounts(names: CommandRouter.shared.commandOrder) }
    var errorCounts: [String: Int] {
        get { stats.errorCounts }
        set { stats.errorCounts = newValue }
    }
    var connectionsAccepted: Int { stats.connectionsAccepted }
    var viewsOverflowed: Int {
        get { stats.viewsOverflowed }
        set { stats.viewsOverflowed = newValue }
    }
    var eventsSent: Int {
        get { stats.eventsSent }
        set { stats.eventsSent = newValue }
    }
    var permissionDenials: Int {
        get { stats.permissionDenials }
        set { stats.permissionDenials = newValue }
    }
    var quotaRefusals: Int {
        get { stats.quotaRefusals }
        set { stats.quotaRefusals = newValue }
    }
    var registrationsRepeated: Int {
        get { stats.registrationsRepeated }
        set { stats.registrationsRepeated = newValue }
    }
    var connectionsRefused: Int {
        get { stats.connectionsRefused }
        set { stats.connectionsRefused = newValue }
    }
    var connectionsClosedForHeldOutput: Int {
        get { stats.connectionsClosedForHeldOutput }
        set { stats.connectionsClosedForHeldOutput = newValue }
    }
    var lastRefusalLogged: NIODeadline? {
        get { stats.lastRefusalLogged }
        set { stats.lastRefusalLogged = newValue }
    }
    var refusalsNotLogged: Int {
        get { stats.refusalsNotLogged }
        set { stats.refusalsNotLogged = newValue }
    }
    func flushAtEndOfTurn(_ connection: ConnectionHandler, on loop: EventLoop) { publisher.flushAtEndOfTurn(connection, on: loop) }
    func send(_ broadcast: Broadcast) { publisher.send(broadcast) }
    func tellViews(registration key: String, change: ViewEvent.RegistrationChange) {
        publisher.tellViews(registration: key, change: change, in: dataSources)
    }
}
