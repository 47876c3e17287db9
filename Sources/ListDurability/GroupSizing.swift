/// How long the writer lets the next group grow before it writes it: group commit's *commit delay*
/// (PostgreSQL's `commit_delay`), sized from the group just written.
///
/// Without it the writer takes whatever is open the moment a write ends. Under a steady load of
/// clients that each wait for their reply (50 connections, one request in flight) that splits them
/// into small groups (16 on average on the reference machine): every group costs an fsync, about
/// 100 µs of CPU in the kernel, so the disk's CPU per change is several times what a change costs in
/// memory. The clients of a group just written come back once their replies are out, so the writer
/// waits for them: for the next group to reach `target` mutations, at most until `deadline`.
///
/// - `target` is `growth` times the group just written, but never more than what can come back:
///   what was added during the write plus the group just written. So one client's requests, or a
///   few clients' that are all in flight together, never wait: their next group is complete the
///   moment it can be.
/// - `deadline` is the write's end plus its duration (at most `longestWait`), so a wait adds at most
///   one write's time to a request's latency, and only when more than one client writes.
///
/// Measured (`server-benchmarks goals`, 50×1, SQLite with `--sync always`, three runs each, with and
/// without, interleaved): groups of 29 mutations instead of 16, the writer's CPU a third lower, the CPU
/// per durable request 16.3 µs instead of 18.4, throughput 66.7k requests a second instead of 65.2k,
/// and the event loop's involuntary context switches about 300 instead of 11,000 per 100,000 requests;
/// the price is p99 latency, 2.15 ms instead of 1.97.
package struct GroupSizing: Sendable {
    /// How much larger than the group just written the next one may grow while the writer waits.
    package static let growth = 2
    /// The shortest wait, in nanoseconds (0; a test sets it to see a group grow whatever the clock does).
    package let shortestWait: UInt64
    /// The longest a group waits to grow, in nanoseconds (a slow disk's write does not make a long wait).
    package let longestWait: UInt64

    /// The number of mutations the next group waits for (0: it does not wait).
    package private(set) var target = 0
    /// Until when it waits (monotonic nanoseconds).
    package private(set) var deadline: UInt64 = 0

    /// Waits of a write's duration, within `shortestWait...longestWait` nanoseconds.
    package init(shortestWait: UInt64 = 0, longestWait: UInt64 = 1_000_000) {
        self.shortestWait = shortestWait
        self.longestWait = max(shortestWait, longestWait)
    }

    /// After a write of `written` mutations that took `took` nanoseconds and ended at `now`, while
    /// `open` mutations were added.
    package mutating func written(_ written: Int, took: UInt64, open: Int, now: UInt64) {
        target = min(written * Self.growth, open + written)
        deadline = now + max(shortestWait, min(took, longestWait))
    }

    /// Whether an open group of `open` mutations waits to grow at `now`.
    package func waits(open: Int, now: UInt64) -> Bool {
        open < target && now < deadline
    }

    /// Whether a mutation added to make an open group of `open` mutations should wake a waiting writer.
    package func completes(open: Int) -> Bool {
        open >= target
    }

    /// Stops waiting for the group (the writer found nothing open and sleeps until something is added).
    package mutating func stopWaiting() {
        target = 0
    }
}
