import ListStore

/// The event lines a data source's views were sent for its recent versions, oldest first: what a view
/// that reconnects is sent to catch up (`attach` with `fromVersion`). Bounded by a number of versions
/// and of bytes; a version whose event was too large to keep (or made views reload everything) is kept
/// as a gap, and resuming across it is not possible.
public struct RetainedEvents: Sendable {
    private var entries: [(version: Int, event: [UInt8]?)] = []
    /// Entries before this index are dropped (compacted once they are half the array).
    private var start = 0
    public private(set) var byteCount = 0

    public internal(set) var maximumVersions: Int
    public internal(set) var maximumBytes: Int

    public init(maximumVersions: Int, maximumBytes: Int) {
        self.maximumVersions = maximumVersions
        self.maximumBytes = maximumBytes
    }

    /// Adds the event of `version` (the next one after the newest kept; anything else starts afresh).
    mutating func append(_ version: Int, _ event: [UInt8]?) {
        if let last = entries.last, last.version != version - 1 || start == entries.count { removeAll() }
        entries.append((version, event))
        byteCount += event?.count ?? 0
        while entries.count - start > maximumVersions || (byteCount > maximumBytes && entries.count - start > 1) { dropOldest() }
    }

    /// The events of the versions after `version` up to the newest, in order; `nil` when one of them is
    /// not kept (or `version` is older than what is kept).
    public func events(after version: Int) -> [[UInt8]]? {
        guard let newest = entries.last?.version else { return nil }
        if version == newest { return [] }
        guard start < entries.count, version >= entries[start].version - 1, version < newest else { return nil }
        var events: [[UInt8]] = []
        events.reserveCapacity(newest - version)
        for index in (start + version + 1 - entries[start].version)..<entries.count {
            guard let event = entries[index].event else { return nil }
            events.append(event)
        }
        return events
    }

    /// The oldest version kept (its event, or a gap), `nil` when none is.
    public var oldestVersion: Int? { start < entries.count ? entries[start].version : nil }

    /// Drops the oldest version kept (the owner's account is at its quota): views resuming from before
    /// the next one get the whole snapshot. Returns `false` when nothing is kept.
    @discardableResult
    mutating func dropOldestVersion() -> Bool {
        guard start < entries.count else { return false }
        dropOldest()
        return true
    }

    /// Forgets the versions after `version` (their changes were undone).
    mutating func removeVersions(after version: Int) {
        while entries.count > start, let last = entries.last, last.version > version {
            byteCount -= last.event?.count ?? 0
            entries.removeLast()
        }
    }

    mutating func removeAll() {
        entries = []
        start = 0
        byteCount = 0
    }

    /// The largest event kept; larger ones (a huge `apply`) are gaps, and a view resuming across them
    /// gets the whole snapshot instead.
    public static let maximumEventBytes = 1 << 20

    /// Whether a change surely makes an event over `maximumEventBytes` (so it need not be encoded when
    /// no view is attached).
    public static func tooLarge(_ outcome: ChangeOutcome) -> Bool {
        let entries = outcome.changes.stages.reduce(0) { count, stage in
            count + stage.sectionDeletes.count + stage.sectionInserts.count + stage.sectionMoves.count + stage.sectionReloads.count
                + stage.itemDeletes.count + stage.itemInserts.count + stage.itemMoves.count + stage.itemReloads.count
                + stage.itemReconfigures.count
        }
        return entries > 20_000
    }

    private mutating func dropOldest() {
        byteCount -= entries[start].event?.count ?? 0
        entries[start].event = nil
        start += 1
        if start >= 1_024 && start * 2 >= entries.count {
            entries.removeFirst(start)
            start = 0
        }
    }
}
