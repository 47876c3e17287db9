import DiffableCore
import FileSafety
import ListAccess
import ListDurability
import ListEngine
import ListStore
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A running listd server: one event loop that owns the socket, every connection and all state.
///
/// ```swift
/// let server = try await ListServer.start(configuration: configuration, logger: logger)
/// // Its parts run as services; SIGTERM (or any graceful shutdown of the group) stops them in turn.
/// try await ServiceGroup(services: server.services + [signalHandling], logger: logger).run()
/// await server.stopEventLoop()
/// ```
public final class ListServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: Channel
    private let state: NIOLoopBound<ServerState>
    private let ownsSocketFile: String?
    /// Starts, restarts and stops the configured plugin executables.
    public let supervisor: PluginSupervisor
    public let logger: Logger

    private init(
        group: MultiThreadedEventLoopGroup, channel: Channel, state: NIOLoopBound<ServerState>, ownsSocketFile: String?,
        supervisor: PluginSupervisor, logger: Logger
    ) {
        self.group = group
        self.channel = channel
        self.state = state
        self.ownsSocketFile = ownsSocketFile
        self.supervisor = supervisor
        self.logger = logger
    }

    /// Binds (or adopts) the socket and starts serving what `storage` holds, writing every change to it
    /// (ephemeral without one). Returns once the socket is listening.
    public static func start(configuration: ServerConfiguration, storage opened: OpenedStorage? = nil, logger: Logger) async throws -> ListServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        // Large requests are decoded and prepared here, beside the loop (see LargeRequests.swift).
        let largeRequests = NIOThreadPool(numberOfThreads: 1)
        largeRequests.start()
        let state = try await loop.submit {
            let state = ServerState(configuration: configuration, logger: logger)
            state.storage.largeRequests = largeRequests
            if let opened {
                try state.engine.load(opened.loaded)
                state.storage.opened = opened
                let bound = NIOLoopBound(state, eventLoop: loop)
                let pipeline = CommitPipeline(engine: state.engine, store: opened.store, loop: loop, logger: logger) { undone in
                    bound.value.react(to: undone)
                }
                pipeline.loaded(opened.loaded)
                if opened.periodicSync { pipeline.startPeriodicSync() }
                state.adopt(pipeline)
                if let shared = opened.store as? SharedStore { state.follow(shared, pipeline: pipeline, loop: loop) }
            }
            if configuration.demo {
                // Through the commit path, as any client's changes (the demo's data is valid by construction);
                // what a previous run kept (and its user may have changed) stays as it is.
                for registration in DemoData.registrations() where state.registrations[registration.name] == nil {
                    _ = try! state.commit(.register(registration), connection: nil)
                }
                for (name, content) in DemoData.dataSources() where state.dataSources[name] == nil {
                    _ = try! state.commit(.createDataSource(name: name, incarnation: Incarnation.make(), content: content), connection: nil)
                }
            }
            return NIOLoopBound(state, eventLoop: loop)
        }.get()
        // Plugins connect to the socket's path: the one bound, or the one systemd bound for us.
        let socketPath: String
        switch configuration.listener {
        case .path(let path): socketPath = path
        case .inheritedDescriptor(let descriptor, let path): socketPath = path ?? boundPath(of: descriptor) ?? ""
        }
        let supervisor = PluginSupervisor(socketPath: socketPath, logger: logger)
        // The supervised plugins' types are theirs before the socket accepts anything.
        let supervised = socketPath.isEmpty ? [] : configuration.plugins
        try await hold(supervised, for: supervisor, in: state, on: loop)
        let router = CommandRouter.shared
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelInitializer { channel in
                // Out of file descriptors, accepting pauses instead of spinning (see `AcceptThrottle`).
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptThrottle(logger: logger))
                }
            }
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                // Who connected decides what it may do: the kernel's record of the peer, read once.
                PeerIdentity.read(from: channel, names: state.value.userNames).flatMapThrowing { identity in
                    let serverState = state.value
                    let limits = serverState.configuration
                    if let refusal = serverState.refusal(of: identity) {
                        serverState.stats.connectionsRefused += 1
                        try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler(reply: refusal))
                        return
                    }
                    // The connection handler stops reading while unsent output is above the high mark
                    // (maxOutputBytes) and resumes below the low one.
                    let high = max(limits.maximumOutputBytes, 2)
                    try channel.syncOptions?.setOption(.writeBufferWaterMark, value: .init(low: high / 2, high: high))
                    try channel.pipeline.syncOperations.addHandlers(
                        ConnectionHandler.handlers(state: serverState, identity: identity, router: router))
                }
            }

        let channel: Channel
        var ownsSocketFile: String? = nil
        do {
            switch configuration.listener {
            case .path(let path):
                let trusted = try trustedSocketPath(path)
                try removeStaleSocket(at: trusted)
                channel = try await bindSocket(bootstrap, at: trusted, mode: configuration.socketMode, group: configuration.socketGroup)
                ownsSocketFile = trusted
            case .inheritedDescriptor(let descriptor, _):
                channel = try await bootstrap.withBoundSocket(descriptor).get()
            }
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        let server = ListServer(group: group, channel: channel, state: state, ownsSocketFile: ownsSocketFile, supervisor: supervisor, logger: logger)
        try await server.startTimers()
        if !configuration.plugins.isEmpty {
            if socketPath.isEmpty { logger.error("the inherited socket has no path: plugins cannot connect, so none is started") }
            else { await supervisor.update(configuration.plugins, grace: .milliseconds(configuration.pluginStopGraceMilliseconds)) }
        }
        return server
    }

    /// Makes `supervisor` the server's and holds what `specs` will provide before any connection can
    /// announce it (at start, before the socket accepts; on reload, before the new configuration takes
    /// effect): each plugin is listed as coming up (hello then refuses other plugins until it has
    /// connected), and the types a spec names (`provides`) are reserved for it.
    private static func hold(
        _ specs: [SupervisedPluginSpec], for supervisor: PluginSupervisor, in state: NIOLoopBound<ServerState>, on loop: EventLoop
    ) async throws {
        supervisor.reserve(specs)
        try await loop.submit {
            let serverState = state.value
            serverState.plugins.supervisor = supervisor
            serverState.plugins.reserve(specs)
        }.get()
    }

    /// `path` with its directory resolved, once no other user can change what it names: the directory
    /// and those above it belong to root or listd's user and only they can write them (or the sticky bit
    /// keeps others from touching listd's entries, as in `/tmp`), and whatever is already at the name is a
    /// socket of root's or listd's user.
    private static func trustedSocketPath(_ path: String) throws -> String {
        let (directory, name) = TrustedPath.split(path)
        let owners: Set<UInt32> = [geteuid()]
        do {
            let resolved = try TrustedPath.checkDirectory(directory, owners: owners, leaf: .stickyAllowed)
            let trusted = (resolved == "/" ? "" : resolved) + "/" + name
            try TrustedPath.checkExisting(trusted, kind: S_IFSOCK, owners: owners)
            return trusted
        } catch {
            throw ListServerError("refusing the socket \(path): \(error)")
        }
    }

    /// Binds the socket at `path` (a trusted path) with its final mode and group, never wider: it is bound
    /// in a private directory listd makes beside it (mode 0700: no other user can reach in to swap the
    /// name while its group and mode are set by name), with the process's umask leaving only `mode`'s
    /// bits, then renamed into place (a rename replaces what is at the name, never following a symbolic
    /// link there; a listening socket keeps working under its new name).
    private static func bindSocket(_ bootstrap: ServerBootstrap, at path: String, mode: UInt32, group: UInt32?) async throws -> Channel {
        let (directory, _) = TrustedPath.split(path)
        // As short as "listd.sock": a path that fits the 107-byte limit of socket addresses fits as
        // the temporary name too.
        var template = Array(((directory == "/" ? "" : directory) + "/.lXXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw ListServerError("cannot make a private directory beside \(path): \(String(cString: strerror(errno)))")
        }
        let privateDirectory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { rmdir(privateDirectory) }
        let temporary = privateDirectory + "/s"
        guard temporary.utf8.count < 108 else {
            throw ListServerError("the socket path \(path) is too long: listd binds it first as \(temporary), which must fit 107 bytes")
        }
        // The umask is process-wide: nothing else creates files while listd starts.
        let previous = umask(mode_t(~mode & 0o777 | 0o077))
        let channel: Channel
        do {
            channel = try await bootstrap.bind(unixDomainSocketPath: temporary).get()
            umask(previous)
        } catch {
            umask(previous)
            throw error
        }
        do {
            if let group, chown(temporary, uid_t.max, group) != 0 {
                throw ListServerError("cannot give the socket group \(group): \(String(cString: strerror(errno)))")
            }
            guard chmod(temporary, mode_t(mode)) == 0 else { throw ListServerError("cannot set the socket's mode: \(String(cString: strerror(errno)))") }
            guard rename(temporary, path) == 0 else { throw ListServerError("cannot move the socket to \(path): \(String(cString: strerror(errno)))") }
        } catch {
            unlink(temporary)
            try? await channel.close()
            throw error
        }
        return channel
    }

    /// The path a Unix socket is bound to (`getsockname`), if it has one.
    private static func boundPath(of descriptor: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: &address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }

    /// Refuses to take over a socket another process is serving; removes a stale one.
    private static func removeStaleSocket(at path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else {
            throw ListServerError("\(path) exists and is not a socket")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw ListServerError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if connected == 0 { throw ListServerError("another server is listening on \(path)") }
        unlink(path)
    }

    /// STATUS= every second when it changed, and WATCHDOG=1 pings from the event loop itself.
    private func startTimers() async throws {
        let state = self.state
        let loop = channel.eventLoop
        let watchdog = Systemd.watchdogInterval()
        try await loop.submit {
            // The STATUS= line last sent to the service manager.
            let lastReported = NIOLoopBoundBox("", eventLoop: loop)
            loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
                let status = state.value.statusLine
                if status != lastReported.value {
                    lastReported.value = status
                    Systemd.status(status)
                }
            }
            if let watchdog {
                let interval = TimeAmount.microseconds(Int64(watchdog / 2))
                loop.scheduleRepeatedTask(initialDelay: .zero, delay: interval) { _ in Systemd.watchdogPing() }
            }
        }.get()
    }

    /// The status line (data sources, items, connections, views).
    public func status() async -> String {
        (try? await channel.eventLoop.submit { self.state.value.statusLine }.get()) ?? ""
    }

    /// Puts new limits in force (the listener and the demo flag stay as they are). Connections opened
    /// from now on use the new line, output and partial-line-timeout limits; every other limit applies
    /// to the next request. Plugins no
    /// longer listed are stopped, new ones started; the others keep running.
    public func reload(_ configuration: ServerConfiguration) async {
        let state = self.state
        // New plugins' types are held before the new configuration is in force.
        try? await Self.hold(configuration.plugins, for: supervisor, in: state, on: channel.eventLoop)
        try? await channel.eventLoop.submit {
            var updated = configuration
            updated.listener = state.value.configuration.listener
            updated.demo = state.value.configuration.demo
            updated.socketMode = state.value.configuration.socketMode
            updated.socketGroup = state.value.configuration.socketGroup
            state.value.configuration = updated
            state.value.engine.retention = (updated.changeLogVersions, updated.changeLogBytes)
            // Renamed users show from now on; what the new rules no longer allow stops now.
            state.value.userNames.clear()
            state.value.enforcePolicyOnOpenConnections()
        }.get()
        await supervisor.update(configuration.plugins, grace: .milliseconds(configuration.pluginStopGraceMilliseconds))
        logger.info("reloaded the configuration")
    }

    /// Stops gracefully, every part in turn (what `services` do under a `ServiceGroup`, for a caller
    /// without one): the connections drain, the plugins stop, the store is written and closed, then the
    /// event loop stops.
    public func shutDown(grace: Duration = .seconds(5)) async {
        await drainConnections(grace: grace)
        await stopPlugins()
        await closeStorage()
        await stopEventLoop()
    }

    /// No new connections or requests; views are told `shutdown`, and every connection is flushed and
    /// closed (for at most `grace`). The socket file goes.
    func drainConnections(grace: Duration) async {
        let state = self.state
        try? await channel.eventLoop.submit {
            let serverState = state.value
            serverState.isShuttingDown = true
            for connection in serverState.connections.values { connection.shutDown() }
        }.get()
        try? await channel.close()
        let deadline = ContinuousClock.now + grace
        while ContinuousClock.now < deadline {
            let open = (try? await channel.eventLoop.submit { state.value.connections.count }.get()) ?? 0
            if open == 0 { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        if let path = ownsSocketFile { unlink(path) }
    }

    /// Stops the supervised plugins (SIGTERM, then SIGKILL after the configured grace). After the
    /// connections drained: their views may still have needed the plugins.
    func stopPlugins() async {
        let state = self.state
        let pluginGrace = (try? await channel.eventLoop.submit { state.value.configuration.pluginStopGraceMilliseconds }.get()) ?? 3_000
        await supervisor.stopAll(grace: .milliseconds(pluginGrace))
    }

    /// Writes what was accepted, stops following the other instances and closes the store; stops the
    /// thread large requests are prepared on.
    func closeStorage() async {
        let state = self.state
        while (try? await channel.eventLoop.submit { state.value.storage.pipeline?.isIdle ?? true }.get()) == false {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if let (store, reader) = try? await channel.eventLoop.submit({ state.value.storage.follower.map { ($0.store, $0.reader) } }).get() {
            store.stopFollowing()
            try? await reader.shutdownGracefully()
        }
        if let (writer, background, store) = try? await channel.eventLoop.submit({ state.value.storage.pipeline.map { ($0.writer, $0.background, $0.store) } }).get() {
            await CommitPipeline.close(writer: writer!, background: background, store: store)
        }
        if let largeRequests = try? await channel.eventLoop.submit({ state.value.storage.largeRequests }).get() {
            try? await largeRequests.shutdownGracefully()
        }
    }

    /// Stops the event loop (the last step: nothing runs on it afterwards).
    public func stopEventLoop() async {
        try? await group.shutdownGracefully()
    }
}


extension ServerState {
    /// The handlers of a connection to this server (an in-process one's: the test kit's), as `identity`.
    package func connectionHandlers(identity: PeerIdentity?) -> [ChannelHandler] {
        ConnectionHandler.handlers(state: self, identity: identity, router: CommandRouter.shared)
    }
}
