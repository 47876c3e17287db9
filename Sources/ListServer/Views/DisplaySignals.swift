import ListWire
import NIOCore

/// What a data source's views display and are about to display, for the connections that watch it
/// (`watchDisplay`): UIKit's `willDisplay` (every cell a view dequeues) and `prefetchItemsAt` (what a
/// view reports with `prefetch`), as `display` events. Signals of one event-loop turn are coalesced per
/// view into one event; each list is bounded (`maximumItemsPerEvent`, the rest counted in `more`).
/// Nothing is kept while no one watches. Confined to the event loop.
final class DisplaySignals {
    /// The most item identifiers one list of an event carries.
    static let maximumItemsPerEvent = 1_000

    private struct Watcher {
        weak var connection: ConnectionHandler?
    }

    private struct Pending {
        var willDisplay: [String] = []
        var prefetch: [String] = []
        var seen = Set<String>()
        var prefetchSeen = Set<String>()
        var more = 0
    }

    private var watchers: [ObjectIdentifier: Watcher] = [:]
    private var pending: [String: Pending] = [:]
    private var viewOrder: [String] = []
    private var flushScheduled = false

    /// Whether anyone watches (signals cost nothing otherwise).
    var isWatched: Bool { !watchers.isEmpty }

    func watch(_ connection: ConnectionHandler) {
        pruneClosed()
        watchers[ObjectIdentifier(connection)] = Watcher(connection: connection)
    }

    /// Stops `connection` watching; returns whether it did.
    @discardableResult
    func unwatch(_ connection: ConnectionHandler) -> Bool { watchers.removeValue(forKey: ObjectIdentifier(connection)) != nil }

    /// Stops the watchers `stillAllowed` says no longer may (the policy changed).
    func keepWatchers(where stillAllowed: (ConnectionHandler) -> Bool) {
        watchers = watchers.filter { $0.value.connection.map(stillAllowed) ?? false }
    }

    /// Sends an owner's event (`didReorder`) to every watcher still there.
    func send(_ event: [UInt8]) {
        pruneClosed()
        for watcher in watchers.values { watcher.connection?.sendEvent(event) }
    }

    /// Forgets watchers whose connection is gone or closing.
    private func pruneClosed() {
        watchers = watchers.filter { $0.value.connection.map { !$0.closing } ?? false }
    }

    /// The `display` event of one view's signals.
    static func event(dataSource: String, view: String, willDisplay: [String], prefetch: [String], more: Int = 0) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.key("event")
        writer.string("display")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("view")
        writer.string(view)
        writer.key("willDisplay")
        writer.strings(willDisplay)
        writer.key("prefetch")
        writer.strings(prefetch)
        if more > 0 {
            writer.key("more")
            writer.int(more)
        }
        writer.endObject()
        return writer.bytes
    }

    /// Notes that `view` will display `items` (it dequeued their cells), or (`prefetch`) is about to.
    func note(view: String, items: [String], prefetch: Bool, dataSource: String, eventLoop: EventLoop?) {
        guard isWatched, !items.isEmpty else { return }
        if pending[view] == nil { viewOrder.append(view) }
        var signals = pending[view] ?? Pending()
        for item in items {
            if prefetch {
                guard signals.prefetchSeen.insert(item).inserted else { continue }
                if signals.prefetch.count < Self.maximumItemsPerEvent { signals.prefetch.append(item) } else { signals.more += 1 }
            } else {
                guard signals.seen.insert(item).inserted else { continue }
                if signals.willDisplay.count < Self.maximumItemsPerEvent { signals.willDisplay.append(item) } else { signals.more += 1 }
            }
        }
        pending[view] = signals
        guard !flushScheduled, let eventLoop else { return }
        flushScheduled = true
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute { bound.value.flush(dataSource: dataSource) }
    }

    /// Sends what was noted since the last flush, one event per view, to every watcher still there.
    private func flush(dataSource: String) {
        flushScheduled = false
        let views = viewOrder
        let signals = pending
        viewOrder.removeAll()
        pending.removeAll()
        pruneClosed()
        guard !watchers.isEmpty else { return }
        for view in views {
            guard let noted = signals[view] else { continue }
            let event = Self.event(dataSource: dataSource, view: view, willDisplay: noted.willDisplay, prefetch: noted.prefetch, more: noted.more)
            for watcher in watchers.values { watcher.connection?.sendEvent(event) }
        }
    }
}
