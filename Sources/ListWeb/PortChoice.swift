#if canImport(Glibc)
    import Glibc
#endif

/// The TCP port listweb listens on when the one asked for may be taken: that one when it is free, else
/// the next few, else any free one (the system's choice).
public enum PortChoice {
    /// How many ports after the preferred one are tried before any free one.
    public static let nextPortsTried = 9

    /// The port to listen on: `preferred` when it can be bound on `host` now, else the first of the next
    /// `nextPortsTried` that can, else 0 (any free one). A preferred 0 stays 0.
    public static func choose(host: String, preferred: Int) -> Int {
        guard preferred > 0 else { return 0 }
        let last = min(65_535, preferred + nextPortsTried)
        guard preferred <= last else { return 0 }
        return (preferred...last).first { isFree(host: host, port: $0) } ?? 0
    }

    /// Whether a listening socket could be bound to `host`:`port` now (as the server binds it: with
    /// SO_REUSEADDR, so a port another socket listens on is taken, one in TIME_WAIT is not). An address
    /// that does not resolve counts as free: binding it reports the problem.
    public static func isFree(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else { return true }
        defer { freeaddrinfo(found) }
        let descriptor = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return true }
        defer { close(descriptor) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        return bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0
    }
}
