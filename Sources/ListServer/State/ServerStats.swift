import NIOCore

/// listd's counters: what `stats` reports (and listweb's `/metrics` exports from it). Pure: written by
/// the parts that count (the router, connections, the accept path), read by `stats`.
struct ServerStats {
    let startedAt = ContinuousClock.now
    /// Requests by the command's position in `CommandRouter.commandOrder`.
    private var commandCounters: [Int] = []
    /// Error replies by error code.
    var errorCounts: [String: Int] = [:]
    var connectionsAccepted = 0
    /// Connections closed at accept: over `maxConnections`, or a user's `maxConnectionsPerUser`.
    var connectionsRefused = 0
    /// Connections closed because the output held for peers that do not read passed `maxOutputBytesTotal`.
    var connectionsClosedForHeldOutput = 0
    var viewsOverflowed = 0
    var eventsSent = 0
    /// Requests refused with `permission-denied`, and by a per-user quota (connections included).
    var permissionDenials = 0
    var quotaRefusals = 0
    /// Identical registers one connection repeated past `RegistrationRepeats.allowed` (the seeds' pitfall).
    var registrationsRepeated = 0
    /// When a refused connection was last logged, and how many were not since (see `logRefusal`).
    var lastRefusalLogged: NIODeadline?
    var refusalsNotLogged = 0

    /// Counts a request of the command at `index` of `CommandRouter.commandOrder`.
    mutating func countCommand(_ index: Int) {
        if index >= commandCounters.count { commandCounters += Array(repeating: 0, count: index + 1 - commandCounters.count) }
        commandCounters[index] += 1
    }

    /// Requests per command name (`names`: the commands in counter order).
    func commandCounts(names: [String]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for (index, count) in commandCounters.enumerated() where count > 0 && index < names.count { counts[names[index]] = count }
        return counts
    }
}
