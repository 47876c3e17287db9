import ListAccess
import ListEngine
import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// Everything that can be set about a server: where it listens and its limits.
public struct ServerConfiguration: Sendable, Equatable {
    /// Where to listen: a path to bind, or a listening socket inherited through socket activation.
    public enum Listener: Sendable, Equatable {
        case path(String)
        /// An already bound and listening socket (systemd socket activation). Never unlinked.
        case inheritedDescriptor(Int32, path: String?)
    }

    public var listener: Listener
    /// The longest request line accepted, in bytes (without the newline).
    public var maximumLineBytes: Int = 16 << 20
    /// How many bytes of pushed events may wait unsent for a connection with attached views before the
    /// view is told `overflow` and disconnected.
    public var maximumViewQueueBytes: Int = 32 << 20
    /// How many times a second each view may signal what it displays (`prefetch` requests, refused past
    /// it with `limit-exceeded`; dequeues while the data source is watched, whose items are then only
    /// counted in the `display` event's `more`). A second's worth may come at once. 0: unlimited.
    public var maximumDisplaySignalsPerViewPerSecond: Int = 120
    public var maximumDataSources: Int = 10_000
    public var maximumItemsPerDataSource: Int = 10_000_000
    public var maximumBatchOperations: Int = 100_000
    public var maximumIdentifierBytes: Int = 4_096
    public var maximumConnections: Int = 4_096
    /// The most registrations listd holds (a client creating one per dequeue hits this, as UIKit's
    /// "registrations must be created up front" exception would).
    public var maximumRegistrations: Int = 1_000
    /// The most free cells kept per (view, registration) pool; beyond it, cells leaving the screen are released.
    public var maximumPooledCells: Int = 256
    /// Views one connection may have attached at once.
    public var maximumViewsPerConnection: Int = 1_024
    /// Views of one user (root exempt) that show an expansion of their own at once: each holds its own
    /// copy of its data source's snapshot (`ViewExpansion`).
    public var maximumOwnExpansionViewsPerUser: Int = 64
    /// How long a plugin may take to configure a batch of cells before they fail with `plugin-timeout`.
    public var pluginDeadlineMilliseconds: Int = 250
    /// Plugin executables listd starts, restarts when they exit and stops on shutdown.
    public var plugins: [SupervisedPluginSpec] = []
    /// How long a supervised plugin has to exit after SIGTERM before it gets SIGKILL.
    public var pluginStopGraceMilliseconds: Int = 3_000
    /// Unsent reply and event bytes of one connection above which listd stops reading (and executing)
    /// that connection's requests until the peer has read enough (Redis's soft output limit).
    public var maximumOutputBytes: Int = 4 << 20
    /// Unsent bytes of one connection at which it is closed: a peer that never reads (Redis's hard limit).
    public var maximumOutputBytesHard: Int = 128 << 20
    /// Unsent bytes held across all connections whose output is paused (peers that do not read what they
    /// asked for); past it the largest holders are closed, so that many connections together cannot
    /// exhaust memory the way one is stopped from by `maximumOutputBytesHard`.
    public var maximumOutputBytesTotal: Int = 1 << 30
    /// A request line not finished within this many seconds closes its connection.
    public var partialLineTimeoutSeconds: Int = 30
    /// Bytes of unfinished lines held across all connections; past it the largest holders are closed
    /// with `line-too-long`.
    public var maximumPartialLineBytesTotal: Int = 256 << 20
    /// Configure requests that may wait unanswered per plugin connection; past it the plugin is
    /// disconnected as unhealthy.
    public var maximumPluginPendingRequests: Int = 1_024
    /// Who may do what (owners, access rules, trusted plugin users). Its service user is the uid listd
    /// runs as.
    public var access = AccessPolicy(serviceUser: geteuid())
    /// Connections one user may hold at once (root is exempt); past it a new connection gets one
    /// `limit-exceeded` line and is closed.
    public var maximumConnectionsPerUser: Int = 256
    /// What one user may own (root is exempt): data sources, the items in them, registrations.
    public var quota = OwnerQuota(maximumDataSources: 1_000, maximumItems: 10_000_000, maximumRegistrations: 100, maximumBytes: 256 << 20)
    /// The mode the socket is created with when listd binds it (systemd's socket unit sets its own).
    public var socketMode: UInt32 = 0o600
    /// The group the socket is given when listd binds it (`nil`: listd's own group).
    public var socketGroup: UInt32?
    /// Preload the demo data sources built from the seeds' data (those that are absent).
    public var demo: Bool = false

    /// Per data source, how many versions of changes the log keeps for resuming views.
    public var changeLogVersions: Int = 10_000
    /// Per data source, how many bytes of changes the log keeps for resuming views.
    public var changeLogBytes: Int = 64 << 20

    public init(listener: Listener) {
        self.listener = listener
    }

    /// The socket path, when there is one.
    public var socketPath: String? {
        switch listener {
        case .path(let path): return path
        case .inheritedDescriptor(_, let path): return path
        }
    }
}
