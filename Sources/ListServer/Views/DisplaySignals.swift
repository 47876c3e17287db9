import ListEngine
import ListWire
import Logging
import NIOCore

/// What a data source's views display and are about to display, for the connections that watch it
/// (`watchDisplay`): UIKit's `willDisplay` (every cell a view dequeues) and `prefetchItemsAt` (what a
/// view reports with `prefetch`), as `display` events, and the owner's `didReorder` events.
///
/// Each watcher has a queue of its own (`DisplayWatchQueue`): a view's signals merge there until they
/// are sent (at the end of the loop's turn, or once a watcher that reads slowly has drained its
/// output), each list bounded (`maximumItemsPerEvent` items, `maximumItemBytesPerEvent` bytes; the
/// rest counted in `more`), so an event is at most about twice that however large the requests. What a
/// watcher's queue holds plus its unsent output may not pass `maxViewQueueBytes`: past it the watcher
/// gets `{"event": "overflow", "dataSource", "watch": "display", "limit"}` and stops watching (its
/// connection stays open; `watchDisplay` again starts over from what the views show). Views signal at
/// most `maxDisplaySignalsPerViewPerSecond` times a second (`DisplaySignalRates`). Nothing is kept
/// while no one watches. Confined to the event loop.
final class DisplaySignals {
    /// The most item identifiers one list of an event carries.
    static let maximumItemsPerEvent = 1_000
    /// The most bytes of item identifiers one list of an event carries.
    static let maximumItemBytesPerEvent = 64 << 10

    private var watchers: [ObjectIdentifier: DisplayWatchQueue] = [:]
    private var rates = DisplaySignalRates()
    private var flushScheduled = false
    /// The data source's name, for the events (set by the first signal or watch).
    private var dataSource = ""
    /// Where a watcher that fell behind is logged (the server's, from the last watch).
    private var logger: Logger?

    /// Whether anyone watches (signals cost nothing otherwise).
    var isWatched: Bool { !watchers.isEmpty }

    /// Starts sending `connection` the signals of `dataSource`, first what its views show now
    /// (`current`: per view, the items displayed, in order). What waits for it is charged to its user in
    /// `accounts`, and bounded by `viewQueueLimit` (`maxViewQueueBytes`).
    func watch(
        _ connection: any ViewConnection, dataSource: String, current: [(view: String, items: [String])], accounts: UserAccounts,
        viewQueueLimit: Int, logger: Logger
    ) {
        pruneClosed()
        self.dataSource = dataSource
        self.logger = logger
        let queue = watchers[ObjectIdentifier(connection)] ?? DisplayWatchQueue(connection: connection, accounts: accounts)
        watchers[ObjectIdentifier(connection)] = queue
        for (view, items) in current where !items.isEmpty { queue.note(view: view, items: items, prefetch: false, rateLimited: false) }
        if !queue.isEmpty { enforceLimit(on: queue, viewQueueLimit) }
    }

    /// Stops `connection` watching; returns whether it did.
    @discardableResult
    func unwatch(_ connection: any ViewConnection) -> Bool {
        guard let queue = watchers.removeValue(forKey: ObjectIdentifier(connection)) else { return false }
        queue.clear()
        return true
    }

    /// Stops the watchers `stillAllowed` says no longer may (the policy changed).
    func keepWatchers(where stillAllowed: (any ViewConnection) -> Bool) {
        watchers = watchers.filter { $0.value.connection.map(stillAllowed) ?? false }
    }

    /// Sends an owner's event (`didReorder`) to every watcher still there, in order with the signals
    /// (`viewQueueLimit`: `maxViewQueueBytes` now).
    func send(_ event: [UInt8], viewQueueLimit: Int) {
        pruneClosed()
        for queue in Array(watchers.values) {
            queue.add(event: event)
            enforceLimit(on: queue, viewQueueLimit)
        }
        deliverHeld()
    }

    /// Takes one signal from `view`'s allowance (`maxDisplaySignalsPerViewPerSecond`): nil when it may
    /// signal, else the milliseconds until it may again.
    func admitSignal(view: String, perSecond: Int) -> Int? {
        rates.admit(view: view, perSecond: perSecond, now: .now())
    }

    /// Forgets watchers whose connection is gone or closing.
    private func pruneClosed() {
        watchers = watchers.filter { $0.value.connection.map { !$0.isClosing } ?? false }
    }

    /// Notes that `view` will display `items` (it dequeued their cells), or (`prefetch`) is about to.
    /// A dequeue past its view's signal rate (`perSecond`, `maxDisplaySignalsPerViewPerSecond`) is counted
    /// in `more` only (a prefetch past it was refused). `viewQueueLimit` is `maxViewQueueBytes` now.
    func note(
        view: String, items: [String], prefetch: Bool, dataSource: String, eventLoop: EventLoop?, perSecond: Int, viewQueueLimit: Int
    ) {
        guard isWatched, !items.isEmpty else { return }
        self.dataSource = dataSource
        let rateLimited = !prefetch && admitSignal(view: view, perSecond: perSecond) != nil
        for queue in Array(watchers.values) {
            queue.note(view: view, items: items, prefetch: prefetch, rateLimited: rateLimited)
            enforceLimit(on: queue, viewQueueLimit)
        }
        guard !flushScheduled, let eventLoop else { return }
        flushScheduled = true
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute {
            bound.value.flushScheduled = false
            bound.value.deliverHeld()
        }
    }

    /// Sends every watcher what waits for it while its output is below `maxOutputBytes`; the watchers
    /// whose output is above it keep theirs (merging) until it drains (`ViewConnection.resumeWhenWritable`).
    func deliverHeld() {
        pruneClosed()
        for queue in Array(watchers.values) where !queue.isEmpty {
            guard queue.deliver(dataSource: dataSource), let connection = queue.connection else { continue }
            connection.resumeWhenWritable(self)
        }
    }

    /// Stops the watch of `queue`'s connection with `overflow` when what waits for it and its unsent
    /// output pass `limit` (`maxViewQueueBytes`).
    private func enforceLimit(on queue: DisplayWatchQueue, _ limit: Int) {
        guard let connection = queue.connection else { return }
        guard queue.exceeds(limit) else { return }
        let held = queue.heldBytes
        unwatch(connection)
        logger?.warning(
            "display watch fell behind; stopping it",
            metadata: [
                "connection": "\(connection.id)", "user": "\(connection.identity.displayName)", "dataSource": "\(dataSource)",
                "heldBytes": "\(held)", "maxViewQueueBytes": "\(limit)",
            ])
        connection.sendEvent(ViewEvent.displayWatchOverflow(dataSource: dataSource, limit: limit))
    }
}
