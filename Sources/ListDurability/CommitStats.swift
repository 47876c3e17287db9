/// The commit pipeline's counters for `stats` (the recovery's are `RecoveryStateMachine`'s).
package struct CommitStats: Sendable {
    /// Groups written (one transaction each), and the records and mutations they held.
    package var groupsWritten = 0
    package var recordsWritten = 0
    package var mutationsWritten = 0
    package var checkpointsWritten = 0
    /// Time the writer spent in transactions, and the time mutations waited to be durable (summed).
    package var writeTime = Duration.zero
    package var waitTime = Duration.zero

    package init() {}
}
