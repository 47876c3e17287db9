/// The difference between two snapshots as an ordered list of stages.
///
/// Each stage is one batch with `UICollectionView.performBatchUpdates` semantics:
/// - deletes, reloads and move sources are positions **before** the stage;
/// - inserts, move targets and reconfigures are positions **after** the stage;
/// - everything not deleted or moved keeps its relative order.
///
/// Applying the stages in order (`Snapshot.apply(_:)`) turns the old snapshot into exactly the new one.
/// The diff splits its work into stages the way DifferenceKit does, so that no stage asks a collection
/// view for something it refuses (reloading and moving the same item, moving items out of a section that
/// moves, touching items of a section that is reloaded in the same batch):
///
/// 1. item reloads and reconfigures (old positions; nothing moves);
/// 2. section deletes and item deletes;
/// 3. section inserts (carrying their items) and section moves;
/// 4. item inserts and item moves (also across sections);
/// 5. section reloads.
///
/// Empty stages are left out: two equal snapshots differ by no stage at all.
public struct StagedChanges: Hashable, Sendable {
    /// The batches, in the order they must be performed.
    public var stages: [ChangeStage]

    public init(stages: [ChangeStage] = []) {
        self.stages = stages
    }

    /// Whether there is nothing to do.
    public var isEmpty: Bool { stages.isEmpty }
}

/// One batch of changes; see `StagedChanges` for the coordinates each list uses.
public struct ChangeStage: Hashable, Sendable {
    /// Sections removed, by position before the stage, ascending.
    public var sectionDeletes: [Int] = []
    /// Sections added, by position after the stage, ascending, with their items.
    public var sectionInserts: [SectionInsert] = []
    /// Sections moved, from a position before to a position after the stage.
    public var sectionMoves: [Move<Int>] = []
    /// Sections reloaded (with their new payload), by position before the stage.
    public var sectionReloads: [SectionReload] = []
    /// Items removed, by index path before the stage, ascending.
    public var itemDeletes: [IndexPath] = []
    /// Items added, by index path after the stage, ascending.
    public var itemInserts: [ItemChange] = []
    /// Items moved, from an index path before to an index path after the stage (possibly in another
    /// section).
    public var itemMoves: [Move<IndexPath>] = []
    /// Items reloaded (a new cell), by index path before the stage, with their new payload.
    public var itemReloads: [ItemChange] = []
    /// Items reconfigured (the same cell configured again), by index path after the stage, with their
    /// new payload.
    public var itemReconfigures: [ItemChange] = []

    public init() {}

    /// Whether the stage has no change at all.
    public var isEmpty: Bool {
        sectionDeletes.isEmpty && sectionInserts.isEmpty && sectionMoves.isEmpty && sectionReloads.isEmpty
            && itemDeletes.isEmpty && itemInserts.isEmpty && itemMoves.isEmpty && itemReloads.isEmpty
            && itemReconfigures.isEmpty
    }
}

/// A move from one position to another.
public struct Move<Position: Hashable & Sendable>: Hashable, Sendable {
    public var from: Position
    public var to: Position

    public init(from: Position, to: Position) {
        self.from = from
        self.to = to
    }
}

/// A section inserted at `index`, with all its items.
public struct SectionInsert: Hashable, Sendable {
    public var index: Int
    public var section: Section
    public var items: [Item]

    public init(index: Int, section: Section, items: [Item]) {
        self.index = index
        self.section = section
        self.items = items
    }
}

/// A section reloaded at `index`, with its (possibly new) payload.
public struct SectionReload: Hashable, Sendable {
    public var index: Int
    public var section: Section

    public init(index: Int, section: Section) {
        self.index = index
        self.section = section
    }
}

/// An item at an index path: inserted, reloaded or reconfigured, with its payload.
public struct ItemChange: Hashable, Sendable {
    public var indexPath: IndexPath
    public var item: Item

    public init(indexPath: IndexPath, item: Item) {
        self.indexPath = indexPath
        self.item = item
    }
}

extension ChangeStage: CustomStringConvertible {
    /// A compact one-line summary, listing only the non-empty kinds of change, e.g.
    /// `itemDeletes [0, 1]; itemInserts [1, 0] x; itemMoves [0, 2]→[1, 1]`.
    public var description: String {
        var parts: [String] = []
        func add(_ name: String, _ entries: [String]) {
            if !entries.isEmpty { parts.append("\(name) \(entries.joined(separator: ", "))") }
        }
        add("sectionDeletes", sectionDeletes.map(String.init))
        add("sectionInserts", sectionInserts.map { "\($0.index) \($0.section.id)(\($0.items.map(\.id).joined(separator: " ")))" })
        add("sectionMoves", sectionMoves.map { "\($0.from)→\($0.to)" })
        add("sectionReloads", sectionReloads.map { String($0.index) })
        add("itemDeletes", itemDeletes.map(\.description))
        add("itemInserts", itemInserts.map { "\($0.indexPath) \($0.item.id)" })
        add("itemMoves", itemMoves.map { "\($0.from)→\($0.to)" })
        add("itemReloads", itemReloads.map { "\($0.indexPath) \($0.item.id)" })
        add("itemReconfigures", itemReconfigures.map { "\($0.indexPath) \($0.item.id)" })
        return parts.joined(separator: "; ")
    }
}

extension StagedChanges: CustomStringConvertible {
    /// One line per stage (see `ChangeStage.description`); empty when there are no changes.
    public var description: String { stages.map(\.description).joined(separator: "\n") }
}
