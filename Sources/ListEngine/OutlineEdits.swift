import DiffableCore

/// Item edits of a data source that holds outlines, carried out as `NSDiffableDataSourceSectionSnapshot`
/// carries out the same edit on the section's tree, so that no edit drops what it did not name:
///
/// - `appendItems` into an outline's section appends root items;
/// - `insertItems` before or after an item inserts siblings at that item's level (after its subtree);
/// - `deleteItems` deletes the items with their descendants, collapsed ones included;
/// - `moveItem` moves the item with its subtree, next to the destination at the destination's level;
/// - `updateItems` replaces payloads, of collapsed items too;
/// - an existing item appended or inserted elsewhere moves with its subtree.
///
/// The section's rows become the tree's visible items; the changes are the difference of the section's
/// rows (a diff local to the sections touched). Items moved into a flat section with children make it an
/// outline. Edits that touch no outline are the snapshot's own, at their own cost.
extension DataSourceModel {
    /// Performs `edits` in order, all or nothing, keeping the outlines (see above). Returns the changes
    /// and warnings, and whether an outline changed (also where the changes show nothing: a collapsed
    /// item's payload or place).
    ///
    /// - Throws: the failing edit's `SnapshotError`, or (`asBatch`) a `BatchError` naming it; nothing
    ///   changed then.
    /// One edit (`performKeepingOutlines(_:asBatch:)` without an array when there are no outlines).
    func performKeepingOutlines(_ edit: SnapshotEdit) throws -> (outcome: EditOutcome, outlinesChanged: Bool) {
        if outlines.isEmpty { return (try snapshot.perform(edit), false) }
        return try performKeepingOutlines([edit], asBatch: false)
    }

    func performKeepingOutlines(_ edits: [SnapshotEdit], asBatch: Bool) throws -> (outcome: EditOutcome, outlinesChanged: Bool) {
        if outlines.isEmpty {
            return (asBatch ? try snapshot.perform(edits) : try snapshot.perform(edits[0]), false)
        }
        let outlinesBefore = outlines
        let transaction = snapshot.beginTransaction()
        var outcome = EditOutcome()
        var outlinesChanged = false
        for (index, edit) in edits.enumerated() {
            do {
                var editor = OutlineEditor(dataSource: self)
                let step = try editor.perform(edit)
                outcome.changes.stages.append(contentsOf: step.changes.stages)
                outcome.warnings.append(contentsOf: step.warnings)
                outlinesChanged = outlinesChanged || editor.outlinesChanged
            } catch let error as SnapshotError {
                snapshot.rollBackTransaction(transaction)
                restoreOutlines(outlinesBefore)
                if !asBatch { throw error }
                throw BatchError(index: index, error: error)
            } catch {
                snapshot.rollBackTransaction(transaction)
                restoreOutlines(outlinesBefore)
                throw error
            }
        }
        snapshot.commitTransaction(transaction)
        return (outcome, outlinesChanged)
    }

    /// Makes the outlines `saved` again (after a failed edit). O(sections whose outline differs).
    func restoreOutlines(_ saved: [String: SectionSnapshot]) {
        for section in outlines.keys where saved[section] == nil { setOutline(nil, for: section) }
        for (section, outline) in saved where outlines[section] != outline { setOutline(outline, for: section) }
    }
}

/// One edit of a data source with outlines: the trees of the sections it touches, taken out and edited,
/// then written back as the sections' rows and outlines.
private struct OutlineEditor {
    let dataSource: DataSourceModel
    /// The trees of the sections touched so far (their outline, or a flat one made of their rows).
    private var trees: [String: SectionSnapshot] = [:]
    /// The sections touched, in the order they were first touched.
    private var touched: [String] = []
    /// Whether the edit changed an outline (what its rows show, or a collapsed item's payload or place).
    private(set) var outlinesChanged = false

    init(dataSource: DataSourceModel) { self.dataSource = dataSource }

    private var snapshot: Snapshot { dataSource.snapshot }

    mutating func perform(_ edit: SnapshotEdit) throws -> EditOutcome {
        switch edit {
        case .appendItems(let items, let section):
            guard let target = try appendTarget(section), involvesOutlines(items.lazy.map(\.id), target: target) else { break }
            if dataSource.outlines[target] != nil, items.allSatisfy({ !exists($0.id) }) {
                // New root items come last in the tree as in the rows: the snapshot's own append.
                let outcome = try dataSource.snapshot.perform(edit)
                var outline = dataSource.outlines[target]!
                try outline.append(items)
                dataSource.setOutline(outline, for: target)
                return outcome
            }
            try Snapshot.checkUnique(items.map(\.id), code: .duplicateItem, what: "item")
            let (subtrees, existing) = try takeOut(items)
            for subtree in subtrees { try self[tree: target].append(subtree) }
            return try writeBack(warnings: Self.existedWarning(existing))

        case .insertItems(let items, let placement):
            let destination = placement.destination
            guard involvesOutlines(items.lazy.map(\.id) + [destination], target: nil) else { break }
            if items.contains(where: { $0.id == destination }) {
                throw SnapshotError(
                    .invalidArgument, "The destination item \"\(destination)\" is among the items being inserted.", identifiers: [destination])
            }
            guard exists(destination) else { throw Self.notFound([destination], verb: "insert relative to") }
            try Snapshot.checkUnique(items.map(\.id), code: .duplicateItem, what: "item")
            let (subtrees, existing) = try takeOut(items)
            guard let section = location(of: destination) else {
                throw SnapshotError(
                    .invalidArgument, "The destination item \"\(destination)\" lies below one of the items being inserted.", identifiers: [destination])
            }
            var previous = destination
            for subtree in subtrees {
                if case .after = placement {
                    try self[tree: section].insert(subtree, after: previous)
                    previous = subtree.rootItems[0].id
                } else {
                    try self[tree: section].insert(subtree, before: destination)
                }
            }
            return try writeBack(warnings: Self.existedWarning(existing))

        case .deleteItems(let ids):
            guard involvesOutlines(ids, target: nil) else { break }
            var unknown: [String] = []
            var seen = Set<String>()
            var present: [String] = []
            for id in ids where seen.insert(id).inserted {
                if exists(id) { present.append(id) } else { unknown.append(id) }
            }
            for id in present {
                guard let section = location(of: id) else { continue }  // gone with an ancestor named before
                try self[tree: section].delete([id])
            }
            var warnings: [SnapshotWarning] = []
            if !unknown.isEmpty {
                warnings.append(SnapshotWarning(.unknownItemsIgnored, "Items \(quotedIdentifiers(unknown)) do not exist in the data source; ignored.", identifiers: unknown))
            }
            return try writeBack(warnings: warnings)

        case .moveItem(let id, let placement):
            let destination = placement.destination
            guard involvesOutlines([id, destination], target: nil) else { break }
            let unknown = [id, destination].filter { !exists($0) }
            if !unknown.isEmpty { throw Self.notFound(unknown, verb: "move") }
            if id == destination {
                throw SnapshotError(.invalidMove, "Cannot move item \"\(id)\" relative to itself.", identifiers: [id])
            }
            let section = location(of: destination)!
            if location(of: id) == section, (trees[section] ?? dataSource.outlines[section])?.isDescendant(destination, of: id) == true {
                throw SnapshotError(
                    .invalidMove, "Cannot move item \"\(id)\" relative to \"\(destination)\", one of its own descendants.", identifiers: [id, destination])
            }
            let subtree = try self[tree: location(of: id)!].detach(id)
            if case .after = placement {
                try self[tree: section].insert(subtree, after: destination)
            } else {
                try self[tree: section].insert(subtree, before: destination)
            }
            return try writeBack(warnings: [])

        case .updateItems(let items):
            guard items.contains(where: { !snapshot.contains(item: $0.id) }), involvesOutlines(items.lazy.map(\.id), target: nil) else { break }
            try Snapshot.checkUnique(items.map(\.id), code: .duplicateItem, what: "item")
            let unknown = items.map(\.id).filter { !exists($0) }
            if !unknown.isEmpty {
                throw SnapshotError(.itemNotFound, "Items \(quotedIdentifiers(unknown)) do not exist in the data source.", identifiers: unknown)
            }
            // Rows as the snapshot updates them (reconfigured); every item in its outline too.
            let shown = items.filter { snapshot.contains(item: $0.id) }
            let outcome = shown.isEmpty ? EditOutcome() : try dataSource.snapshot.perform(.updateItems(shown))
            setOutlineData(items)
            return outcome

        default:
            break
        }
        let outcome = try dataSource.snapshot.perform(edit)
        afterSnapshotEdit(edit)
        return outcome
    }

    // MARK: Which edits touch outlines

    /// The section `appendItems` appends to (`nil` when there is none: the snapshot's own error follows).
    private func appendTarget(_ section: String?) throws -> String? {
        guard let section else { return snapshot.sectionIdentifier(at: snapshot.numberOfSections - 1) }
        return snapshot.contains(section: section) ? section : nil
    }

    /// Whether an edit naming `ids` (and putting items into `target`) touches an outline.
    private func involvesOutlines(_ ids: some Sequence<String>, target: String?) -> Bool {
        if let target, dataSource.outlines[target] != nil { return true }
        return ids.contains { id in dataSource.outlines.values.contains { $0.contains(id) } }
    }

    // MARK: The trees

    /// The tree of a section, taken out on first use.
    private subscript(tree section: String) -> SectionSnapshot {
        get { trees[section] ?? dataSource.outline(of: section) ?? SectionSnapshot() }
        _modify {
            if trees[section] == nil {
                trees[section] = dataSource.outline(of: section) ?? SectionSnapshot()
                touched.append(section)
            }
            yield &trees[section]!
        }
    }

    /// Whether an item exists: a row, or an outline's collapsed item.
    private func exists(_ id: String) -> Bool { location(of: id) != nil }

    /// The section holding an item as the edit left it so far, or `nil`.
    private func location(of id: String) -> String? {
        for (section, tree) in trees where tree.contains(id) { return section }
        if let section = snapshot.sectionIdentifier(containingItem: id), trees[section] == nil { return section }
        for (section, outline) in dataSource.outlines where trees[section] == nil && outline.contains(id) { return section }
        return nil
    }

    /// Takes the existing ones among `items` out of their trees with their subtrees (and their new
    /// payloads); new ones become trees of one item. In the order of `items`. An item named below
    /// another named item comes out of that item's subtree (deepest first), so each lands where the edit
    /// puts it.
    private mutating func takeOut(_ items: [Item]) throws -> (subtrees: [SectionSnapshot], existing: [String]) {
        var depths: [(index: Int, depth: Int)] = []
        for (index, item) in items.enumerated() {
            guard let section = location(of: item.id) else { continue }
            depths.append((index, (trees[section] ?? dataSource.outlines[section]).flatMap { try? $0.level(of: item.id) } ?? 0))
        }
        var taken: [Int: SectionSnapshot] = [:]
        for (index, _) in depths.sorted(by: { $0.depth > $1.depth }) {
            let item = items[index]
            var subtree = try self[tree: location(of: item.id)!].detach(item.id)
            subtree.setData(item.data, of: item.id)
            taken[index] = subtree
        }
        var subtrees: [SectionSnapshot] = []
        for (index, item) in items.enumerated() { subtrees.append(try taken[index] ?? SectionSnapshot(items: [item])) }
        return (subtrees, depths.map { items[$0.index].id })
    }

    /// Writes the touched trees back: each section's rows become its tree's visible items (the changes:
    /// a diff of the section's rows), and its outline the tree (a flat section stays flat unless it took
    /// children or an expanded item in).
    private mutating func writeBack(warnings: [SnapshotWarning]) throws -> EditOutcome {
        var outcome = EditOutcome(warnings: warnings)
        for section in touched {
            let tree = trees[section]!
            let previous = dataSource.outlines[section]
            let rows = try dataSource.snapshot.perform(.replaceItems(inSection: section, with: tree.visibleItems))
            outcome.changes.stages.append(contentsOf: rows.changes.stages)
            // (Compared whole only when the rows show nothing: an edit that put everything back.)
            if (previous != nil || tree.isOutline) && (!rows.changes.isEmpty || previous != tree) {
                dataSource.setOutline(tree, for: section)
                outlinesChanged = true
            }
        }
        return outcome
    }

    /// After an edit the snapshot carried out alone: outlines of deleted sections go, and rows whose
    /// payload changed give it to their outline.
    private mutating func afterSnapshotEdit(_ edit: SnapshotEdit) {
        switch edit {
        case .deleteSections, .deleteAllItems:
            for section in dataSource.outlines.keys where !snapshot.contains(section: section) { dataSource.setOutline(nil, for: section) }
        case .updateItems(let items):
            setOutlineData(items)
        default:
            break
        }
    }

    /// Gives items' new payloads to the outlines that hold them (rows and collapsed items).
    private mutating func setOutlineData(_ items: [Item]) {
        var updated: [String: SectionSnapshot] = [:]
        for item in items {
            guard let section = location(of: item.id), let outline = updated[section] ?? dataSource.outlines[section],
                outline.data(of: item.id) != item.data
            else { continue }
            updated[section, default: outline].setData(item.data, of: item.id)
        }
        for (section, outline) in updated { dataSource.setOutline(outline, for: section) }
        if !updated.isEmpty { outlinesChanged = true }
    }

    // MARK: Messages

    private static func existedWarning(_ existing: [String]) -> [SnapshotWarning] {
        guard !existing.isEmpty else { return [] }
        return [
            SnapshotWarning(
                .itemsAlreadyExisted,
                "Items \(quotedIdentifiers(existing)) already existed in the data source and were moved into place (with their children) instead. "
                    + "Identifiers must be unique; inserting an existing identifier is more expensive.",
                identifiers: existing)
        ]
    }

    private static func notFound(_ ids: [String], verb: String) -> SnapshotError {
        SnapshotError(.itemNotFound, "Attempted to \(verb) items that do not exist in the data source: \(quotedIdentifiers(ids)).", identifiers: ids)
    }

}

/// Identifiers for a message: quoted, comma separated, ten at most.
func quotedIdentifiers(_ ids: [String]) -> String {
    var parts = ids.prefix(10).map { "\"\($0)\"" }
    if ids.count > 10 { parts.append("and \(ids.count - 10) more") }
    return parts.joined(separator: ", ")
}
