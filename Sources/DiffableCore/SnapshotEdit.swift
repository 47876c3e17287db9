/// Where an inserted or moved section or item goes, relative to an existing one.
public enum Placement: Hashable, Sendable {
    case before(String)
    case after(String)

    /// The identifier the placement is relative to.
    public var destination: String {
        switch self {
        case .before(let id), .after(let id): return id
        }
    }

    var isAfter: Bool {
        if case .after = self { return true }
        return false
    }
}

/// One mutation of a snapshot, as a value: what a data source journals, what a `batch` is made of, and
/// what `Snapshot.perform(_:)` carries out.
public enum SnapshotEdit: Hashable, Sendable {
    case appendSections([Section])
    case insertSections([Section], Placement)
    case deleteSections([String])
    case moveSection(String, Placement)
    /// Reload sections (a new header and new cells); the snapshot does not change.
    case reloadSections([String])
    /// Replace section payloads.
    case updateSections([Section])
    case appendItems([Item], toSection: String?)
    case insertItems([Item], Placement)
    case deleteItems([String])
    case deleteAllItems
    case moveItem(String, Placement)
    /// Reload items (a new cell); the snapshot does not change.
    case reloadItems([String])
    /// Reconfigure items (the same cell configured again); the snapshot does not change.
    case reconfigureItems([String])
    /// Replace item payloads; reported as reconfigures of the items whose payload changed.
    case updateItems([Item])
    /// Replace the items of a section (appended at the end when missing) by `items`, as applying a
    /// section snapshot does with its visible items. Items that live in other sections move here.
    case replaceItems(inSection: String, with: [Item])
}

/// What performing an edit did: the staged changes that turn the snapshot before into the snapshot
/// after, and the warnings UIKit would have logged.
public struct EditOutcome: Hashable, Sendable {
    public var changes: StagedChanges
    public var warnings: [SnapshotWarning]

    public init(changes: StagedChanges = StagedChanges(), warnings: [SnapshotWarning] = []) {
        self.changes = changes
        self.warnings = warnings
    }
}

/// An edit of a batch failed; the batch changed nothing.
public struct BatchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The position of the failing edit in the batch.
    public var index: Int
    public var error: SnapshotError

    public init(index: Int, error: SnapshotError) {
        self.index = index
        self.error = error
    }

    public var description: String { "operation \(index): \(error)" }
}

extension Snapshot {
    /// Carries out `edit` and returns the changes it made, computed from the positions it touched
    /// rather than by diffing copies, so the cost is that of the edit itself (see each mutation's
    /// complexity) plus O(k log k) to sort k changes.
    ///
    /// Reload and reconfigure edits leave no marks behind: their effect is in the returned changes.
    ///
    /// - Throws: `SnapshotError`, and then nothing changed.
    public mutating func perform(_ edit: SnapshotEdit) throws -> EditOutcome {
        var outcome = EditOutcome()
        var stage = ChangeStage()
        var followUp = ChangeStage()  // reconfigures after moves, in a stage of their own
        switch edit {
        case .appendSections(let sections):
            let start = numberOfSections
            try appendSections(sections)
            stage.sectionInserts = sections.enumerated().map { SectionInsert(index: start + $0.offset, section: $0.element, items: []) }

        case .insertSections(let sections, let placement):
            switch placement {
            case .before(let id): try insertSections(sections, beforeSection: id)
            case .after(let id): try insertSections(sections, afterSection: id)
            }
            stage.sectionInserts = sections.map { SectionInsert(index: index(ofSection: $0.id)!, section: $0, items: []) }

        case .deleteSections(let ids):
            stage.sectionDeletes = Set(ids.compactMap { index(ofSection: $0) }).sorted()
            outcome.warnings = deleteSections(ids)

        case .moveSection(let id, let placement):
            let from = index(ofSection: id)
            switch placement {
            case .before(let destination): try moveSection(id, beforeSection: destination)
            case .after(let destination): try moveSection(id, afterSection: destination)
            }
            let to = index(ofSection: id)!
            if from! != to { stage.sectionMoves = [Move(from: from!, to: to)] }

        case .reloadSections(let ids):
            let unknown = ids.filter { !contains(section: $0) }
            if !unknown.isEmpty {
                throw SnapshotError(
                    .sectionNotFound,
                    "Attempted to reload sections that do not exist in the snapshot: \(quoted(unknown)).",
                    identifiers: unknown)
            }
            stage.sectionReloads = Set(ids).map { SectionReload(index: index(ofSection: $0)!, section: section(at: index(ofSection: $0)!)!) }
                .sorted { $0.index < $1.index }

        case .updateSections(let sections):
            let changed = sections.filter { data(ofSection: $0.id) != nil && data(ofSection: $0.id) != $0.data }
            try updateSections(sections)
            stage.sectionReloads = changed.map { SectionReload(index: index(ofSection: $0.id)!, section: $0) }.sorted { $0.index < $1.index }

        case .appendItems(let items, let section):
            let resolved = try appendResolving(items, toSection: section)
            report(resolved, items, stage: &stage, followUp: &followUp, outcome: &outcome)

        case .insertItems(let items, let placement):
            let resolved = try insertResolving(items, relativeTo: placement.destination, after: placement.isAfter)
            report(resolved, items, stage: &stage, followUp: &followUp, outcome: &outcome)

        case .deleteItems(let ids):
            stage.itemDeletes = Set(ids.compactMap { indexPath(ofItem: $0) }).sorted()
            outcome.warnings = deleteItems(ids)

        case .deleteAllItems:
            stage.sectionDeletes = Array(0..<numberOfSections)
            deleteAllItems()

        case .moveItem(let id, let placement):
            let from = indexPath(ofItem: id)
            switch placement {
            case .before(let destination): try moveItem(id, beforeItem: destination)
            case .after(let destination): try moveItem(id, afterItem: destination)
            }
            let to = indexPath(ofItem: id)!
            if from! != to { stage.itemMoves = [Move(from: from!, to: to)] }

        case .reloadItems(let ids):
            stage.itemReloads = try changesAtCurrentPositions(ids, verb: "reload")

        case .reconfigureItems(let ids):
            stage.itemReconfigures = try changesAtCurrentPositions(ids, verb: "reconfigure")

        case .updateItems(let items):
            let changed = items.filter { data(ofItem: $0.id) != nil && data(ofItem: $0.id) != $0.data }
            try updateItems(items)
            stage.itemReconfigures = changed.map { ItemChange(indexPath: indexPath(ofItem: $0.id)!, item: $0) }
                .sorted { $0.indexPath < $1.indexPath }

        case .replaceItems(let section, let items):
            return try replaceItems(inSection: section, with: items)
        }
        // The non-empty stages, in order (one array, made at its final size).
        switch (stage.isEmpty, followUp.isEmpty) {
        case (false, true): outcome.changes = StagedChanges(stages: [stage])
        case (false, false): outcome.changes = StagedChanges(stages: [stage, followUp])
        case (true, false): outcome.changes = StagedChanges(stages: [followUp])
        case (true, true): outcome.changes = StagedChanges(stages: [])
        }
        return outcome
    }

    /// Performs several edits as one transaction: all of them, or (when one throws) none.
    ///
    /// The changes are the stages of each edit in order, so applying them turns the snapshot before the
    /// batch into the snapshot after it. A failing edit is undone together with the edits before it,
    /// at the cost of what they did (no copy of the snapshot is made).
    ///
    /// - Throws: `BatchError` naming the failing edit.
    public mutating func perform(_ edits: [SnapshotEdit]) throws -> EditOutcome {
        let mark = storage.beginUndoLog()
        var outcome = EditOutcome()
        for (index, edit) in edits.enumerated() {
            do {
                let step = try perform(edit)
                outcome.changes.stages.append(contentsOf: step.changes.stages)
                outcome.warnings.append(contentsOf: step.warnings)
            } catch let error as SnapshotError {
                storage.rollBackUndoLog(mark)
                throw BatchError(index: index, error: error)
            } catch {
                storage.rollBackUndoLog(mark)
                throw error
            }
        }
        storage.commitUndoLog(mark)
        return outcome
    }

    // MARK: Helpers

    /// The changes of an append or insert: new items are inserts, existing ones moves (followed by a
    /// reconfigure when their payload changed). Positions come from the slots: no hashing.
    private func report(
        _ resolved: ResolvedItems, _ items: [Item], stage: inout ChangeStage, followUp: inout ChangeStage, outcome: inout EditOutcome
    ) {
        outcome.warnings = Self.existedWarning(resolved.existing)
        stage.itemInserts.reserveCapacity(resolved.slots.count - resolved.moved.count)
        var moves = resolved.moved.makeIterator()
        var nextMove = moves.next()
        for (index, slot) in resolved.slots.enumerated() {
            let path = storage.indexPath(ofSlot: slot)
            if let move = nextMove, move.index == index {
                stage.itemMoves.append(Move(from: move.from, to: path))
                if move.data != items[index].data { followUp.itemReconfigures.append(ItemChange(indexPath: path, item: items[index])) }
                nextMove = moves.next()
            } else {
                stage.itemInserts.append(ItemChange(indexPath: path, item: items[index]))
            }
        }
        stage.itemInserts.sort { $0.indexPath < $1.indexPath }
        followUp.itemReconfigures.sort { $0.indexPath < $1.indexPath }
        // Existing items put back where they were: nothing moved.
        if stage.itemInserts.isEmpty && stage.itemMoves.allSatisfy({ $0.from == $0.to }) { stage.itemMoves = [] }
    }

    private func changesAtCurrentPositions(_ ids: [String], verb: String) throws -> [ItemChange] {
        let unknown = ids.filter { !contains(item: $0) }
        if !unknown.isEmpty {
            throw SnapshotError(
                .itemNotFound,
                "Attempted to \(verb) items that do not exist in the snapshot: \(quoted(unknown)).",
                identifiers: unknown)
        }
        return Set(ids).map { ItemChange(indexPath: indexPath(ofItem: $0)!, item: Item($0, data: data(ofItem: $0)!)) }
            .sorted { $0.indexPath < $1.indexPath }
    }

    /// `replaceItems`: a diff local to the section, plus deletes of items pulled in from other sections.
    private mutating func replaceItems(inSection section: String, with items: [Item]) throws -> EditOutcome {
        try Self.checkUnique(items.map(\.id), code: .duplicateItem, what: "item")
        var outcome = EditOutcome()
        guard let position = index(ofSection: section) else {
            // A new section at the end, carrying the items; items from other sections are deleted first.
            var deletes = ChangeStage()
            deletes.itemDeletes = items.compactMap { indexPath(ofItem: $0.id) }.sorted()
            var insert = ChangeStage()
            insert.sectionInserts = [SectionInsert(index: numberOfSections, section: Section(section), items: items)]
            try appendSections([Section(section)])
            outcome.warnings = try appendItems(items, toSection: section)
            outcome.changes = StagedChanges(stages: [deletes, insert].filter { !$0.isEmpty })
            return outcome
        }
        let current = try self.items(inSection: section)
        let foreign = items.compactMap { item -> IndexPath? in
            guard let path = indexPath(ofItem: item.id), path.section != position else { return nil }
            return path
        }.sorted()
        let local = try Snapshot([(Section(section), current)])
        var foreignAsNew = Set<String>()
        for path in foreign { foreignAsNew.insert(itemIdentifier(at: path)!) }
        let target = try Snapshot([(Section(section), items)])
        var stages = target.difference(from: local).stages.map { $0.movingSection(0, to: position) }
        if !foreign.isEmpty {
            // Deletes of the pulled-in items go first: their old positions are valid before any stage.
            var deletes = ChangeStage()
            deletes.itemDeletes = foreign
            stages.insert(deletes, at: 0)
        }
        deleteItems(current.map(\.id))
        outcome.warnings = try appendItems(items, toSection: section)
        outcome.changes = StagedChanges(stages: stages)
        return outcome
    }
}

extension ChangeStage {
    /// The stage with every reference to section `from` renamed `to` (for a diff of one section taken on
    /// its own).
    func movingSection(_ from: Int, to: Int) -> ChangeStage {
        func path(_ path: IndexPath) -> IndexPath { path.section == from ? IndexPath(section: to, item: path.item) : path }
        var stage = self
        stage.itemDeletes = itemDeletes.map(path)
        stage.itemInserts = itemInserts.map { ItemChange(indexPath: path($0.indexPath), item: $0.item) }
        stage.itemMoves = itemMoves.map { Move(from: path($0.from), to: path($0.to)) }
        stage.itemReloads = itemReloads.map { ItemChange(indexPath: path($0.indexPath), item: $0.item) }
        stage.itemReconfigures = itemReconfigures.map { ItemChange(indexPath: path($0.indexPath), item: $0.item) }
        return stage
    }
}
