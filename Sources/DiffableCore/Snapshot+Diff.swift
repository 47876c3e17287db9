extension Snapshot {
    /// The staged changes that turn `old` into `self`.
    ///
    /// Items present in both snapshots are *kept*; an item whose payload differs, or that `self` marks
    /// with `reconfigureItems`, is reconfigured; one that `self` marks with `reloadItems` is reloaded. A
    /// kept section whose payload differs, or that `self` marks with `reloadSections`, is reloaded. See
    /// `StagedChanges` for the stages and their coordinates.
    ///
    /// The algorithm is Heckel-style and linear: the snapshots are already hash tables of their
    /// identifiers, so it makes one look-up per item of `self` in `old` and otherwise walks arrays
    /// indexed by the snapshots' internal item slots. Moves are found per section with a greedy pass
    /// in each direction; the pass with fewer moves wins, so moving one item to the front or to the back
    /// is reported as one move.
    ///
    /// - Complexity: O(n + m) for n items and m sections in both snapshots together.
    public func difference(from old: Snapshot) -> StagedChanges {
        var differ = SnapshotDiffer(old: old.storage, new: storage)
        return differ.run()
    }
}

/// The working state of one diff. See `Snapshot.difference(from:)`.
struct SnapshotDiffer {
    let old: SnapshotStorage
    let new: SnapshotStorage

    // Sections, by position.
    var newPositionOfOldSection: [Int]
    var oldPositionOfNewSection: [Int]
    // Items, by slot. -1 when absent.
    var oldSlotOfNewSlot: [Int32]
    var newSlotOfOldSlot: [Int32]
    /// For a surviving old item: its index in its section after stage 2 (deletes done).
    var survivorIndexOfOldSlot: [Int32]
    /// For each old section: the number of its items that survive stage 2.
    var survivorCountOfOldSection: [Int]

    init(old: SnapshotStorage, new: SnapshotStorage) {
        self.old = old
        self.new = new
        newPositionOfOldSection = Array(repeating: -1, count: old.sectionCount)
        oldPositionOfNewSection = Array(repeating: -1, count: new.sectionCount)
        oldSlotOfNewSlot = Array(repeating: -1, count: new.itemIDs.count)
        newSlotOfOldSlot = Array(repeating: -1, count: old.itemIDs.count)
        survivorIndexOfOldSlot = Array(repeating: -1, count: old.itemIDs.count)
        survivorCountOfOldSection = Array(repeating: 0, count: old.sectionCount)
    }

    mutating func run() -> StagedChanges {
        matchSections()
        matchItems()
        var updates = ChangeStage()
        var deletes = ChangeStage()
        classifyOldItems(updates: &updates, deletes: &deletes)
        var sectionStage = ChangeStage()
        diffSections(into: &sectionStage, deletes: &deletes)
        var itemStage = ChangeStage()
        diffItems(into: &itemStage)
        var reloads = ChangeStage()
        reloadChangedSections(into: &reloads)
        return StagedChanges(stages: [updates, deletes, sectionStage, itemStage, reloads].filter { !$0.isEmpty })
    }

    /// Pairs sections by identifier. One look-up per new section.
    private mutating func matchSections() {
        for newPosition in 0..<new.sectionCount {
            let id = new.sectionRecords[Int(new.sectionKey(at: newPosition))].id
            if let oldKey = old.sectionKeyByID[id] {
                let oldPosition = old.position(ofSectionKey: oldKey)
                oldPositionOfNewSection[newPosition] = oldPosition
                newPositionOfOldSection[oldPosition] = newPosition
            }
        }
    }

    /// Pairs items by identifier. One look-up per new item, the only hashing the diff does, except
    /// for an item in the slot that holds the same identifier string in `old` (a snapshot built with
    /// `init(_:reusing:)`): identifiers are unique, so that slot is the item's.
    private mutating func matchItems() {
        let oldSlotCount = old.itemIDs.count
        for newPosition in 0..<new.sectionCount {
            new.forEachSlot(inSection: new.sectionKey(at: newPosition)) { newSlot in
                let id = new.itemIDs[Int(newSlot)]
                if Int(newSlot) < oldSlotCount, old.itemChunk[Int(newSlot)] >= 0, old.itemIDs[Int(newSlot)].hasSameRepresentation(as: id) {
                    oldSlotOfNewSlot[Int(newSlot)] = newSlot
                    newSlotOfOldSlot[Int(newSlot)] = newSlot
                } else if let oldSlot = old.slot(of: id) {
                    oldSlotOfNewSlot[Int(newSlot)] = oldSlot
                    newSlotOfOldSlot[Int(oldSlot)] = newSlot
                }
            }
        }
    }

    /// Whether the new section holding `newSlot` existed in the old snapshot.
    private func isInKeptNewSection(_ newSlot: Int32) -> Bool {
        let key = new.location(ofSlot: newSlot).section
        return oldPositionOfNewSection[new.position(ofSectionKey: key)] >= 0
    }

    /// Walks the old items of kept sections: stage 1 (reloads, reconfigures) and the item part of stage 2.
    private mutating func classifyOldItems(updates: inout ChangeStage, deletes: inout ChangeStage) {
        for oldPosition in 0..<old.sectionCount where newPositionOfOldSection[oldPosition] >= 0 {
            var oldIndex = 0
            var survivors: Int32 = 0
            old.forEachSlot(inSection: old.sectionKey(at: oldPosition)) { oldSlot in
                defer { oldIndex += 1 }
                let newSlot = newSlotOfOldSlot[Int(oldSlot)]
                let path = IndexPath(section: oldPosition, item: oldIndex)
                // Gone, or moving into a section that is inserted (which carries it): a delete.
                guard newSlot >= 0, isInKeptNewSection(newSlot) else {
                    deletes.itemDeletes.append(path)
                    return
                }
                survivorIndexOfOldSlot[Int(oldSlot)] = survivors
                survivors += 1
                let marks = new.itemMarks[Int(newSlot)]
                let newSlotIndex = Int(newSlot)
                if marks.contains(.reloaded) {
                    updates.itemReloads.append(ItemChange(indexPath: path, item: Item(new.itemIDs[newSlotIndex], data: new.itemData.value(at: newSlotIndex))))
                } else if marks.contains(.reconfigured) || !new.itemData.payload(at: newSlotIndex, equals: Int(oldSlot), in: old.itemData) {
                    updates.itemReconfigures.append(ItemChange(indexPath: path, item: Item(new.itemIDs[newSlotIndex], data: new.itemData.value(at: newSlotIndex))))
                }
            }
            survivorCountOfOldSection[oldPosition] = Int(survivors)
        }
    }

    /// Stage 2's section deletes and stage 3: section inserts and moves.
    private mutating func diffSections(into stage: inout ChangeStage, deletes: inout ChangeStage) {
        // Positions of kept sections once the deleted ones are gone.
        var positionAfterDeletes = Array(repeating: -1, count: old.sectionCount)
        var kept = 0
        for oldPosition in 0..<old.sectionCount {
            if newPositionOfOldSection[oldPosition] < 0 {
                deletes.sectionDeletes.append(oldPosition)
            } else {
                positionAfterDeletes[oldPosition] = kept
                kept += 1
            }
        }
        var sources: [Int] = []
        var targets: [Int] = []
        for newPosition in 0..<new.sectionCount {
            let oldPosition = oldPositionOfNewSection[newPosition]
            if oldPosition < 0 {
                let key = new.sectionKey(at: newPosition)
                let record = new.sectionRecords[Int(key)]
                var items: [Item] = []
                items.reserveCapacity(record.count)
                new.forEachSlot(inSection: key) { items.append(Item(new.itemIDs[Int($0)], data: new.data(ofSlot: $0))) }
                stage.sectionInserts.append(
                    SectionInsert(index: newPosition, section: Section(record.id, data: record.data), items: items))
            } else {
                sources.append(positionAfterDeletes[oldPosition])
                targets.append(newPosition)
            }
        }
        let moved = MoveFinder.movedFlags(sources: sources, sourceCount: kept, leaving: nil)
        for index in sources.indices where moved[index] {
            stage.sectionMoves.append(Move(from: sources[index], to: targets[index]))
        }
    }

    /// Stage 4: item inserts and moves, within and across kept sections.
    private func diffItems(into stage: inout ChangeStage) {
        var sources: [Int] = []
        var targets: [Int] = []
        var leaving: [Bool] = []
        for newPosition in 0..<new.sectionCount {
            let oldPosition = oldPositionOfNewSection[newPosition]
            guard oldPosition >= 0 else { continue }  // inserted sections carry their items
            sources.removeAll(keepingCapacity: true)
            targets.removeAll(keepingCapacity: true)
            var newIndex = 0
            new.forEachSlot(inSection: new.sectionKey(at: newPosition)) { newSlot in
                defer { newIndex += 1 }
                let target = IndexPath(section: newPosition, item: newIndex)
                let oldSlot = oldSlotOfNewSlot[Int(newSlot)]
                let survivorIndex = oldSlot >= 0 ? Int(survivorIndexOfOldSlot[Int(oldSlot)]) : -1
                // New, or coming out of a deleted section: an insert.
                guard survivorIndex >= 0 else {
                    stage.itemInserts.append(
                        ItemChange(indexPath: target, item: Item(new.itemIDs[Int(newSlot)], data: new.data(ofSlot: newSlot))))
                    return
                }
                let fromSection = old.position(ofSectionKey: old.location(ofSlot: oldSlot).section)
                if fromSection == oldPosition {
                    sources.append(survivorIndex)
                    targets.append(newIndex)
                } else {
                    let from = IndexPath(section: newPositionOfOldSection[fromSection], item: survivorIndex)
                    stage.itemMoves.append(Move(from: from, to: target))
                }
            }
            // Survivors of this section that now live in another one are moves already.
            let survivorCount = survivorCountOfOldSection[oldPosition]
            leaving.removeAll(keepingCapacity: true)
            leaving.append(contentsOf: repeatElement(true, count: survivorCount))
            for source in sources { leaving[source] = false }
            let moved = MoveFinder.movedFlags(sources: sources, sourceCount: survivorCount, leaving: leaving)
            for index in sources.indices where moved[index] {
                stage.itemMoves.append(
                    Move(
                        from: IndexPath(section: newPosition, item: sources[index]),
                        to: IndexPath(section: newPosition, item: targets[index])))
            }
        }
    }

    /// Stage 5: kept sections marked for reload or whose payload changed.
    private func reloadChangedSections(into stage: inout ChangeStage) {
        for newPosition in 0..<new.sectionCount {
            let oldPosition = oldPositionOfNewSection[newPosition]
            guard oldPosition >= 0 else { continue }
            let record = new.sectionRecords[Int(new.sectionKey(at: newPosition))]
            let oldRecord = old.sectionRecords[Int(old.sectionKey(at: oldPosition))]
            if record.isReloaded || record.data != oldRecord.data {
                stage.sectionReloads.append(SectionReload(index: newPosition, section: Section(record.id, data: record.data)))
            }
        }
    }
}

/// Chooses which elements of a reordered sequence to report as moves.
enum MoveFinder {
    /// `sources[k]` is the position before the change of the element that ends up k-th among those
    /// staying in the container. Positions `p` with `leaving[p]` leave the container (they are moves
    /// elsewhere). Returns, for each k, whether element k must be reported as a move; the elements not
    /// reported keep their relative order, as a batch update requires.
    ///
    /// Two greedy passes (front to back and back to front) each keep an element in place when it is the
    /// first (last) source position not yet accounted for; the pass with fewer moves wins.
    ///
    /// - Complexity: O(sources + sourceCount).
    static func movedFlags(sources: [Int], sourceCount: Int, leaving: [Bool]?) -> [Bool] {
        if sources.isEmpty { return [] }
        var forward = Array(repeating: false, count: sources.count)
        var backward = Array(repeating: false, count: sources.count)
        var tracked = leaving ?? Array(repeating: false, count: sourceCount)
        var forwardMoves = 0
        var next = 0
        for (k, source) in sources.enumerated() {
            while next < sourceCount && tracked[next] { next += 1 }
            if source != next {
                forward[k] = true
                forwardMoves += 1
            }
            tracked[source] = true
        }
        if forwardMoves == 0 { return forward }
        tracked = leaving ?? Array(repeating: false, count: sourceCount)
        var backwardMoves = 0
        var previous = sourceCount - 1
        for k in sources.indices.reversed() {
            let source = sources[k]
            while previous >= 0 && tracked[previous] { previous -= 1 }
            if source != previous {
                backward[k] = true
                backwardMoves += 1
            }
            tracked[source] = true
        }
        return backwardMoves < forwardMoves ? backward : forward
    }
}
