import NIOCore

/// How often each view of a data source may signal what it displays (`prefetch` requests, and a
/// dequeue's willDisplay while someone watches): a token bucket per view holding a second's worth,
/// `maxDisplaySignalsPerViewPerSecond`, refilled continuously. Buckets of views that have been quiet
/// long enough to be full are forgotten. Confined to the event loop.
struct DisplaySignalRates {
    private struct Bucket {
        var tokens: Double
        var updated: NIODeadline
    }

    private var buckets: [String: Bucket] = [:]
    /// The number of buckets at which the full ones are forgotten next (amortized O(1) per signal).
    private var pruneAt = 64

    /// Takes one signal from `view`'s allowance of `perSecond` (0: unlimited). Returns nil when it may
    /// signal, else how many milliseconds until it may again.
    mutating func admit(view: String, perSecond: Int, now: NIODeadline) -> Int? {
        guard perSecond > 0 else { return nil }
        let capacity = Double(perSecond)
        var bucket = buckets[view].map { Self.refilled($0, capacity: capacity, now: now) } ?? Bucket(tokens: capacity, updated: now)
        defer {
            buckets[view] = bucket
            if buckets.count >= pruneAt { prune(capacity: capacity, now: now) }
        }
        guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / capacity * 1_000).rounded(.up))) }
        bucket.tokens -= 1
        return nil
    }

    private static func refilled(_ bucket: Bucket, capacity: Double, now: NIODeadline) -> Bucket {
        let elapsed = Double((now - bucket.updated).nanoseconds) / 1e9
        return Bucket(tokens: min(capacity, bucket.tokens + elapsed * capacity), updated: now)
    }

    private mutating func prune(capacity: Double, now: NIODeadline) {
        buckets = buckets.filter { Self.refilled($0.value, capacity: capacity, now: now).tokens < capacity }
        pruneAt = max(64, buckets.count * 2)
    }
}
