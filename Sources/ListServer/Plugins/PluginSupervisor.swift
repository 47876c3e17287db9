import CSystemd
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#endif

/// A plugin executable listd starts and keeps running.
public struct SupervisedPluginSpec: Sendable, Hashable {
    /// The name in logs and `stats` (by default the executable's file name).
    public var name: String
    /// The executable's path and its arguments.
    public var executable: String
    public var arguments: [String]
    /// The types the plugin provides, when the configuration names them: held for it from before listd
    /// listens (or a reload takes effect), so that no other connection may ever announce them. Unnamed,
    /// no other plugin may announce any type until this one has connected (or its first run ended).
    public var provides: [String]

    public init(name: String? = nil, executable: String, arguments: [String] = [], provides: [String] = []) {
        self.name = name ?? String(executable.split(separator: "/").last ?? Substring(executable))
        self.executable = executable
        self.arguments = arguments
        self.provides = provides
    }
}

/// Starts plugin processes with listd's socket in `LISTD_SOCKET`, restarts each one with a growing delay
/// when it exits, passes every line it writes to stderr to listd's log, and stops them (SIGTERM, then
/// SIGKILL after a grace period) on shutdown.
///
/// Each plugin has a thread of its own that spawns it, reads its stderr and waits for it: nothing here
/// touches the event loop, so a plugin that misbehaves while starting or stopping delays no request.
public final class PluginSupervisor: Sendable {
    /// A supervised plugin's state, as `stats` reports it.
    public struct Status: Sendable {
        public var name: String
        public var executable: String
        public var pid: Int32?
        public var starts = 0
        public var lastExit: String?
        /// When its current process started.
        public var startedAt: ContinuousClock.Instant?
        public var running: Bool { pid != nil }
    }

    private struct Entry {
        var spec: SupervisedPluginSpec
        var status: Status
        var stopping = false
        var finished = false
        /// Its thread was started (an entry is reserved before that: see `reserve`).
        var launched = false
    }

    private let socketPath: String
    private let logger: Logger
    private let entries = NIOLockedValueBox<[Int: Entry]>([:])
    private let nextID = NIOLockedValueBox(0)
    /// The first delay before a restart; it doubles after each quick exit, up to `maximumBackoff`.
    let initialBackoff: Duration
    let maximumBackoff: Duration

    public init(socketPath: String, logger: Logger, initialBackoff: Duration = .milliseconds(100), maximumBackoff: Duration = .seconds(30)) {
        self.socketPath = socketPath
        self.logger = logger
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// Supervised plugins, in the order they were started.
    public var statuses: [Status] {
        entries.withLockedValue { entries in entries.keys.sorted().compactMap { entries[$0].map(\.status) } }
    }

    /// Makes `specs` the running set: starts new plugins, stops those no longer listed (a changed command
    /// counts as both). Returns once the stopped ones have exited.
    public func update(_ specs: [SupervisedPluginSpec], grace: Duration) {
        reserve(specs)
        let wanted = Set(specs)
        let unwanted = entries.withLockedValue { entries in entries.filter { !$0.value.stopping && !wanted.contains($0.value.spec) }.map(\.key) }
        stop(ids: unwanted, grace: grace)
        launchReserved()
    }

    /// Lists the plugins of `specs` not yet supervised as coming up (no process yet), without starting
    /// them: from then on `statuses` shows them and `supervisedName` knows their first process, so that
    /// hello can keep their types for them. Called before the socket accepts (and before a reload takes
    /// effect); `update` starts them.
    public func reserve(_ specs: [SupervisedPluginSpec]) {
        Self.inheritedDescriptorsClosedOnExec
        let known = entries.withLockedValue { entries in Set(entries.values.filter { !$0.stopping }.map(\.spec)) }
        for spec in specs where !known.contains(spec) {
            let id = nextID.withLockedValue { value in
                value += 1
                return value
            }
            entries.withLockedValue { $0[id] = Entry(spec: spec, status: Status(name: spec.name, executable: spec.executable)) }
        }
    }

    /// Starts a thread for every reserved plugin that has none.
    private func launchReserved() {
        let ids = entries.withLockedValue { entries in
            let ids = entries.filter { !$0.value.launched && !$0.value.stopping }.map(\.key).sorted()
            for id in ids { entries[id]?.launched = true }
            return ids
        }
        for id in ids { startThread { self.supervise(id) } }
    }

    /// Stops every plugin: SIGTERM, and SIGKILL for those still running after `grace`.
    public func stopAll(grace: Duration) {
        stop(ids: entries.withLockedValue { Array($0.keys) }, grace: grace)
    }

    /// `update` without blocking the caller's thread.
    public func update(_ specs: [SupervisedPluginSpec], grace: Duration) async {
        await withCheckedContinuation { continuation in
            startThread {
                self.update(specs, grace: grace)
                continuation.resume()
            }
        }
    }

    /// `stopAll` without blocking the caller's thread.
    public func stopAll(grace: Duration) async {
        await update([], grace: grace)
    }

    /// Restarts the supervised plugin whose process (or a process in its group) is `peer`, the peer of a
    /// plugin connection listd closed as broken or unhealthy: SIGTERM, and SIGKILL if it is still the
    /// same process after `grace`. Its thread then starts it again with the usual backoff. A plugin
    /// listd did not start is left alone (it only lost its connection).
    public func restart(peer: Int32, reason: String, grace: Duration) {
        let group = getpgid(peer)
        let target = entries.withLockedValue { entries -> (name: String, pid: Int32)? in
            for entry in entries.values where !entry.stopping {
                if let pid = entry.status.pid, pid == peer || pid == group { return (entry.spec.name, pid) }
            }
            return nil
        }
        guard let target else { return }
        logger.warning("restarting plugin (\(reason))", metadata: ["plugin": "\(target.name)", "pid": "\(target.pid)"])
        kill(target.pid, SIGTERM)
        startThread {
            let deadline = ContinuousClock.now + grace
            while ContinuousClock.now < deadline, self.isRunning(target.pid) { self.sleep(for: .milliseconds(10)) }
            if self.isRunning(target.pid) {
                self.logger.warning("plugin did not stop within \(grace); killing it", metadata: ["pid": "\(target.pid)"])
                kill(target.pid, SIGKILL)
            }
        }
    }

    /// The name of the supervised plugin whose process (or a process in its group) is `peer`: a
    /// connection from a plugin listd started itself.
    public func supervisedName(peer: Int32) -> String? {
        let group = getpgid(peer)
        let (known, spawning) = entries.withLockedValue { entries in
            (
                entries.values.first { entry in
                    guard !entry.stopping, let pid = entry.status.pid else { return false }
                    return pid == peer || pid == group
                }?.spec.name,
                entries.values.filter { !$0.stopping && !$0.finished && $0.status.pid == nil }.map(\.spec.name)
            )
        }
        if let known { return known }
        // A plugin can connect before its supervisor thread has recorded the pid it was just spawned with
        // (on a loaded machine): a child of listd's, while exactly one plugin is being started, is that one.
        guard spawning.count == 1, Self.parentPID(of: group > 0 ? group : peer) == getpid() else { return nil }
        return spawning[0]
    }

    /// The parent of process `pid` (from /proc/PID/stat), if it can be read.
    static func parentPID(of pid: Int32) -> Int32? {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let line = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
        guard let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    /// Whether a supervised plugin called `name` is running or will be started again (listed, not stopping).
    public func manages(_ name: String) -> Bool {
        entries.withLockedValue { entries in entries.values.contains { $0.spec.name == name && !$0.stopping } }
    }

    /// A supervised plugin still runs as `pid` (its thread has not reaped it).
    private func isRunning(_ pid: Int32) -> Bool {
        entries.withLockedValue { entries in entries.values.contains { $0.status.pid == pid } }
    }

    /// Marks every descriptor above stderr close-on-exec, once: a plugin inherits none of listd's (the
    /// socket systemd passed, descriptors listd's own parent leaked to it). A parent that watches listd
    /// through such a descriptor would otherwise see it alive for as long as a plugin runs.
    private static let inheritedDescriptorsClosedOnExec: Void = {
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            guard let descriptor = Int32(name), descriptor > 2, descriptor != own else { continue }
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }()

    private func stop(ids: [Int], grace: Duration) {
        guard !ids.isEmpty else { return }
        let pids = entries.withLockedValue { entries in
            ids.compactMap { id -> Int32? in
                entries[id]?.stopping = true
                // One reserved and never started has no thread to finish it.
                if entries[id]?.launched == false { entries[id]?.finished = true }
                return entries[id]?.status.pid
            }
        }
        for pid in pids { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + grace
        while ContinuousClock.now < deadline, !allFinished(ids) { sleep(for: .milliseconds(10)) }
        let stubborn = entries.withLockedValue { entries in ids.compactMap { entries[$0]?.status.pid } }
        for pid in stubborn {
            logger.warning("plugin did not stop within \(grace); killing it", metadata: ["pid": "\(pid)"])
            kill(pid, SIGKILL)
        }
        while !allFinished(ids) { sleep(for: .milliseconds(10)) }
        entries.withLockedValue { entries in
            for id in ids { entries[id] = nil }
        }
    }

    private func allFinished(_ ids: [Int]) -> Bool {
        entries.withLockedValue { entries in ids.allSatisfy { entries[$0]?.finished ?? true } }
    }

    /// The plugin's thread: start it, log its stderr, wait for it, and start it again after a delay,
    /// until it is told to stop.
    private func supervise(_ id: Int) {
        guard let spec = entries.withLockedValue({ $0[id]?.spec }) else { return }
        var backoff = initialBackoff
        var logger = self.logger
        logger[metadataKey: "plugin"] = "\(spec.name)"
        while !isStopping(id) {
            let started = ContinuousClock.now
            let exit: String
            switch spawn(spec) {
            case .failure(let reason):
                exit = reason
                logger.error("cannot start plugin \(spec.executable): \(reason)")
            case .success(let (pid, stderr)):
                let starts = entries.withLockedValue { entries -> Int in
                    entries[id]?.status.pid = pid
                    entries[id]?.status.startedAt = .now
                    entries[id]?.status.starts += 1
                    return entries[id]?.status.starts ?? 0
                }
                // A stop that came while spawning has no pid to signal: signal it now.
                if isStopping(id) { kill(pid, SIGTERM) }
                logger.info("plugin started", metadata: ["pid": "\(pid)", "starts": "\(starts)"])
                let status = wait(for: pid, loggingLinesOf: stderr, logger: logger)
                exit = Self.describe(status)
                entries.withLockedValue { entries in
                    entries[id]?.status.pid = nil
                    entries[id]?.status.lastExit = exit
                }
                if isStopping(id) {
                    logger.info("plugin stopped (\(exit))", metadata: ["pid": "\(pid)"])
                    continue
                }
                logger.warning("plugin exited (\(exit))", metadata: ["pid": "\(pid)"])
            }
            entries.withLockedValue { $0[id]?.status.lastExit = exit }
            // A plugin that ran for a while starts again quickly; one that keeps failing, less and less often.
            if ContinuousClock.now - started > .seconds(10) { backoff = initialBackoff }
            let restartAt = ContinuousClock.now + backoff
            while ContinuousClock.now < restartAt, !isStopping(id) { sleep(for: .milliseconds(20)) }
            backoff = min(backoff * 2, maximumBackoff)
        }
        entries.withLockedValue { $0[id]?.finished = true }
    }

    private func isStopping(_ id: Int) -> Bool {
        entries.withLockedValue { $0[id]?.stopping ?? true }
    }

    /// Reads the plugin's stderr line by line into the log until it exits; returns its wait status.
    private func wait(for pid: Int32, loggingLinesOf descriptor: Int32, logger: Logger) -> Int32 {
        var pipeOpen = true
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        func emit() {
            guard !line.isEmpty else { return }
            logger.notice("\(String(decoding: line, as: UTF8.self))", metadata: ["pid": "\(pid)", "stream": "stderr"])
            line.removeAll(keepingCapacity: true)
        }
        var status: Int32 = 0
        while true {
            if pipeOpen {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 100) > 0 {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count > 0 {
                        for byte in buffer[0..<count] {
                            if byte == 0x0A { emit() } else if line.count < 16_384 { line.append(byte) }
                        }
                    } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                        pipeOpen = false
                        emit()
                    }
                }
                if waitpid(pid, &status, WNOHANG) == pid { break }
            } else {
                // stderr is closed: just wait (the poll above handles a plugin whose children keep it open).
                if waitpid(pid, &status, 0) == pid || errno == ECHILD { break }
            }
        }
        // Whatever the plugin wrote just before exiting.
        while pipeOpen {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            for byte in buffer[0..<count] {
                if byte == 0x0A { emit() } else if line.count < 16_384 { line.append(byte) }
            }
        }
        emit()
        close(descriptor)
        return status
    }

    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exit status \((status >> 8) & 0xff)" }
        return "killed by signal \(signal)"
    }

    enum SpawnResult {
        case success((pid: Int32, stderr: Int32))
        case failure(String)
    }

    /// Starts the executable with stdin and stdout on /dev/null, stderr on a pipe, the default signal
    /// dispositions and an empty signal mask (listd blocks the signals it handles, and a child would
    /// inherit that), in a process group of its own, with `LISTD_SOCKET` set and systemd's per-service
    /// variables removed.
    private func spawn(_ spec: SupervisedPluginSpec) -> SpawnResult {
        // A socket pair rather than a pipe: it is created close-on-exec atomically (no other plugin's
        // spawn can inherit it); only listd's end is non-blocking.
        var pipeDescriptors: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, listd_stream_socket_cloexec, 0, &pipeDescriptors) == 0 else {
            return .failure("socketpair: \(String(cString: strerror(errno)))")
        }
        shutdown(pipeDescriptors[0], Int32(SHUT_WR))
        _ = fcntl(pipeDescriptors[0], F_SETFL, fcntl(pipeDescriptors[0], F_GETFL) | O_NONBLOCK)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeDescriptors[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = ([spec.executable] + spec.arguments).map { strdup($0) } + [nil]
        let envp = childEnvironment().map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, spec.executable, &actions, &attributes, argv, envp)
        close(pipeDescriptors[1])
        guard result == 0 else {
            close(pipeDescriptors[0])
            return .failure(String(cString: strerror(result)))
        }
        return .success((pid, pipeDescriptors[0]))
    }

    private func childEnvironment() -> [String] {
        var variables: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let variable = String(cString: entry)
            let name = variable.prefix { $0 != "=" }
            let systemdOnly = [
                "NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC", "LISTD_SOCKET", "LISTD_SUPERVISOR_PID",
            ]
            if !systemdOnly.contains(String(name)) { variables.append(variable) }
            cursor += 1
        }
        variables.append("LISTD_SOCKET=\(socketPath)")
        // Lets a plugin tell that its supervisor is gone (it then exits rather than reconnecting forever).
        variables.append("LISTD_SUPERVISOR_PID=\(getpid())")
        return variables
    }

    private func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

/// Runs `body` on a new detached thread.
private func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        box.body()
        return nil
    }, box)
    precondition(created == 0, "pthread_create failed: \(created)")
    pthread_detach(thread)
}
