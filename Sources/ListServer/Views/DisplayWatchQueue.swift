import ListWire
import NIOCore

/// What one connection watching a data source's display signals (`watchDisplay`) has not been sent yet.
///
/// Events wait here, rather than in the connection's output, while the connection's output is above
/// `maxOutputBytes` (its channel is not writable: the peer reads slowly or not at all), so that
/// repeated signals merge while unsent: a `display` entry per view gathers every item its view will
/// display and prefetches, each item once, until it is sent. `didReorder` events wait in order with
/// them. What waits here and the connection's unsent output together are bounded by
/// `maxViewQueueBytes` (see `DisplaySignals`). Confined to the event loop.
final class DisplayWatchQueue {
    weak var connection: ConnectionHandler?

    /// One view's signals not sent yet: each list at most `maximumItemsPerEvent` items and
    /// `maximumItemBytesPerEvent` bytes of identifiers; the signals left out are counted in `more`.
    private struct ViewSignals {
        var willDisplay: [String] = []
        var prefetch: [String] = []
        var willDisplayBytes = 0
        var prefetchBytes = 0
        /// The items listed (each list at most once): what dedups repeated signals.
        var listedWillDisplay = Set<String>()
        var listedPrefetch = Set<String>()
        var more = 0

        /// Lists `item` unless it is listed already; past the list's bounds, counts it in `more`.
        /// Returns whether it was listed.
        mutating func add(_ item: String, bytes: Int, isPrefetch: Bool) -> Bool {
            if isPrefetch {
                guard !listedPrefetch.contains(item) else { return false }
                guard prefetch.count < DisplaySignals.maximumItemsPerEvent, prefetchBytes + bytes <= DisplaySignals.maximumItemBytesPerEvent else {
                    more += 1
                    return false
                }
                listedPrefetch.insert(item)
                prefetch.append(item)
                prefetchBytes += bytes
            } else {
                guard !listedWillDisplay.contains(item) else { return false }
                guard willDisplay.count < DisplaySignals.maximumItemsPerEvent, willDisplayBytes + bytes <= DisplaySignals.maximumItemBytesPerEvent else {
                    more += 1
                    return false
                }
                listedWillDisplay.insert(item)
                willDisplay.append(item)
                willDisplayBytes += bytes
            }
            return true
        }
    }

    private enum Entry {
        /// The signals of a view, gathered in `views` until sent.
        case display(String)
        /// An event line that does not merge (didReorder).
        case event([UInt8])
    }

    private var views: [String: ViewSignals] = [:]
    private var entries: [Entry] = []
    private var nextEntry = 0
    /// About the bytes the waiting entries make on the wire.
    private(set) var heldBytes = 0

    init(connection: ConnectionHandler) { self.connection = connection }

    var isEmpty: Bool { nextEntry == entries.count }

    /// The bytes an identifier adds to an event's list (quotes, comma; escapes are rare).
    private static func listBytes(_ item: String) -> Int { item.utf8.count + 3 }

    /// Adds `view`'s signals, merging them with those of the view that wait.
    func note(view: String, items: [String], prefetch: Bool, rateLimited: Bool) {
        if views[view] == nil {
            views[view] = ViewSignals()
            entries.append(.display(view))
            heldBytes += 96 + view.utf8.count
        }
        if rateLimited {
            views[view]!.more += items.count
            return
        }
        for item in items {
            let bytes = Self.listBytes(item)
            let added = views[view]!.add(item, bytes: bytes, isPrefetch: prefetch)
            if added { heldBytes += bytes }
        }
    }

    /// Adds an event that is sent as it is, in order with the signals.
    func add(event: [UInt8]) {
        entries.append(.event(event))
        heldBytes += event.count + 1
    }

    /// Forgets everything waiting.
    func clear() {
        views = [:]
        entries = []
        nextEntry = 0
        heldBytes = 0
    }

    /// Whether what waits here and the connection's unsent output pass `limit`.
    func exceeds(_ limit: Int) -> Bool {
        guard let connection, let context = connection.context else { return false }
        if heldBytes > limit { return true }
        return connection.channelMayHold(atLeast: limit - heldBytes + 1 - (connection.pending?.readableBytes ?? 0), context: context)
    }

    /// Sends the entries in order while the connection's output is below `maxOutputBytes` (its channel
    /// is writable); returns whether some still wait.
    func deliver(dataSource: String) -> Bool {
        guard let connection, let context = connection.context, !connection.closing else {
            clear()
            return false
        }
        while nextEntry < entries.count, context.channel.isWritable, !connection.closing {
            let entry = entries[nextEntry]
            nextEntry += 1
            switch entry {
            case .event(let bytes):
                heldBytes -= bytes.count + 1
                connection.sendEvent(bytes)
            case .display(let view):
                guard let signals = views.removeValue(forKey: view) else { continue }
                heldBytes -= 96 + view.utf8.count + signals.willDisplayBytes + signals.prefetchBytes
                connection.sendEvent(
                    DisplaySignals.event(
                        dataSource: dataSource, view: view, willDisplay: signals.willDisplay, prefetch: signals.prefetch, more: signals.more))
            }
        }
        if nextEntry == entries.count {
            entries.removeAll(keepingCapacity: entries.count <= 64)
            nextEntry = 0
            heldBytes = 0
        } else if nextEntry > 64, nextEntry * 2 > entries.count {
            entries.removeFirst(nextEntry)
            nextEntry = 0
        }
        return !isEmpty && !connection.closing
    }
}
