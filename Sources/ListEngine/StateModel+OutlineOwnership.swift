import DiffableCore
import ListWire

extension StateModel {
    /// Refuses an outline for `section` holding an item that cannot move into it: one another section's
    /// outline holds (as a row of it or a collapsed item: that outline would keep it, and an item would
    /// be in two places; outline verbs move it), or a row of another section that the outline keeps
    /// collapsed (rows move into place only as rows). Rows of sections without an outline that the
    /// outline shows are moved into place by the replace, as the snapshot's own edits move them.
    ///
    /// The error names the other section holding the outline's first such item, and that section's items
    /// in the outline's order (never a dictionary's order: the same request gets the same answer).
    func checkItemsHeldElsewhere(_ outline: SectionSnapshot, section: String, in dataSource: DataSourceModel) throws(WireError) {
        let others = dataSource.outlines.filter { $0.key != section }
        let ids = outline.items.map(\.id)
        if !others.isEmpty, let (first, other) = ids.lazy.compactMap({ id in others.first { $0.value.contains(id) }.map { (id, $0.key) } }).first {
            let held = others[other]!
            let named = ids.lazy.filter { held.contains($0) }.prefix(10).map { "\"\($0)\"" }
            throw WireError(
                .duplicateItem,
                "Items \(named.joined(separator: ", ")) are in the outline of section \"\(other)\": an item belongs to one section's outline. "
                    + "Move \"\(first)\" there first (moveItem, or editSectionSnapshot of both sections).",
                details: ["section": .string(other)])
        }
        guard outline.hiddenCount > 0, dataSource.snapshot.numberOfItems > 0 else { return }
        let visible = Set(outline.visibleLevels.lazy.map(\.id))
        let hiddenRows = ids.filter { id in
            !visible.contains(id) && (dataSource.snapshot.sectionIdentifier(containingItem: id).map { $0 != section } ?? false)
        }
        if let first = hiddenRows.first, let other = dataSource.snapshot.sectionIdentifier(containingItem: first) {
            throw WireError(
                .duplicateItem,
                "Items \(hiddenRows.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")) are rows of section \"\(other)\"; the outline keeps "
                    + "them collapsed, where they cannot be moved as rows. Delete them there first, or apply them visible.",
                details: ["section": .string(other)])
        }
    }
}
