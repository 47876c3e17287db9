import CellCore
import DiffableCore
import ListWire
import NIOCore

/// A connected plugin: the content configuration types it provides and the configure requests it has
/// not answered yet. Confined to the event loop.
///
/// The requests a plugin has not answered are bounded: those in flight and those that timed out but
/// were never answered (a plugin answers every request, late ones too) count toward
/// `maxPluginPendingRequests`, and their bytes toward `maxOutputBytesHard`. A plugin past either is
/// unhealthy (it does not read, or reads and never answers): it is disconnected, its cells fail with
/// `plugin-unavailable`, and listd holds nothing more for it.
final class PluginSession {
    let name: String
    let types: [String]
    unowned let connection: any PluginConnection
    /// The registry holding this session under its types (it leaves it when it closes). Owned by the
    /// server state, which every connection holds, so it outlives the session.
    unowned let registry: PluginRegistry
    let connectedAt = ContinuousClock.now

    /// A configure request in flight: what to call with the answer, and its deadline timer.
    struct Pending {
        var cells: [String]
        var sentAt: ContinuousClock.Instant
        var timer: Scheduled<Void>?
        var complete: ([String: JSONValue]?) -> Void
        /// The request's size on the wire.
        var bytes: Int
    }

    private(set) var pending: [Int: Pending] = [:]
    /// Requests that timed out and were not answered yet, with their sizes: a late answer to one is
    /// dropped quietly (and no longer counts).
    private var timedOut: [Int: Int] = [:]
    private var nextRequest = 1
    /// Bytes of the requests in `pending` and `timedOut`.
    private(set) var unansweredBytes = 0
    /// Set once the plugin was found broken or unhealthy: it gets no more requests.
    private(set) var isClosed = false

    // Counters for `stats`.
    var requests = 0
    var cellsRequested = 0
    var timeouts = 0
    var errors = 0
    var latencies: [Double] = []  // milliseconds, the most recent 1,024

    init(name: String, types: [String], connection: any PluginConnection, registry: PluginRegistry) {
        self.name = name
        self.types = types
        self.connection = connection
        self.registry = registry
    }

    /// Requests sent and not answered (in flight, or timed out and never answered).
    var unansweredRequests: Int { pending.count + timedOut.count }

    /// Sends a configure request for the cells `ids` (`writeCells` writes each as the object the protocol
    /// describes, into the `cells` array) and calls `complete` with the answers by cell id, with `nil`
    /// when the deadline passes first, or with no answers (`[:]`) when the plugin is gone or was
    /// disconnected for holding too many unanswered requests (`limits`).
    func configure(
        ids: [String], writeCells: (inout JSONWriter) -> Void, deadline: TimeAmount, limits: (requests: Int, bytes: Int),
        eventLoop: EventLoop, complete: @escaping ([String: JSONValue]?) -> Void
    ) {
        guard !isClosed else {
            complete([:])
            return
        }
        let request = nextRequest
        nextRequest += 1
        requests += 1
        cellsRequested += ids.count
        var writer = JSONWriter(capacity: 256 * ids.count)
        writer.beginObject()
        writer.key("event")
        writer.string("configure")
        writer.key("request")
        writer.int(request)
        writer.key("cells")
        writer.beginArray()
        writeCells(&writer)
        writer.endArray()
        writer.endObject()
        let size = writer.bytes.count + 1
        if unansweredRequests + 1 > limits.requests || unansweredBytes + size > limits.bytes {
            close(
                restart: true, reason: "unhealthy: \(unansweredRequests) configure requests (\(unansweredBytes) bytes) not answered; "
                    + "limits \(limits.requests) requests, \(limits.bytes) bytes")
            complete([:])
            return
        }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let timer = eventLoop.scheduleTask(in: deadline) { bound.value.expire(request) }
        pending[request] = Pending(cells: ids, sentAt: .now, timer: timer, complete: complete, bytes: size)
        unansweredBytes += size
        connection.sendLine(writer.bytes)
    }

    private func expire(_ request: Int) {
        guard let entry = pending.removeValue(forKey: request) else { return }
        timeouts += 1
        timedOut[request] = entry.bytes
        entry.complete(nil)
    }

    enum Answer {
        case delivered
        /// An answer to a request that already timed out: dropped.
        case late
        /// An answer to a request never sent (or answered already): a protocol violation.
        case unknown
    }

    /// Delivers the plugin's answer to a request.
    func answer(_ request: Int, cells: [String: JSONValue]) -> Answer {
        guard let entry = pending.removeValue(forKey: request) else {
            guard let bytes = timedOut.removeValue(forKey: request) else { return .unknown }
            unansweredBytes -= bytes
            return .late
        }
        unansweredBytes -= entry.bytes
        entry.timer?.cancel()
        latencies.append(Double((ContinuousClock.now - entry.sentAt).components.attoseconds) / 1e15)
        if latencies.count > 1_024 { latencies.removeFirst(latencies.count - 1_024) }
        entry.complete(cells)
        return .delivered
    }

    /// The plugin broke the protocol or is unhealthy: it provides nothing from now on (its types are
    /// free for another plugin at once), every request in flight fails, and the connection closes
    /// with `reason` logged. With `restart`, a supervised plugin's process is restarted too (a plugin
    /// that stopped reading may never notice its connection closed).
    func close(restart: Bool = false, reason: String) {
        guard !isClosed else { return }
        isClosed = true
        for type in types where registry.byType[type] === self { registry.byType[type] = nil }
        registry.logger.error("plugin \"\(name)\" disconnected: \(reason)", metadata: ["plugin": "\(name)"])
        connection.disconnect(reason: reason)
        failAll()
        if restart {
            let pid = connection.identity.pid
            registry.supervisor?.restart(peer: pid, reason: "plugin \(name): \(reason)", grace: registry.stopGrace)
        }
    }

    /// The plugin went away: every request in flight fails at once.
    func failAll() {
        let all = pending
        pending = [:]
        timedOut = [:]
        unansweredBytes = 0
        for (_, entry) in all {
            entry.timer?.cancel()
            entry.complete([:])
        }
    }

    func percentile(_ fraction: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        let sorted = latencies.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
}
