import CellCore
import DiffableCore
import ListWire
import NIOCore

/// A connected plugin: the content configuration types it provides and the configure requests it has
/// not answered yet. Confined to the event loop.
final class PluginSession {
    let name: String
    let types: [String]
    unowned let connection: ConnectionHandler
    let connectedAt = ContinuousClock.now

    /// A configure request in flight: what to call with the answer, and its deadline timer.
    struct Pending {
        var cells: [String]
        var sentAt: ContinuousClock.Instant
        var timer: Scheduled<Void>?
        var complete: ([String: JSONValue]?) -> Void
    }

    private(set) var pending: [Int: Pending] = [:]
    /// Requests that timed out recently: a late answer to one is dropped quietly.
    private var timedOut: [Int] = []
    private var nextRequest = 1

    // Counters for `stats`.
    var requests = 0
    var cellsRequested = 0
    var timeouts = 0
    var errors = 0
    var latencies: [Double] = []  // milliseconds, the most recent 1,024

    init(name: String, types: [String], connection: ConnectionHandler) {
        self.name = name
        self.types = types
        self.connection = connection
    }

    /// Sends a configure request for the cells `ids` (`writeCells` writes each as the object the protocol
    /// describes, into the `cells` array) and calls `complete` with the answers by cell id, or with `nil`
    /// when the deadline passes first.
    func configure(
        ids: [String], writeCells: (inout JSONWriter) -> Void, deadline: TimeAmount, eventLoop: EventLoop,
        complete: @escaping ([String: JSONValue]?) -> Void
    ) {
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
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let timer = eventLoop.scheduleTask(in: deadline) { bound.value.expire(request) }
        pending[request] = Pending(cells: ids, sentAt: .now, timer: timer, complete: complete)
        connection.sendEvent(writer.bytes)
    }

    private func expire(_ request: Int) {
        guard let entry = pending.removeValue(forKey: request) else { return }
        timeouts += 1
        timedOut.append(request)
        if timedOut.count > 1_024 { timedOut.removeFirst(timedOut.count - 1_024) }
        entry.complete(nil)
    }

    enum Answer {
        case delivered
        /// An answer to a request that already timed out: dropped.
        case late
        /// An answer to a request never sent: a protocol violation.
        case unknown
    }

    /// Delivers the plugin's answer to a request.
    func answer(_ request: Int, cells: [String: JSONValue]) -> Answer {
        guard let entry = pending.removeValue(forKey: request) else {
            return timedOut.contains(request) ? .late : .unknown
        }
        entry.timer?.cancel()
        latencies.append(Double((ContinuousClock.now - entry.sentAt).components.attoseconds) / 1e15)
        if latencies.count > 1_024 { latencies.removeFirst(latencies.count - 1_024) }
        entry.complete(cells)
        return .delivered
    }

    /// The plugin went away: every request in flight fails at once.
    func failAll() {
        let all = pending
        pending = [:]
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
