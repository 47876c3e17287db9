import Foundation

/// Hosts for tests on one machine: network namespaces, each joined to the test's own namespace by a
/// veth pair with a /30 of its own (the host side `10.B.k.1`, the namespace side `10.B.k.2`). Nothing
/// is routed between namespaces: a test reaches each "host" from its own namespace, and connects them
/// through something it runs there (a `FaultProxy` on a host-side address). Made and removed as root
/// with `ip`; `available` says whether this machine allows it. Not part of any product.
public final class TestNetwork {
    /// One namespace and its link.
    public struct Host: Sendable {
        /// The namespace's name (for `ip netns exec`).
        public let namespace: String
        /// The address inside the namespace.
        public let address: String
        /// The address of the test's end of the link (reachable from inside the namespace).
        public let gateway: String
    }

    public private(set) var hosts: [Host] = []
    private let prefix: String
    private let block: Int
    private static let counter = NSLock()
    nonisolated(unsafe) private static var nextBlock = 0

    /// Whether namespaces can be made here (root, `ip`, a kernel that allows it): checked once.
    public static let available: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: ip) else { return false }
        let name = "listd-probe-\(getpid())"
        guard (try? run([ip, "netns", "add", name])) != nil else { return false }
        _ = try? run([ip, "netns", "del", name])
        return true
    }()

    static let ip = "/usr/sbin/ip"

    /// A new set of hosts named `listd-<pid>-<n>-<name>`. Namespaces left by earlier test processes
    /// that have ended are removed first.
    public init() throws {
        block = Self.counter.withLock {
            defer { Self.nextBlock += 1 }
            return Self.nextBlock
        }
        prefix = "listd-\(getpid())-\(block)"
        Self.removeStale()
    }

    deinit { removeAll() }

    /// Makes a namespace with a link to the test's namespace, up, with loopback up inside.
    @discardableResult
    public func addHost(_ name: String) throws -> Host {
        let index = hosts.count + 1
        let namespace = "\(prefix)-\(name)"
        // 10.(200 + block % 50).(index * 4 + pid % 4 * 64) …: /30s that tests running at once do not share.
        let second = 200 + block % 50
        let third = (Int(getpid()) % 4) * 64 + index
        let (outer, inner) = ("vl\(getpid() % 100_000)b\(block)h\(index)", "vn\(getpid() % 100_000)b\(block)h\(index)")
        let host = Host(namespace: namespace, address: "10.\(second).\(third).2", gateway: "10.\(second).\(third).1")
        try Self.run([Self.ip, "netns", "add", namespace])
        hosts.append(host)
        try Self.run([Self.ip, "link", "add", outer, "type", "veth", "peer", "name", inner])
        try Self.run([Self.ip, "link", "set", inner, "netns", namespace])
        try Self.run([Self.ip, "addr", "add", host.gateway + "/30", "dev", outer])
        try Self.run([Self.ip, "link", "set", outer, "up"])
        try Self.run([Self.ip, "-n", namespace, "addr", "add", host.address + "/30", "dev", inner])
        try Self.run([Self.ip, "-n", namespace, "link", "set", inner, "up"])
        try Self.run([Self.ip, "-n", namespace, "link", "set", "lo", "up"])
        return host
    }

    /// Removes every namespace made (their links go with them).
    public func removeAll() {
        for host in hosts { _ = try? Self.run([Self.ip, "netns", "del", host.namespace]) }
        hosts = []
    }

    /// The command line that runs `arguments` inside `host`'s namespace.
    public static func inside(_ host: Host, _ arguments: [String]) -> [String] {
        [ip, "netns", "exec", host.namespace] + arguments
    }

    /// Namespaces named `listd-<pid>-…` whose process is gone.
    private static func removeStale() {
        guard let listing = try? run([ip, "netns", "list"]) else { return }
        for line in listing.split(separator: "\n") {
            let name = line.split(separator: " ").first.map(String.init) ?? ""
            let fields = name.split(separator: "-")
            guard fields.count >= 3, fields[0] == "listd", let pid = Int32(fields[1]), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            _ = try? run([ip, "netns", "del", name])
        }
    }

    /// Runs a command to its end; its output, or an error with its output.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = makePipe()
        process.standardOutput = output
        process.standardError = output
        try process.start()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.waitUntilExit(within: .seconds(60)), process.terminationStatus == 0 else {
            throw NetworkError("\(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    public struct NetworkError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
