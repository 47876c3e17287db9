import ArgumentParser
import Dispatch
import FileSafety
import ListClient
import ListServer
import ListStoreSQLite
import ListWire
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `listd`: the daemon. Parses its options, starts the server and handles signals; nothing else.
@main
struct Listd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listd",
        abstract: "Diffable data sources, cell registrations and reuse pools, served over a Unix socket.",
        discussion: """
            Listens on a Unix socket for line-delimited JSON requests (see protocol/PROTOCOL.md). \
            Runs in the foreground; under systemd it reports readiness with sd_notify and accepts \
            socket activation. SIGTERM or SIGINT stops it gracefully; SIGHUP reloads --config.
            """,
        version: ListdVersion.number)

    @Option(help: "The socket path (default: $LISTD_SOCKET, else /run/listd.sock as root, else $XDG_RUNTIME_DIR/listd.sock, else /tmp/listd-$USER/listd.sock).")
    var socket: String?

    @Option(help: "The longest request line accepted, in bytes.")
    var maxLineBytes: Int?

    @Option(help: "Unsent event bytes a view may accumulate before it is disconnected.")
    var maxViewQueueBytes: Int?

    @Option(help: "A JSON configuration file (limits and log level); re-read on SIGHUP.")
    var config: String?

    @Option(help: ArgumentHelp(
        "Where the state lasts (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/listd, else ~/.local/state/listd).", valueName: "dir"))
    var stateDirectory: String?

    @Flag(help: "Keep the state in memory only: no files, nothing survives the process.")
    var ephemeral = false

    @Option(help: ArgumentHelp(
        "Keep the state in a PostgreSQL database instead of the state directory: libpq's URI, e.g. postgresql://listd@db.example/listd or postgresql://listd@/listd?host=/run/postgresql.",
        valueName: "uri"))
    var postgres: String?

    @Option(help: ArgumentHelp(
        "With --postgres: the longest listd waits for the database at a time (connecting, a statement, its result). A write the database does not confirm in time fails with storage-failed (within twice this when the commit itself was cut off). Default 10.",
        valueName: "seconds"))
    var postgresTimeout: Double = 10

    @Option(help: ArgumentHelp(
        "The longest a graceful stop (SIGTERM, SIGINT) may take before listd exits without waiting for the rest: views told, connections flushed, the store closed. What was acknowledged is stored already. Default 10 (the unit gives systemd's stop 15).",
        valueName: "seconds"))
    var stopTimeout: Double = 10

    @Option(help: ArgumentHelp(
        "always: reply to a change once it is fsync'd; periodic: once written, fsync about every second (a power cut may lose the last second).",
        valueName: "mode"))
    var sync: String = "always"

    @Flag(help: "Preload the demo data sources (home, emoji, outline) built from the seeds' data, with registrations for the example plugins.")
    var demo = false

    @Option(name: .customLong("plugin"), help: ArgumentHelp("A plugin executable to run and keep running (repeatable).", valueName: "path"))
    var plugins: [String] = []

    @Option(help: "Run every executable in this directory as a plugin (re-read on SIGHUP).")
    var pluginDirectory: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    @Option(help: ArgumentHelp(
        "The socket's mode, in octal, when listd creates it (default 0600: only listd's user; 0660 lets --socket-group in).", valueName: "mode"))
    var socketMode: String?

    @Option(help: ArgumentHelp("The socket's group (a name or gid) when listd creates it.", valueName: "group"))
    var socketGroup: String?

    /// Refuses a log level or plugin directory given on the command line that cannot work.
    func validate() throws {
        if let socketMode, Self.mode(socketMode) == nil {
            throw ValidationError("--socket-mode is an octal mode such as 0660, not \"\(socketMode)\".")
        }
        if let socketGroup, Self.group(socketGroup) == nil {
            throw ValidationError("--socket-group: there is no group \"\(socketGroup)\".")
        }
        if let logLevel {
            do { try FileSettings.validateLogLevel(logLevel, setting: "--log-level") } catch { throw ValidationError("\(error)") }
        }
        if let pluginDirectory {
            do { try FileSettings.validateDirectory(pluginDirectory, setting: "--plugin-directory") } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    func run() async throws {
        let useJournal = Systemd.stderrIsJournal
        let settings: FileSettings
        var configuration: ServerConfiguration
        do {
            // Settings are checked before anything starts: a mistake stops listd, naming the file and key.
            settings = try FileSettings.load(config)
            configuration = try makeConfiguration(listener: .path(""), settings: settings)
        } catch {
            Self.printError("cannot start: \(error)")
            Systemd.notify("STATUS=Cannot start: \(error)\nERRNO=\(EINVAL)")
            throw ExitCode(EX_CONFIG)
        }
        ListdLogHandler.setSharedLevel(Logger.Level(rawValue: logLevel ?? settings.logLevel ?? "info") ?? .info)
        LoggingSystem.bootstrap { label in ListdLogHandler(label: label, useJournal: useJournal) }
        let logger = Logger(label: "listd")

        // Trap the signals before anything else, so that an early SIGTERM is a graceful stop too.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint, .sighup)

        let listener: ServerConfiguration.Listener
        if let descriptor = Systemd.activatedListener() {
            listener = .inheritedDescriptor(descriptor, path: nil)
        } else {
            listener = .path(try socket ?? Self.defaultSocketPath())
        }
        configuration.listener = listener
        let storageChoice = try storage(settings: settings)

        let server: ListServer
        do {
            let opened = try StateStorage.open(storageChoice, retainVersions: configuration.changeLogVersions, logger: logger)
            server = try await ListServer.start(configuration: configuration, storage: opened, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            Systemd.notify("STATUS=Cannot start: \(error)\nERRNO=\(errno == 0 ? EINVAL : errno)")
            throw ExitCode(EX_UNAVAILABLE)
        }
        switch configuration.listener {
        case .path(let path): logger.info("listening on \(path)", metadata: ["socket": "\(path)", "demo": "\(demo)"])
        case .inheritedDescriptor(let descriptor, _): logger.info("listening on the socket passed by systemd (fd \(descriptor))")
        }
        Systemd.ready(status: await server.status())

        let configFile = config
        let options = self
        let logLevel = self.logLevel
        let stopTimeout = self.stopTimeout
        let listenerInForce = configuration.listener
        let signalHandling = SignalHandling(
            signals: signals, logger: logger,
            reload: {
                Systemd.reloading()
                do {
                    let settings = try FileSettings.load(configFile)
                    await server.reload(try options.makeConfiguration(listener: listenerInForce, settings: settings))
                    // --log-level wins over the file, as at start.
                    let level = Logger.Level(rawValue: logLevel ?? settings.logLevel ?? "info") ?? .info
                    let previous = ListdLogHandler.setSharedLevel(level)
                    if previous != level { logger.notice("log level \(previous) → \(level)") }
                } catch {
                    logger.error("reload failed, keeping the running configuration: \(error)", metadata: ["config": "\(configFile ?? "-")"])
                }
                Systemd.ready(status: await server.status())
            },
            stopping: { _ in
                Systemd.stopping(status: "Stopping: draining connections")
                Self.exitUnlessStopped(within: stopTimeout, logger: logger)
            })
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: server.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) } + [signalHandling.configuration],
                logger: logger))
        try await group.run()
        await server.stopEventLoop()
        logger.info("stopped")
    }

    /// Ends the process with status 75 (`EX_TEMPFAIL`) if the graceful stop has not ended within
    /// `seconds` (a store that does not answer, a connection that does not drain): nothing acknowledged
    /// depends on the rest of it; what was in flight was not acknowledged.
    static func exitUnlessStopped(within seconds: Double, logger: Logger) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            logger.error("not stopped within \(seconds) s: exiting without waiting any longer (what was acknowledged is stored)")
            Systemd.notify("STATUS=Stopped without waiting for the rest")
            fflush(nil)
            _exit(EX_TEMPFAIL)  // no exit handlers: the event loops are still running
        }
    }

    /// `--ephemeral`, PostgreSQL (`--postgres`, else the file's `postgres`), or the state directory, with
    /// the sync mode.
    func storage(settings: FileSettings) throws -> StorageChoice {
        guard stopTimeout > 0, stopTimeout <= 3_600 else { throw ValidationError("--stop-timeout is between 0 and 3600 seconds, not \(stopTimeout).") }
        guard let mode = SQLiteStore.SyncMode(rawValue: sync) else { throw ValidationError("--sync is always or periodic, not \"\(sync)\".") }
        if ephemeral {
            if stateDirectory != nil { throw ValidationError("--ephemeral and --state-directory exclude each other.") }
            if postgres != nil { throw ValidationError("--ephemeral and --postgres exclude each other.") }
            return .ephemeral
        }
        if let uri = postgres ?? (stateDirectory == nil ? settings.postgres : nil) {
            if stateDirectory != nil { throw ValidationError("--postgres and --state-directory exclude each other.") }
            guard postgresTimeout >= 0.1, postgresTimeout <= 3_600 else { throw ValidationError("--postgres-timeout is between 0.1 and 3600 seconds, not \(postgresTimeout).") }
            return .postgres(uri, sync: mode, timeout: .milliseconds(Int64((postgresTimeout * 1_000).rounded())))
        }
        guard let directory = stateDirectory ?? StateDirectory.defaultPath(environment: SocketPath.environment) else {
            throw ValidationError("No state directory: pass --state-directory (or --ephemeral), or set STATE_DIRECTORY, XDG_STATE_HOME or HOME.")
        }
        return .directory(PluginDirectory.absolute(directory), sync: mode)
    }

    /// The configuration: defaults, then the file's settings, then the command line's options. Throws when
    /// a plugin directory is no longer a directory, or the output limits contradict each other.
    func makeConfiguration(listener: ServerConfiguration.Listener, settings: FileSettings) throws -> ServerConfiguration {
        var configuration = ServerConfiguration(listener: listener)
        settings.apply(to: &configuration)
        if let maxLineBytes { configuration.maximumLineBytes = maxLineBytes }
        if let maxViewQueueBytes { configuration.maximumViewQueueBytes = maxViewQueueBytes }
        configuration.demo = demo
        if let socketMode, let mode = Self.mode(socketMode) { configuration.socketMode = mode }
        if let socketGroup { configuration.socketGroup = Self.group(socketGroup) }
        let configFile = config ?? "the configuration"
        for (directory, setting) in [(settings.pluginDirectory, "\(configFile): \"pluginDirectory\""), (pluginDirectory, "--plugin-directory")] {
            guard let directory else { continue }
            try FileSettings.validateDirectory(directory, setting: setting)
            configuration.plugins += PluginDirectory.executables(in: directory)
        }
        if configuration.maximumOutputBytes > configuration.maximumOutputBytesHard {
            throw SettingsError(
                "\(configFile): maxOutputBytes (\(configuration.maximumOutputBytes)) is above maxOutputBytesHard (\(configuration.maximumOutputBytesHard))")
        }
        configuration.plugins += plugins.map { SupervisedPluginSpec(executable: PluginDirectory.absolute($0)) }
        return configuration
    }

    /// An octal permission mode (at most 0777).
    static func mode(_ text: String) -> UInt32? {
        guard let mode = UInt32(text, radix: 8), mode <= 0o777 else { return nil }
        return mode
    }

    /// A group by name or gid.
    static func group(_ text: String) -> UInt32? {
        if let gid = UInt32(text) { return gid }
        return UserDirectory.group(named: text)
    }

    /// Writes `message` to stderr before logging is set up.
    static func printError(_ message: String) {
        let line = Array("listd: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Where to create the socket when `--socket` is not given (the resolution every program shares).
    static func defaultSocketPath() throws -> String {
        let path = SocketPath.forServer()
        SocketPath.prepareDirectory(of: path)
        return path
    }
}

/// Finds plugin executables.
enum PluginDirectory {
    /// The regular, executable, non-hidden files of `directory`, by name; none when it does not exist.
    static func executables(in directory: String) -> [SupervisedPluginSpec] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            guard !name.hasPrefix(".") else { continue }
            var status = stat()
            let path = directory + "/" + name
            guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, access(path, X_OK) == 0 else { continue }
            names.append(name)
        }
        return names.sorted().map { SupervisedPluginSpec(executable: absolute(directory + "/" + $0)) }
    }

    /// `path` made absolute against the working directory.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }
}
