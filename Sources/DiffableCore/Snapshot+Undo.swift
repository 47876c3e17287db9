/// What undoes the changes a snapshot recorded between `beginRecordingUndo()` and
/// `endRecordingUndo()`: the inverse of each change, newest last.
///
/// A server keeps one per change that is not durable yet, so that a failed write is undone in memory,
/// newest change first, without a copy of the snapshot and without reading the store. An undo applies
/// only to the snapshot it was recorded on, and only while every change made after it was undone first.
public struct SnapshotUndo: Sendable {
    var entries: [UndoEntry]

    /// An undo of no changes.
    public init() { entries = [] }

    init(entries: [UndoEntry]) { self.entries = entries }

    /// Whether the recorded changes changed nothing.
    public var isEmpty: Bool { entries.isEmpty }

    /// The number of recorded inverses (about one per item or section touched).
    public var count: Int { entries.count }
}

extension Snapshot {
    /// Starts recording the inverse of every change (edits, batches: everything but assigning another
    /// snapshot). O(1); each change then costs one more entry per item or section it touches.
    ///
    /// - Precondition: not recording already.
    public mutating func beginRecordingUndo() {
        precondition(storage.undoLog == nil, "already recording an undo")
        storage.undoLog = []
    }

    /// Stops recording and returns what undoes the changes made since `beginRecordingUndo()`. O(1).
    public mutating func endRecordingUndo() -> SnapshotUndo {
        defer { storage.undoLog = nil }
        return SnapshotUndo(entries: storage.undoLog ?? [])
    }

    /// Undoes recorded changes: the snapshot becomes what it was when the recording began (the same
    /// sections and items in the same order, with the same payloads). O(entries).
    ///
    /// - Precondition: not recording, and every change made since the recording ended is undone.
    public mutating func undo(_ undo: SnapshotUndo) {
        storage.undo(undo.entries)
    }
}

/// A transaction on a snapshot opened by `Snapshot.beginTransaction()`: ended once, by
/// `commitTransaction(_:)` or `rollBackTransaction(_:)`.
public struct SnapshotTransaction: Sendable {
    fileprivate let mark: UndoMark
}

extension Snapshot {
    /// Opens a transaction whose changes `rollBackTransaction(_:)` undoes (what a batch of edits does
    /// when one of them fails). It nests in an undo recording: the recording keeps what the transaction
    /// kept. O(1); each change then costs one undo entry per item or section it touches.
    public mutating func beginTransaction() -> SnapshotTransaction {
        SnapshotTransaction(mark: storage.beginUndoLog())
    }

    /// Ends a transaction, keeping its changes. O(1).
    public mutating func commitTransaction(_ transaction: SnapshotTransaction) {
        storage.commitUndoLog(transaction.mark)
    }

    /// Ends a transaction, undoing its changes newest first. O(its changes).
    public mutating func rollBackTransaction(_ transaction: SnapshotTransaction) {
        storage.rollBackUndoLog(transaction.mark)
    }
}
