import Synchronization

/// listweb's own counters, for `/metrics`: pages connected, lines relayed, requests refused.
public final class RelayCounters: Sendable {
    private let state = Mutex(State())

    struct State {
        var open = 0
        var opened = 0
        var lines = 0
        var bytes = 0
        var refused = 0
    }

    public init() {}

    func opened() { state.withLock { $0.open += 1; $0.opened += 1 } }
    func closed() { state.withLock { $0.open -= 1 } }
    func relayed(lines: Int, bytes: Int) { state.withLock { $0.lines += lines; $0.bytes += bytes } }
    func refused() { state.withLock { $0.refused += 1 } }

    var snapshot: State { state.withLock { $0 } }
}
