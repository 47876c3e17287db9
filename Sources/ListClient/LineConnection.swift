import DiffableCore
import FileSafety
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// A failure talking to listd: cannot connect, timed out, or the connection closed.
public struct ClientError: Error, CustomStringConvertible {
    public let description: String
    /// Whether listd closed the connection while a request was being written (`EPIPE`, `ECONNRESET`).
    public let brokenPipe: Bool
    public init(_ description: String, brokenPipe: Bool = false) {
        self.description = description
        self.brokenPipe = brokenPipe
    }
}

/// A blocking connection to listd's Unix socket that sends and receives JSON lines.
///
/// ```swift
/// let connection = try LineConnection(path: "/run/user/1000/listd.sock")
/// let reply = try connection.request(["cmd": "ping"])     // {"ok":true,"result":{}}
/// ```
public final class LineConnection {
    private let descriptor: Int32
    private var received = LineBuffer()
    /// Where `read` puts bytes before they join `received` (allocated once).
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    public private(set) var isAtEnd = false

    /// Takes over a connected stream socket (closed when the connection is released).
    public init(adopting descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Connects to the socket at `path`, once it is known that no user other than `trustedOwners` (and
    /// root) could have put it there: the socket and every directory above it belong to them, and no
    /// one else can write those directories (see `TrustedPath`); `nil` connects unchecked.
    public init(path: String, trustedOwners: Set<UInt32>? = SocketPath.trustedOwners()) throws {
        var path = path
        if let trustedOwners {
            // Only the socket that was checked is connected to: nothing there (or a resolved path too long
            // to connect by) is an error, not a reason to try the name again unchecked.
            do {
                guard let resolved = try TrustedPath.checkSocket(path, owners: trustedOwners) else {
                    throw ClientError("cannot connect to \(path): no socket there (\(String(cString: strerror(ENOENT))))")
                }
                guard resolved.utf8.count < 108 else { throw ClientError("socket path too long once resolved: \(resolved)") }
                path = resolved
            } catch let error as ClientError {
                throw error
            } catch {
                throw ClientError(
                    "refusing to connect to \(path): \(error); a listd of another user's is trusted only when LISTD_SOCKET_OWNER names that user")
            }
        }
        // The descriptor is stored only once connected: a failed init closes it here, exactly once (a
        // fully initialized object that throws would also run `deinit`, closing a number that another
        // thread may have been given meanwhile).
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ClientError("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            throw ClientError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ClientError("cannot connect to \(path): \(reason)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The socket, for `poll` alongside other descriptors (read it only through this connection).
    public var fileDescriptor: Int32 { descriptor }

    /// Whether a whole line has been received and not read yet (poll would not report it).
    public var hasBufferedLine: Bool { received.hasLine() }

    /// Sends raw bytes as they are. A peer that went away is an error (`EPIPE`), never a `SIGPIPE` that
    /// kills the process: a client that reconnects must survive writing to a listd that is stopping.
    public func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET {
                    throw ClientError(
                        "listd closed the connection while the request was being sent (\(String(cString: strerror(errno))), after \(offset) of \(bytes.count) bytes)",
                        brokenPipe: true)
                }
                throw ClientError("write: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Sends one line (a newline is added).
    public func send(line: String) throws {
        try send(bytes: Array(line.utf8) + [0x0A])
    }

    /// Sends a JSON value as one line.
    public func send(_ value: JSONValue) throws {
        try send(bytes: value.jsonBytes + [0x0A])
    }

    /// Closes the sending direction (the server sees end of input).
    public func finishSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// The next line without its newline, or `nil` at end of input. Waits at most `timeout`.
    public func readLine(timeout: Duration = .seconds(10)) throws -> [UInt8]? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = received.nextLine() { return line }
            if isAtEnd { return nil }  // an unterminated last line is a reply cut short: dropped
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw ClientError("timed out waiting for a line") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            // Wait in slices of at most a minute (poll takes an Int32 of milliseconds).
            let wanted = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            let milliseconds = Int32(max(1, min(wanted, 60_000)))
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno != EINTR { throw ClientError("poll: \(String(cString: strerror(errno)))") }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == ECONNRESET {
                    isAtEnd = true
                    continue
                }
                throw ClientError("read: \(String(cString: strerror(errno)))")
            }
            if count == 0 {
                isAtEnd = true
                continue
            }
            chunk.withUnsafeBytes { received.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// The next line parsed as JSON, or `nil` at end of input.
    public func readJSON(timeout: Duration = .seconds(10)) throws -> JSONValue? {
        guard let line = try readLine(timeout: timeout) else { return nil }
        return try JSONParser.parse(line)
    }

    /// Sends a request and returns its reply, setting aside event lines that arrive first
    /// (see `events`).
    public func request(_ value: JSONValue, timeout: Duration = .seconds(30)) throws -> JSONValue {
        try requestLine(value, timeout: timeout).reply
    }

    /// Sends a request and returns its reply both parsed and as the exact line received (without its
    /// newline), setting aside event lines that arrive first (see `events`).
    public func requestLine(_ value: JSONValue, timeout: Duration = .seconds(30)) throws -> (reply: JSONValue, line: [UInt8]) {
        try requestLine(encoded: value.jsonBytes, timeout: timeout)
    }

    /// `requestLine(_:timeout:)` for a request already encoded (without its newline). When listd closes
    /// the connection while the request is being sent, the reply it sent before closing (such as
    /// `line-too-long`) is returned if there is one; else the broken pipe is the error.
    public func requestLine(encoded request: [UInt8], timeout: Duration = .seconds(30)) throws -> (reply: JSONValue, line: [UInt8]) {
        do {
            try send(bytes: request + [0x0A])
        } catch let error as ClientError where error.brokenPipe {
            guard let line = try? readLine(timeout: .seconds(1)), let reply = try? JSONParser.parse(line), reply["event"] == nil else { throw error }
            return (reply, line)
        }
        while true {
            guard let line = try readLine(timeout: timeout) else { throw ClientError("the connection closed before the reply") }
            let parsed = try JSONParser.parse(line)
            if parsed["event"] != nil {
                events.append(parsed)
                continue
            }
            return (parsed, line)
        }
    }

    /// Event lines read while waiting for replies, oldest first.
    public var events: [JSONValue] = []
}
