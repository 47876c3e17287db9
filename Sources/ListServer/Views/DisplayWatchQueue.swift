import ListEngine
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
    weak var connection: (any ViewConnection)?

    /// One view's signals not sent yet: each list at most `maximumItemsPerEvent` items and
    /// `maximumItemBytesPerEvent` bytes of identifiers; the signals left out are counted in `more`.
    private struct ViewSignals {
        var willDisplay = SignalList()
        var prefetch = SignalList()
        var more = 0

        /// Lists `item` unless it is listed already; past the list's bounds, counts it in `more`.
        /// Returns whether it was listed.
        mutating func add(_ item: String, bytes: Int, isPrefetch: Bool) -> Bool {
            let (listed, counted) = isPrefetch ? prefetch.add(item, bytes: bytes) : willDisplay.add(item, bytes: bytes)
            if !counted { more += 1 }
            return listed
        }
    }

    /// One list of an event: its items in order, each once, and their bytes.
    private struct SignalList {
        var items: [String] = []
        var bytes = 0
        /// The items listed: what dedups repeated signals.
        var listed = Set<String>()

        /// Lists `item` unless listed (`listed`); `counted` is false when the list is full (`more` counts it).
        mutating func add(_ item: String, bytes: Int) -> (listed: Bool, counted: Bool) {
            guard !listed.contains(item) else { return (false, true) }
            guard items.count < DisplaySignals.maximumItemsPerEvent, self.bytes + bytes <= DisplaySignals.maximumItemBytesPerEvent else {
                return (false, false)
            }
            listed.insert(item)
            items.append(item)
            self.bytes += bytes
            return (true, true)
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
    /// About the bytes the waiting entries make on the wire, charged to the watcher's account (`queues`).
    private(set) var heldBytes = 0 {
        didSet { accounts.charge(holder, .queues, heldBytes - oldValue) }
    }
    /// The account what waits here is charged to (kept: the connection may go before the queue).
    private let accounts: UserAccounts
    private let holder: AccountHolder

    init(connection: any ViewConnection, accounts: UserAccounts) {
        self.connection = connection
        self.accounts = accounts
        holder = connection.accountHolder
    }

    deinit { accounts.charge(holder, .queues, -heldBytes) }

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
        guard let connection, connection.eventLoop != nil else { return false }
        if heldBytes > limit { return true }
        return connection.mayHoldOutput(atLeast: limit - heldBytes + 1)
    }

    /// Sends the entries in order while the connection's output is below `maxOutputBytes` (its channel
    /// is writable); returns whether some still wait.
    func deliver(dataSource: String) -> Bool {
        guard let connection, connection.eventLoop != nil, !connection.isClosing else {
            clear()
            return false
        }
        while nextEntry < entries.count, connection.isWritable, !connection.isClosing {
            let entry = entries[nextEntry]
            nextEntry += 1
            switch entry {
            case .event(let bytes):
                heldBytes -= bytes.count + 1
                connection.sendEvent(bytes)
            case .display(let view):
                guard let signals = views.removeValue(forKey: view) else { continue }
                heldBytes -= 96 + view.utf8.count + signals.willDisplay.bytes + signals.prefetch.bytes
                connection.sendEvent(
                    ViewEvent.display(
                        dataSource: dataSource, view: view, willDisplay: signals.willDisplay.items, prefetch: signals.prefetch.items, more: signals.more))
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
        return !isEmpty && !connection.isClosing
    }
}
