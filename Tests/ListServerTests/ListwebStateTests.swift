import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A program running in the background for a test (`spawnProgram`), its standard output and error in
/// files; killed and reaped when the test is done with it.
final class BackgroundProcess {
    let pid: pid_t
    let outputPath: String
    let errorPath: String
    private var status: Int32?

    init(_ arguments: [String], environment extra: [String: String] = [:], mergingErrors: Bool = false) throws {
        let base = NSTemporaryDirectory() + "background-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        outputPath = base + ".out"
        errorPath = mergingErrors ? outputPath : base + ".err"
        pid = try spawnProgram(arguments, outputPath: outputPath, errorPath: mergingErrors ? nil : errorPath, environment: ["SWIFT_BACKTRACE": "enable=no"].merging(extra) { $1 })
    }

    deinit {
        _ = stop(signal: SIGKILL)
        unlink(outputPath)
        unlink(errorPath)
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// The first line of its output, once it is whole (nil when it never came).
    func firstLine() throws -> String? {
        guard try eventually({ output.contains("\n") || exitStatus() != nil }) else { return nil }
        return output.split(separator: "\n", omittingEmptySubsequences: false).first.flatMap { output.contains("\n") ? String($0) : nil }
    }

    /// Its exit status (128 + N for signal N) once it ended, else nil.
    func exitStatus() -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        let ended = waitpid(pid, &raw, WNOHANG)
        guard ended == pid else { return nil }
        status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return status
    }

    /// Sends `signal` and waits (`eventually`) for it to end, else kills it; returns its exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32? {
        if let status { return status }
        kill(pid, signal)
        if (try? eventually { exitStatus() != nil }) == true, let status { return status }
        kill(pid, SIGKILL)
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        status = 137
        return status
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A TCP port on 127.0.0.1 held (bound and listening) by the test until `release()`.
final class HeldPort {
    let port: Int
    private var descriptor: Int32

    init() throws {
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(held, $0, length) } }
        guard bound == 0, listen(held, 1) == 0 else {
            close(held)
            throw TestFailure("cannot take a port: \(String(cString: strerror(errno)))")
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(held, $0, &length) } }
        descriptor = held
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

/// One HTTP/1.1 GET to 127.0.0.1:`port` (the token, when given, as a bearer token); the status and body.
func httpGet(port: Int, _ path: String, token: String? = nil) throws -> (status: Int, body: String) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw TestFailure("cannot connect to port \(port): \(String(cString: strerror(errno)))") }
    let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(token.map { "Authorization: Bearer \($0)\r\n" } ?? "")Connection: close\r\n\r\n"
    let bytes = Array(request.utf8)
    guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
        throw TestFailure("cannot send the request")
    }
    var response: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        response += chunk[0..<count]
    }
    let text = String(decoding: response, as: UTF8.self)
    let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
    let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    return (status, body)
}

/// What listweb's first line says: `listweb: serving http://127.0.0.1:PORT/#token=TOKEN (notes)`.
struct ServedAddress {
    let port: Int
    let token: String
    let notes: String

    init?(_ line: String) {
        guard let start = line.range(of: "http://127.0.0.1:") else { return nil }
        let rest = line[start.upperBound...]
        guard let slash = rest.firstIndex(of: "/"), let port = Int(rest[..<slash]) else { return nil }
        self.port = port
        let fragment = rest[slash...].split(separator: " ", maxSplits: 1)
        guard let token = fragment.first?.components(separatedBy: "#token=").dropFirst().first else { return nil }
        self.token = token
        notes = fragment.count > 1 ? String(fragment[1]) : ""
    }
}

/// listweb's port and token as a person meets them: a fixed port that gives way to the next free one when
/// taken, and a token kept in a state directory (so that an open page survives a restart), refused when
/// the file is not listweb's alone.
@Suite("listweb: its port and its kept token", .serialized)
struct ListwebStateTests {
    func listweb(_ arguments: [String], directory: String) throws -> BackgroundProcess {
        try BackgroundProcess([binaryDirectory.appendingPathComponent("listweb").path, "--socket", directory + "/absent.sock"] + arguments)
    }

    /// The preferred port taken (the test holds it): listweb listens on another, says so in its first line
    /// and on stderr, and the page answers there.
    @Test func thePortFallsBackWhenTaken() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let held = try HeldPort()
        let web = try listweb(["--port", "\(held.port)", "--state-directory", directory + "/state"], directory: directory)
        let line = try #require(try web.firstLine(), "listweb printed nothing: \(web.errors)")
        let served = try #require(ServedAddress(line), "\(line)")
        #expect(served.port != held.port && served.port != 0, "\(line)")
        #expect(served.notes == "(port \(held.port) was taken)", "\(line)")
        #expect(web.errors.contains("listweb: port \(held.port) on 127.0.0.1 is taken; listening on port"), "\(web.errors)")
        #expect(try httpGet(port: served.port, "/").status == 200)
        let info = try httpGet(port: served.port, "/api/info", token: served.token)
        #expect(info.status == 200 && info.body.contains("\"actions\""), "\(info)")
        #expect(try httpGet(port: served.port, "/api/info").status == 401)

        // --exact-port fails instead.
        let exact = try listweb(["--port", "\(held.port)", "--exact-port", "--state-directory", directory + "/state"], directory: directory)
        #expect(try eventually { exact.exitStatus() != nil }, "listweb --exact-port on a taken port ended")
        #expect(exact.exitStatus() == 69 && !exact.output.contains("serving"), "\(exact.output)\(exact.errors)")
        #expect(exact.errors.contains("listweb: port \(held.port) on 127.0.0.1 is taken (another program listens there), and --exact-port says to use no other"), "\(exact.errors)")
    }

    /// The token made on the first start (0600, in a directory made 0700) is the one of the next start
    /// with the same state directory: the page's token still works.
    @Test func theTokenSurvivesARestart() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/deeper/state"
        let first = try listweb(["--port", "0", "--state-directory", state], directory: directory)
        let line = try #require(try first.firstLine(), "\(first.errors)")
        let served = try #require(ServedAddress(line), "\(line)")
        #expect(served.token.count == 64)
        #expect(first.errors.contains("listweb: made a new token, kept in \(state)/token"), "\(first.errors)")
        var status = stat()
        #expect(stat(state, &status) == 0 && status.st_mode & 0o777 == 0o700)
        #expect(stat(state + "/token", &status) == 0 && status.st_mode & 0o777 == 0o600 && status.st_uid == geteuid())
        #expect(try String(contentsOfFile: state + "/token", encoding: .utf8) == served.token + "\n")
        #expect(first.stop(signal: SIGTERM) != nil)

        let second = try listweb(["--port", "0", "--state-directory", state], directory: directory)
        let secondLine = try #require(try second.firstLine(), "\(second.errors)")
        let again = try #require(ServedAddress(secondLine))
        #expect(again.token == served.token)
        #expect(second.errors.contains("listweb: using the token kept in \(state)/token"), "\(second.errors)")
        #expect(try httpGet(port: again.port, "/api/info", token: served.token).status == 200, "the open page's token works")

        // The default: $XDG_STATE_HOME/listweb.
        let defaulted = try BackgroundProcess(
            [binaryDirectory.appendingPathComponent("listweb").path, "--socket", directory + "/absent.sock", "--port", "0"],
            environment: ["XDG_STATE_HOME": directory + "/xdg", "STATE_DIRECTORY": ""])
        _ = try #require(try defaulted.firstLine(), "\(defaulted.errors)")
        #expect(FileManager.default.fileExists(atPath: directory + "/xdg/listweb/token"), "\(defaulted.errors)")
    }

    /// A token file another user could read, one that is a symbolic link, one of another user, and a
    /// state directory others may write: listweb refuses to start (status 64), saying what is wrong.
    @Test func anUnsafeTokenFileIsRefused() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        mkdir(state, 0o700)
        let token = "s3cret-token-0123456789abcdef"
        func refusal(_ arguments: [String]) throws -> (status: Int32?, errors: String) {
            let web = try listweb(["--port", "0"] + arguments, directory: directory)
            _ = try eventually { web.exitStatus() != nil }
            return (web.exitStatus(), web.errors + web.output)
        }

        try (token + "\n").write(toFile: state + "/token", atomically: false, encoding: .utf8)
        chmod(state + "/token", 0o644)
        var refused = try refusal(["--state-directory", state])
        #expect(refused.status == 64 && refused.errors.contains("refusing \(state)/token: other users may read or write it (mode 644; chmod 600 it)"), "\(refused)")

        unlink(state + "/token")
        try (token + "\n").write(toFile: directory + "/elsewhere", atomically: false, encoding: .utf8)
        chmod(directory + "/elsewhere", 0o600)
        symlink(directory + "/elsewhere", state + "/token")
        refused = try refusal(["--state-directory", state])
        #expect(refused.status == 64 && refused.errors.contains("refusing \(state)/token: it is a symbolic link"), "\(refused)")
        refused = try refusal(["--token-file", state + "/token"])
        #expect(refused.status == 64 && refused.errors.contains("it is a symbolic link"), "\(refused)")
        unlink(state + "/token")

        chmod(state, 0o770)
        refused = try refusal(["--state-directory", state])
        #expect(refused.status == 64 && (refused.errors.contains("can be written by other users") || refused.errors.contains("its group or other users may write")), "\(refused)")
        chmod(state, 0o700)

        if geteuid() == 0 {
            // Another user's token file (root may open it, and listweb still refuses it).
            try (token + "\n").write(toFile: state + "/token", atomically: false, encoding: .utf8)
            chmod(state + "/token", 0o600)
            chown(state + "/token", 65534, 65534)
            refused = try refusal(["--state-directory", state])
            #expect(refused.status == 64 && refused.errors.contains("refusing \(state)/token: it belongs to") && refused.errors.contains("not to this process's user"), "\(refused)")
            refused = try refusal(["--token-file", state + "/token"])
            #expect(refused.status == 64 && refused.errors.contains("not to this process's user"), "\(refused)")
        }

        // --token-file and --state-directory together are a mistake.
        refused = try refusal(["--token-file", directory + "/elsewhere", "--state-directory", state])
        #expect(refused.status == 64 && refused.errors.contains("--token-file and --state-directory both give the token"), "\(refused)")
        // The token file alone still works, read-only: the address says the token is the file's.
        let web = try listweb(["--port", "0", "--token-file", directory + "/elsewhere"], directory: directory)
        let line = try #require(try web.firstLine(), "\(web.errors)")
        #expect(line.hasSuffix("/ (token from the token file)"), "\(line)")
        #expect(try String(contentsOfFile: directory + "/elsewhere", encoding: .utf8) == token + "\n")
    }
}
