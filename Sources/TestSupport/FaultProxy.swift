import Foundation

/// A TCP proxy for tests that stands for the network between two hosts: it forwards every connection
/// it accepts to one upstream address and can add latency, drop every connection, or black-hole them
/// (a partition: nothing passes and nothing is reset) until healed. The kernel of the test machines
/// has no `netem`, so faults are made here. Not part of any product.
///
/// One thread polls every socket. Bytes read are held with the time they may leave (now plus the
/// latency); while black-holed nothing leaves, and what was held leaves on healing, as TCP's
/// retransmissions would deliver it once a partition ends. New connections are accepted during a
/// partition too (the kernel completes the handshake) and pass nothing until healed.
public final class FaultProxy: @unchecked Sendable {
    /// The address the proxy listens on.
    public let host: String
    public let port: UInt16
    private let upstreamHost: String
    private let upstreamPort: UInt16
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let lock = NSLock()
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    // Guarded by `lock`.
    private var latency: Duration = .zero
    private var blackHoled = false
    private var dropRequested = false
    private var stopping = false
    private var accepted = 0
    private var dropped = 0
    private var cut: (pattern: [UInt8], forward: Bool)?
    private var cutsMade = 0

    /// Listens on `host` (an IPv4 address, port chosen by the kernel) and forwards to `upstream`.
    public init(listeningOn host: String = "127.0.0.1", upstreamHost: String, upstreamPort: UInt16) throws {
        self.host = host
        self.upstreamHost = upstreamHost
        self.upstreamPort = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        guard listener >= 0 else { throw ProxyError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = try Self.address(host, 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw ProxyError("cannot listen on \(host): \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw ProxyError("pipe: \(String(cString: strerror(errno)))") }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wake = (pipeEnds[0], pipeEnds[1])
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "fault-proxy"
        self.thread = thread
        thread.start()
    }

    deinit {
        stop()
        close(listener)
        close(wake.read)
        close(wake.write)
    }

    /// Ends the proxy thread and closes every connection (waits at most ten seconds for the thread).
    public func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            defer { stopping = true }
            return !stopping && thread != nil
        }
        guard wasRunning else { return }
        poke()
        _ = finished.wait(timeout: .now() + 10)
    }

    /// Delays every byte by `latency` in each direction from now on.
    public func setLatency(_ latency: Duration) {
        lock.withLock { self.latency = latency }
        poke()
    }

    /// A partition: nothing passes either way, nothing is reset, until `heal()`.
    public func blackHole() {
        lock.withLock { blackHoled = true }
        poke()
    }

    /// Ends a partition: what was held passes on.
    public func heal() {
        lock.withLock { blackHoled = false }
        poke()
    }

    /// Resets every connection open now, both ways (as a host that restarted would); new ones pass.
    public func dropConnections() {
        lock.withLock { dropRequested = true }
        poke()
    }

    /// Once: the first chunk a client sends that contains `pattern` (plain text, e.g. a statement) is
    /// passed on (`forward`) or not, and from then on that connection passes nothing either way and is
    /// not reset (the link to that one connection went down at that moment); other and new connections
    /// pass. E.g. `COMMIT` forwarded: the server commits and its answer never arrives.
    public func cut(afterClientSends pattern: String, forward: Bool) {
        lock.withLock { cut = (Array(pattern.utf8), forward) }
        poke()
    }

    /// Connections cut by `cut(afterClientSends:forward:)` so far.
    public var cuts: Int { lock.withLock { cutsMade } }

    /// Connections accepted and connections dropped so far.
    public var counts: (accepted: Int, dropped: Int) { lock.withLock { (accepted, dropped) } }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    // MARK: The proxy thread

    /// Bytes on their way in one direction, with the time each chunk may leave.
    private struct Direction {
        var chunks: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
        var sentOfFirst = 0
        var readerClosed = false
        var writerShutDown = false
        /// The last write found the destination full: wait for room (POLLOUT), not for the clock.
        var blocked = false
        var pending: Bool { !chunks.isEmpty }
    }

    private final class Link {
        let client: Int32
        let upstream: Int32
        var toUpstream = Direction()
        var toClient = Direction()
        var closed = false
        var socketsClosed = false
        /// Cut by `cut(afterClientSends:forward:)`: nothing more passes.
        var severed = false
        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }
    }

    private func run() {
        var links: [Link] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let (latency, blackHoled, drop, stopping) = lock.withLock { () -> (Duration, Bool, Bool, Bool) in
                defer { dropRequested = false }
                return (self.latency, self.blackHoled, dropRequested, self.stopping)
            }
            if stopping || drop {
                for link in links { reset(link) }
                if drop { lock.withLock { dropped += links.count } }
                links = []
                if stopping { return }
            }
            let now = ContinuousClock.now
            // Deliver what is due.
            if !blackHoled {
                for link in links {
                    deliver(&link.toUpstream, to: link.upstream, now: now, link: link)
                    if !link.severed { deliver(&link.toClient, to: link.client, now: now, link: link) }
                }
            }
            links.removeAll { link in
                let over =
                    link.closed
                    || (link.toUpstream.readerClosed && link.toClient.readerClosed && !link.toUpstream.pending && !link.toClient.pending)
                if over && !link.socketsClosed { reset(link) }
                return over
            }
            // Wait for input, the next due chunk, or a poke.
            var descriptors = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0), pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = 1_000
            for link in links {
                // A closed reader is left out (a negative descriptor), or its hang-up would wake poll at once;
                // a destination found full is polled for room.
                let clientWaitsForRoom = !blackHoled && !link.severed && link.toClient.blocked
                let upstreamWaitsForRoom = !blackHoled && link.toUpstream.blocked
                descriptors.append(
                    pollfd(
                        fd: link.toUpstream.readerClosed && !clientWaitsForRoom ? -1 : link.client,
                        events: Int16(link.toUpstream.readerClosed ? 0 : POLLIN) | Int16(clientWaitsForRoom ? POLLOUT : 0), revents: 0))
                descriptors.append(
                    pollfd(
                        fd: link.toClient.readerClosed && !upstreamWaitsForRoom ? -1 : link.upstream,
                        events: Int16(link.toClient.readerClosed ? 0 : POLLIN) | Int16(upstreamWaitsForRoom ? POLLOUT : 0), revents: 0))
                if !blackHoled {
                    for direction in link.severed ? [link.toUpstream] : [link.toUpstream, link.toClient] where !direction.blocked {
                        guard let due = direction.chunks.first?.due else { continue }
                        let wait = max(Int32(0), Int32(((due - now) / .milliseconds(1)).rounded(.up)))
                        timeout = min(timeout, wait)
                    }
                }
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if descriptors[0].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                while read(wake.read, &sink, sink.count) > 0 {}
            }
            let due = ContinuousClock.now + latency
            for (index, link) in links.enumerated() {
                let clientEvents = descriptors[2 + 2 * index].revents
                let upstreamEvents = descriptors[3 + 2 * index].revents
                if clientEvents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !link.toUpstream.readerClosed {
                    let (before, wasSevered) = (link.toUpstream.chunks.count, link.severed)
                    receive(from: link.client, into: &link.toUpstream, due: due, buffer: &buffer)
                    if link.toUpstream.chunks.count > before {
                        // What a severed connection's client sends later is thrown away: none of it reaches the server.
                        if wasSevered { link.toUpstream.chunks.removeLast() } else { checkCut(link) }
                    }
                }
                if upstreamEvents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !link.toClient.readerClosed {
                    receive(from: link.upstream, into: &link.toClient, due: due, buffer: &buffer)
                }
            }
            // Accepted last: the descriptors polled above are the links' before it.
            if descriptors[1].revents & Int16(POLLIN) != 0 {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    if let upstream = try? connectUpstream() {
                        links.append(Link(client: client, upstream: upstream))
                        lock.withLock { accepted += 1 }
                    } else {
                        close(client)
                    }
                }
            }
        }
    }

    /// Severs `link` when its newest chunk from the client holds the armed pattern.
    private func checkCut(_ link: Link) {
        let armed = lock.withLock { cut }
        guard let armed, let chunk = link.toUpstream.chunks.last?.bytes, Self.contains(chunk, armed.pattern) else { return }
        lock.withLock {
            cut = nil
            cutsMade += 1
        }
        link.severed = true
        if !armed.forward { link.toUpstream.chunks.removeLast() }
    }

    private static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return false }
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if Array(bytes[start..<start + pattern.count]) == pattern { return true }
        }
        return false
    }

    private func receive(from descriptor: Int32, into direction: inout Direction, due: ContinuousClock.Instant, buffer: inout [UInt8]) {
        let count = read(descriptor, &buffer, buffer.count)
        if count > 0 {
            direction.chunks.append((due, Array(buffer[0..<count])))
        } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
            direction.readerClosed = true
        }
    }

    /// Writes the due chunks (as much as the socket takes); passes on an end of stream once all is written.
    private func deliver(_ direction: inout Direction, to descriptor: Int32, now: ContinuousClock.Instant, link: Link) {
        while let first = direction.chunks.first, first.due <= now {
            let left = first.bytes.count - direction.sentOfFirst
            // MSG_NOSIGNAL: a peer that reset must not end the test process with SIGPIPE.
            let written = first.bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + direction.sentOfFirst, left, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EAGAIN || errno == EINTR {
                    direction.blocked = errno == EAGAIN
                    return
                }
                link.closed = true
                return
            }
            direction.blocked = false
            direction.sentOfFirst += written
            guard direction.sentOfFirst == first.bytes.count else { return }
            direction.chunks.removeFirst()
            direction.sentOfFirst = 0
        }
        // A severed connection's end does not reach the server either (a partition carries no FIN).
        if direction.chunks.isEmpty && direction.readerClosed && !direction.writerShutDown && !link.severed {
            shutdown(descriptor, Int32(SHUT_WR))
            direction.writerShutDown = true
        }
    }

    /// Closes both sockets with a reset (SO_LINGER 0).
    private func reset(_ link: Link) {
        var linger = linger(l_onoff: 1, l_linger: 0)
        for descriptor in [link.client, link.upstream] {
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            close(descriptor)
        }
        link.closed = true
        link.socketsClosed = true
    }

    private func connectUpstream() throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ProxyError("socket: \(String(cString: strerror(errno)))") }
        var address = try Self.address(upstreamHost, upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw ProxyError("connect \(upstreamHost):\(upstreamPort): \(String(cString: strerror(errno)))")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        return descriptor
    }

    private static func address(_ host: String, _ port: UInt16) throws -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw ProxyError("not an IPv4 address: \(host)") }
        return address
    }

    public struct ProxyError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
