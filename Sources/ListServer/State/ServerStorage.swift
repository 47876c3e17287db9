import ListDurability
import NIOPosix

/// What a server with a store keeps of it: the opened state directory or database, the pipeline that
/// writes committed changes, the follower of other instances sharing the store, and the thread large
/// requests are prepared on. Empty with `--ephemeral` (but for the thread) and in process.
package struct ServerStorage {
    /// The opened state directory and store (none with `--ephemeral`).
    var opened: OpenedStorage?
    /// Writes committed changes to the store (none with `--ephemeral`).
    package var pipeline: CommitPipeline?
    /// Follows the other instances sharing the store (PostgreSQL only).
    var follower: StoreFollower?
    /// The thread large requests are decoded and prepared on (see LargeRequests.swift); none in process.
    var largeRequests: NIOThreadPool?
    /// Replies held until their changes are durable, in the changes' order.
    var durableReplies = DurableReplies()
}

/// Holds a value until `drop()` (a large snapshot, so that the thread that drops it frees it).
final class Releasing<Value>: @unchecked Sendable {
    private var value: Value?

    init(_ value: Value) { self.value = value }

    func drop() { value = nil }
}

extension ServerState {
    /// Frees what `box` holds on the large-request thread (here at once when there is none): freeing a
    /// replaced 1M-item snapshot takes time the loop need not spend.
    func releaseOffLoop<Value>(_ box: Releasing<Value>) {
        guard let pool = storage.largeRequests else { return box.drop() }
        pool.submit { _ in box.drop() }
    }
}
