/// A `StagedChanges` value that does not fit the snapshot it is applied to.
public struct InconsistentChangesError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The index of the stage that does not fit.
    public var stage: Int
    public var message: String

    public var description: String { "Stage \(stage) does not apply: \(message)" }
}

extension Snapshot {
    /// Applies staged changes (the inverse of `difference(from:)`): afterwards
    /// `old.apply(new.difference(from: old))` leaves `old == new`.
    ///
    /// Each stage is checked against the current state before any of it is applied; when a stage does
    /// not fit, it throws and that stage changes nothing, but earlier stages stay applied. Use
    /// `applying(_:)` to get all-or-nothing behaviour at the cost of a copy.
    ///
    /// - Throws: `InconsistentChangesError` naming the stage and the problem.
    /// - Complexity: O(c × (chunk size + chunks per section) + stages × sections) for c changes.
    public mutating func apply(_ changes: StagedChanges) throws {
        for (index, stage) in changes.stages.enumerated() {
            do {
                try StageApplier(stage: stage).apply(to: &storage)
            } catch let error as StageApplier.Failure {
                throw InconsistentChangesError(stage: index, message: error.message)
            }
        }
    }

    /// The snapshot with `changes` applied; `self` is left as it is whatever happens.
    ///
    /// - Throws: `InconsistentChangesError`.
    /// - Complexity: that of `apply(_:)`, plus one copy of the storage.
    public func applying(_ changes: StagedChanges) throws -> Snapshot {
        var copy = self
        try copy.apply(changes)
        return copy
    }
}

/// Validates one stage against a storage, then performs it.
struct StageApplier {
    struct Failure: Error { var message: String }

    let stage: ChangeStage

    func apply(to storage: inout SnapshotStorage) throws {
        try validate(storage)

        // 1. Reloads, at positions before the stage.
        for reload in stage.itemReloads {
            let slot = Self.slot(storage, at: reload.indexPath)
            storage.setData(reload.item.data, ofSlot: slot)
        }
        for reload in stage.sectionReloads {
            storage.setData(reload.section.data, ofSection: storage.sectionKey(at: reload.index))
        }
        // 2. Take items out: deletes, and move sources (kept for re-insertion).
        let movedSlots = stage.itemMoves.map { Self.slot(storage, at: $0.from) }
        let deletedSlots = stage.itemDeletes.map { Self.slot(storage, at: $0) }
        for slot in movedSlots { storage.detach(slot) }
        for slot in deletedSlots { storage.removeItem(slot) }
        // 3. Sections: deletes, move sources out; then inserts and move targets in ascending order.
        let movedKeys = stage.sectionMoves.map { storage.sectionKey(at: $0.from) }
        let deletedKeys = stage.sectionDeletes.map { storage.sectionKey(at: $0) }
        for key in deletedKeys { storage.removeSection(at: storage.position(ofSectionKey: key)) }
        for key in movedKeys {
            let position = storage.position(ofSectionKey: key)
            storage.sectionOrder.remove(at: position)
            storage.renumberSections(from: position)
        }
        var sectionTargets: [(index: Int, insert: SectionInsert?, key: Int32)] =
            stage.sectionInserts.map { ($0.index, $0, -1) }
        for (move, key) in zip(stage.sectionMoves, movedKeys) { sectionTargets.append((move.to, nil, key)) }
        sectionTargets.sort { $0.index < $1.index }
        for target in sectionTargets {
            if let insert = target.insert {
                storage.insertSection(insert.section, at: target.index)
                let key = storage.sectionKey(at: target.index)
                for (offset, item) in insert.items.enumerated() {
                    storage.attach(storage.allocateSlot(for: item), toSection: key, at: offset)
                }
            } else {
                storage.sectionOrder.insert(target.key, at: target.index)
                storage.renumberSections(from: target.index)
            }
        }
        // 4. Items: inserts and move targets in ascending order.
        var itemTargets: [(path: IndexPath, item: Item?, slot: Int32)] = stage.itemInserts.map { ($0.indexPath, $0.item, -1) }
        for (move, slot) in zip(stage.itemMoves, movedSlots) { itemTargets.append((move.to, nil, slot)) }
        itemTargets.sort { $0.path < $1.path }
        for target in itemTargets {
            let slot = target.item.map { storage.allocateSlot(for: $0) } ?? target.slot
            storage.attach(slot, toSection: storage.sectionKey(at: target.path.section), at: target.path.item)
        }
        // 5. Reconfigures, at positions after the stage.
        for change in stage.itemReconfigures {
            let slot = Self.slot(storage, at: change.indexPath)
            storage.setData(change.item.data, ofSlot: slot)
        }
    }

    private static func slot(_ storage: SnapshotStorage, at path: IndexPath) -> Int32 {
        storage.slot(inSection: storage.sectionKey(at: path.section), at: path.item)
    }

    /// Checks every position and identifier of the stage against `storage` without changing it.
    private func validate(_ storage: SnapshotStorage) throws {
        let sectionCount = storage.sectionCount
        func sectionCountOf(_ position: Int) -> Int { storage.sectionRecords[Int(storage.sectionKey(at: position))].count }
        func checkSection(_ index: Int, _ what: String) throws {
            guard index >= 0 && index < sectionCount else {
                throw Failure(message: "\(what) section \(index) is out of range (\(sectionCount) sections).")
            }
        }
        func checkPath(_ path: IndexPath, _ what: String) throws {
            try checkSection(path.section, what)
            guard path.item >= 0 && path.item < sectionCountOf(path.section) else {
                throw Failure(message: "\(what) item \(path) is out of range.")
            }
        }

        // Positions before the stage.
        var removedSections = Set<Int>()
        for index in stage.sectionDeletes + stage.sectionMoves.map(\.from) {
            try checkSection(index, "deleted or moved")
            guard removedSections.insert(index).inserted else {
                throw Failure(message: "section \(index) is deleted or moved twice.")
            }
        }
        for reload in stage.sectionReloads { try checkSection(reload.index, "reloaded") }
        var removedPaths = Set<IndexPath>()
        for path in stage.itemDeletes + stage.itemMoves.map(\.from) {
            try checkPath(path, "deleted or moved")
            guard removedPaths.insert(path).inserted else {
                throw Failure(message: "item \(path) is deleted or moved twice.")
            }
        }
        for reload in stage.itemReloads { try checkPath(reload.indexPath, "reloaded") }

        // Identifiers of inserted sections and items must be free once the removals are done.
        let deletedSections = Set(stage.sectionDeletes)
        var insertedSectionIDs = Set<String>()
        for insert in stage.sectionInserts {
            guard insertedSectionIDs.insert(insert.section.id).inserted else {
                throw Failure(message: "section \"\(insert.section.id)\" is inserted twice.")
            }
            if let key = storage.sectionKeyByID[insert.section.id], !deletedSections.contains(storage.position(ofSectionKey: key)) {
                throw Failure(message: "inserted section \"\(insert.section.id)\" already exists.")
            }
        }
        let deletedPaths = Set(stage.itemDeletes)
        var insertedItemIDs = Set<String>()
        for item in stage.itemInserts.map(\.item) + stage.sectionInserts.flatMap(\.items) {
            guard insertedItemIDs.insert(item.id).inserted else {
                throw Failure(message: "item \"\(item.id)\" is inserted twice.")
            }
            if let slot = storage.slot(of: item.id) {
                let path = storage.indexPath(ofSlot: slot)
                if !deletedPaths.contains(path) && !deletedSections.contains(path.section) {
                    throw Failure(message: "inserted item \"\(item.id)\" already exists.")
                }
            }
        }

        // Positions after the stage: section targets, then item targets, by counting.
        var itemsRemovedPerSection: [Int: Int] = [:]
        for path in removedPaths { itemsRemovedPerSection[path.section, default: 0] += 1 }
        let finalSectionCount = sectionCount - stage.sectionDeletes.count + stage.sectionInserts.count
        var sectionTargets = Set<Int>()
        for index in stage.sectionInserts.map(\.index) + stage.sectionMoves.map(\.to) {
            guard index >= 0 && index < finalSectionCount, sectionTargets.insert(index).inserted else {
                throw Failure(message: "section target \(index) is out of range or used twice.")
            }
        }
        // Item counts of the sections after the stage, before item inserts and move targets.
        var countsAfterSections = Array(repeating: 0, count: finalSectionCount)
        var remaining = (0..<sectionCount).filter { !removedSections.contains($0) }.makeIterator()
        var movedByTarget: [Int: Int] = [:]
        for move in stage.sectionMoves { movedByTarget[move.to] = move.from }
        var insertsByTarget: [Int: Int] = [:]
        for insert in stage.sectionInserts { insertsByTarget[insert.index] = insert.items.count }
        for position in 0..<finalSectionCount {
            let oldPosition: Int?
            if let count = insertsByTarget[position] {
                countsAfterSections[position] = count
                continue
            } else if let from = movedByTarget[position] {
                oldPosition = from
            } else {
                oldPosition = remaining.next()
            }
            guard let source = oldPosition else { throw Failure(message: "section targets leave a gap.") }
            countsAfterSections[position] = sectionCountOf(source) - itemsRemovedPerSection[source, default: 0]
        }
        var itemTargets = Set<IndexPath>()
        var targetsPerSection: [Int: Int] = [:]
        for path in stage.itemInserts.map(\.indexPath) + stage.itemMoves.map(\.to) {
            guard path.section >= 0 && path.section < finalSectionCount, path.item >= 0,
                itemTargets.insert(path).inserted
            else {
                throw Failure(message: "item target \(path) is out of range or used twice.")
            }
            targetsPerSection[path.section, default: 0] += 1
        }
        for path in itemTargets {
            let finalCount = countsAfterSections[path.section] + targetsPerSection[path.section, default: 0]
            guard path.item < finalCount else { throw Failure(message: "item target \(path) is out of range.") }
        }
        for change in stage.itemReconfigures {
            let path = change.indexPath
            guard path.section >= 0 && path.section < finalSectionCount, path.item >= 0,
                path.item < countsAfterSections[path.section] + targetsPerSection[path.section, default: 0]
            else {
                throw Failure(message: "reconfigured item \(path) is out of range.")
            }
        }
    }
}
