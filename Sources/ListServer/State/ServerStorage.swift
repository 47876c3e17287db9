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
}
