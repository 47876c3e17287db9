import Foundation

/// Waits until `condition` holds, polling every 5 ms; throws after 20 s (a condition, never a fixed
/// sleep, decides the outcome).
func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while try !condition() {
        if ContinuousClock.now > deadline { throw WaitTimedOut(what: what) }
        Thread.sleep(forTimeInterval: 0.005)
    }
}

struct WaitTimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}
