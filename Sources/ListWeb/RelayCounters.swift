import Synchronization

/// listweb's own counters, for `/metrics`: pages connected, lines relayed, requests refused, pages refused when full.
public final class RelayCounters: Sendable {
    private let state = Mutex(State())

    struct State {
        var open = 0
        var opened = 0
        var lines = 0
        var bytes = 0
        var refused = 0
        /// Pages refused because `limit` were open (`--max-pages`).
        var refusedPages = 0
    }

    public init() {}

    /// Counts a new page unless `limit` pages are open already (then false: the page is refused).
    func open(limit: Int) -> Bool {
        state.withLock { state in
            guard state.open < limit else { state.refusedPages += 1; return false }
            state.open += 1
            state.opened += 1
            return true
        }
    }
    /// Whether a new page would be refused now (then counted as refused).
    func refusesPage(limit: Int) -> Bool {
        state.withLock { state in
            guard state.open >= limit else { return false }
            state.refusedPages += 1
            return true
        }
    }
    func closed() { state.withLock { $0.open -= 1 } }
    func relayed(lines: Int, bytes: Int) { state.withLock { $0.lines += lines; $0.bytes += bytes } }
    func refused() { state.withLock { $0.refused += 1 } }

    var snapshot: State { state.withLock { $0 } }
}
