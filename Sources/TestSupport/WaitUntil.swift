#if canImport(Glibc)
    import Glibc
#endif

/// Waits until `condition` holds, polling every 5 ms; throws `WaitTimedOut` after `timeout` (a condition,
/// never a fixed sleep, decides the outcome). For tests whose events happen on other threads.
public func waitUntil(_ what: String, timeout: Duration = .seconds(20), _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        if ContinuousClock.now > deadline { throw WaitTimedOut(what: what) }
        usleep(5_000)
    }
}

/// A condition `waitUntil` waited for did not come.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "timed out waiting for \(what)" }
}
