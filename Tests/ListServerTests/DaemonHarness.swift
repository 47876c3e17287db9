import CTestCredentials
import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// The directory holding the binaries under test (next to the test bundle).
let binaryDirectory: URL = {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return executable.deletingLastPathComponent()
}()

/// Runs one of the package's executables to completion with `input` on stdin (and `LISTD_SOCKET` when
/// `daemon` is given); returns its exit status, stdout and stderr.
func runExecutable(_ name: String, _ arguments: [String], daemon: Daemon? = nil, input: String? = nil) throws -> (status: Int32, out: String, err: String) {
    try runProgram(binaryDirectory.appendingPathComponent(name), arguments, daemon: daemon, input: input)
}

/// Runs any program as `runExecutable` does, with `extraEnvironment` added to the test's environment.
func runProgram(
    _ executable: URL, _ arguments: [String], daemon: Daemon? = nil, input: String? = nil, extraEnvironment: [String: String] = [:]
) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    if let daemon { environment["LISTD_SOCKET"] = daemon.socketPath }
    for (key, value) in extraEnvironment { environment[key] = value }
    environment["SWIFT_BACKTRACE"] = "enable=no"
    process.environment = environment
    let out = makePipe()
    let err = makePipe()
    let inPipe = makePipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = inPipe
    try process.start()
    let watchdog = process.killIfStillRunning(after: .seconds(300))
    defer { watchdog.cancel() }
    if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try inPipe.fileHandleForWriting.close()
    let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    guard process.waitUntilExit(within: .seconds(60)) else { throw ClientError("\(executable.lastPathComponent) did not end: \(errors)") }
    return (process.terminationStatus, output, errors)
}

/// A fresh directory with a short path (socket paths are limited to 107 bytes, and the README's shell
/// examples use the path unquoted).
func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/listd-test.XXXXXX".utf8CString)
    guard let result = mkdtemp(&template) else { throw ClientError("mkdtemp failed") }
    return String(cString: result)
}

/// A datagram socket bound in a temporary directory, standing in for systemd's `NOTIFY_SOCKET`. A thread
/// of its own keeps reading it, as systemd does: a socket nobody reads fills up (a few datagrams) and
/// then blocks the sender, listd's event loop among them.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [String] = []
    private var closed = false
    private let drained = DispatchSemaphore(value: 0)

    /// Every message received so far, oldest first.
    var messages: [String] { lock.withLock { received } }

    init(directory: String) throws {
        path = directory + "/notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw ClientError("cannot bind the notify socket") }
        Thread.detachNewThread { [self] in
            while !lock.withLock({ closed }) { receive(waitMilliseconds: 50) }
            drained.signal()
        }
    }

    /// Stops the reading thread (within a second) and closes the socket.
    func close() {
        let wasOpen = lock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        guard wasOpen else { return }
        _ = drained.wait(timeout: .now() + 1)
        Glibc.close(descriptor)
    }

    /// Waits until a received message contains `assignment` (e.g. `READY=1`); returns that message.
    @discardableResult
    func wait(for assignment: String, timeout: Duration = .seconds(20)) throws -> String {
        let deadline = ContinuousClock.now + timeout
        var checked = 0
        while true {
            let all = messages
            while checked < all.count {
                let message = all[checked]
                checked += 1
                if message.split(separator: "\n").contains(where: { $0 == assignment || $0.hasPrefix(assignment) }) { return message }
            }
            guard ContinuousClock.now < deadline else { throw ClientError("no \(assignment) within \(timeout); got \(all)") }
            receive(waitMilliseconds: 50)
        }
    }

    /// Reads whatever arrived (waiting up to `waitMilliseconds` for the first datagram).
    func receive(waitMilliseconds: Int32 = 0) {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while !lock.withLock({ closed }) && poll(&poller, 1, waitMilliseconds) > 0 {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count <= 0 { break }
            let message = String(decoding: buffer[0..<count], as: UTF8.self)
            lock.withLock { received.append(message) }
        }
    }
}

/// A real `listd` process on a socket in a fresh temporary directory, with its own notify socket.
final class Daemon {
    let directory: String
    let socketPath: String
    let notify: NotifySocket
    let process = Process()
    private let logPipe = makePipe()
    /// listd's stderr, read as it comes (a pipe nobody reads fills up and blocks listd's logging).
    private let logReader = PipeReader()

    /// `directory`: reuse another daemon's directory (and so its socket path), e.g. to restart it;
    /// `executable`: another listd than the one under test (e.g. an installed copy); `namespace`: a
    /// network namespace to run it in (another host, `TestNetwork`).
    init(
        arguments: [String] = [], environment: [String: String] = [:], configuration: JSONValue? = nil, directory: String? = nil,
        executable: URL? = nil, namespace: String? = nil
    ) throws {
        self.directory = try directory ?? makeTemporaryDirectory()
        socketPath = self.directory + "/listd.sock"
        notify = try NotifySocket(directory: self.directory)
        // Tests never touch the user's state directory: ephemeral unless a test names its own directory.
        let storage = arguments.contains("--state-directory") || arguments.contains("--postgres") ? [] : ["--ephemeral"]
        var arguments = ["--socket", socketPath] + storage + arguments
        if let configuration {
            let path = self.directory + "/listd.json"
            try Data(configuration.jsonBytes).write(to: URL(fileURLWithPath: path))
            arguments += ["--config", path]
        }
        let listd = executable ?? binaryDirectory.appendingPathComponent("listd")
        if let namespace {
            // Another host: `ip netns exec` runs listd in the namespace (it execs: the same process).
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
            process.arguments = ["netns", "exec", namespace, listd.path] + arguments
        } else {
            process.executableURL = listd
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notify.path
        env["SWIFT_BACKTRACE"] = "enable=no"
        env.removeValue(forKey: "LISTEN_FDS")
        env.removeValue(forKey: "JOURNAL_STREAM")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardError = logPipe
        try process.start()
        logReader.start(reading: logPipe)
        try notify.wait(for: "READY=1")
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit(within: .seconds(30))
        }
        notify.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func connect() throws -> LineConnection { try LineConnection(path: socketPath) }

    /// One request on a fresh connection.
    func request(_ value: JSONValue) throws -> JSONValue { try connect().request(value) }

    /// Sends a signal and, for stopping signals, waits for the exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(20)) throws -> Int32 {
        kill(process.processIdentifier, signal)
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw ClientError("listd did not exit") }
            Thread.sleep(forTimeInterval: 0.01)
        }
        notify.receive()
        return process.terminationStatus
    }

    /// What listd wrote to stderr (only once it exited).
    var log: String { logReader.text(within: .seconds(30)) }
}

extension JSONValue {
    /// `result` of a successful reply; records an issue otherwise.
    func result(sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue {
        #expect(self["ok"] == true, "\(self)", sourceLocation: sourceLocation)
        return self["result"] ?? .null
    }

    /// `error.code` of a failed reply.
    var errorCode: String? { self["error"]?["code"]?.stringValue }
}

/// A child started without Foundation (`listd_test_spawn`): for programs that close the descriptors they
/// inherit, as systemd-socket-activate does, which would close the socket Foundation's `Process` watches
/// for the child's end and leave its one watcher thread blocked until that child exits. Reaped here with
/// bounded waits; killed (its whole process group) if still running at the end.
final class SpawnedChild {
    let pid: pid_t
    private(set) var status: Int32?

    init(_ arguments: [String], environment: [String: String], quiet: Bool = true) throws {
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        let spawned = argv.withUnsafeBufferPointer { argvPointer in
            envp.withUnsafeBufferPointer { envpPointer in
                ChildProcessLaunch.exclusively {
                    listd_test_spawn(
                        UnsafeRawPointer(argvPointer.baseAddress!).assumingMemoryBound(to: UnsafePointer<CChar>?.self),
                        UnsafeRawPointer(envpPointer.baseAddress!).assumingMemoryBound(to: UnsafePointer<CChar>?.self), quiet ? 1 : 0)
                }
            }
        }
        guard spawned > 0 else { throw ClientError("cannot start \(arguments[0]): \(String(cString: strerror(errno)))") }
        pid = spawned
    }

    deinit {
        if status == nil {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            _ = wait(within: .seconds(10))
        }
    }

    /// The wait status once the child ended, waiting at most `timeout`; `nil` if it still runs.
    @discardableResult
    func wait(within timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while status == nil {
            var raw: Int32 = 0
            let ended = waitpid(pid, &raw, WNOHANG)
            if ended == pid { status = raw; break }
            if ended < 0 && errno != EINTR { break }
            if ContinuousClock.now >= deadline { break }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return status
    }
}

/// Reads a pipe to its end on a thread of its own, keeping everything read.
final class PipeReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var bytes = Data()
    private var ended = false

    func start(reading pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { bytes.append(chunk) }
            }
            lock.withLock { ended = true }
            done.signal()
        }
    }

    /// Everything, once the pipe ended (or what was read by `timeout`).
    func text(within timeout: Duration) -> String {
        if !lock.withLock({ ended }) { _ = done.wait(timeout: .now() + Double(timeout.components.seconds)) }
        return lock.withLock { String(decoding: bytes, as: UTF8.self) }
    }
}
