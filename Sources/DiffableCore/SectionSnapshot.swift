/// The items of one section as a tree, with expanded and collapsed parents, the way
/// `NSDiffableDataSourceSectionSnapshot` holds an outline.
///
/// ```swift
/// var outline = SectionSnapshot()
/// try outline.append(["smileys", "nature"])
/// try outline.append(["😀", "😂"], to: "smileys")
/// outline.expand(["smileys"])
/// outline.visibleItems.map(\.id)    // ["smileys", "😀", "😂", "nature"]
/// ```
///
/// Applying a section snapshot to a section of a `Snapshot` (`Snapshot.apply(_:to:)`) puts only its
/// *visible* items in that section: the children of collapsed parents are not in the full snapshot.
///
/// Misuse throws a `SnapshotError` and changes nothing. Queries that walk the tree in depth-first order
/// are O(n); look-ups by identifier are O(1) on average; inserting among siblings is O(siblings).
/// No operation recurses, so a tree of any depth is safe.
public struct SectionSnapshot: Hashable, Sendable {
    struct Node: Hashable, Sendable {
        var data: JSONValue
        var parent: String?
        var children: [String]
    }

    var nodes: [String: Node] = [:]
    var roots: [String] = []
    var expanded: Set<String> = []
    /// The bytes the outline stores: its items' identifiers and their payloads as packed
    /// (`PackedPayload`), as `Snapshot.storedBytes` counts them. Kept by every change: O(1) to read.
    public private(set) var storedBytes = 0

    /// What one item stores (see `storedBytes`).
    private static func bytes(_ id: String, _ data: JSONValue) -> Int { id.utf8.count + SnapshotStorage.packedSize(data) }

    /// Creates an empty section snapshot.
    public init() {}

    // MARK: Building

    /// Appends items at the end of the root level, or as the last children of `parent`.
    ///
    /// - Throws: `.duplicateItem` when an identifier repeats or already exists; `.itemNotFound` for an
    ///   unknown parent.
    /// - Complexity: O(k) amortized.
    public mutating func append(_ items: [Item], to parent: String? = nil) throws {
        if let parent { try checkExists(parent, role: "Parent item") }
        try checkNew(items)
        for item in items {
            nodes[item.id] = Node(data: item.data, parent: parent, children: [])
            storedBytes += Self.bytes(item.id, item.data)
        }
        if let parent {
            nodes[parent]!.children.append(contentsOf: items.map(\.id))
        } else {
            roots.append(contentsOf: items.map(\.id))
        }
    }

    /// Inserts items among the siblings of `destination`, just before it.
    ///
    /// - Throws: `.duplicateItem`, or `.itemNotFound` for an unknown destination.
    /// - Complexity: O(k + siblings).
    public mutating func insert(_ items: [Item], before destination: String) throws {
        try insert(items, relativeTo: destination, after: false)
    }

    /// Inserts items among the siblings of `destination`, just after it, that is past its whole subtree
    /// in depth-first order.
    ///
    /// - Throws: `.duplicateItem`, or `.itemNotFound` for an unknown destination.
    /// - Complexity: O(k + siblings).
    public mutating func insert(_ items: [Item], after destination: String) throws {
        try insert(items, relativeTo: destination, after: true)
    }

    /// Inserts another section snapshot's tree (with its expansion state) before `destination`.
    ///
    /// - Throws: `.duplicateItem` when an item of `snapshot` already exists, `.itemNotFound` for an
    ///   unknown destination.
    /// - Complexity: O(size of `snapshot` + siblings).
    public mutating func insert(_ snapshot: SectionSnapshot, before destination: String) throws {
        try insert(snapshot, relativeTo: destination, after: false)
    }

    /// Inserts another section snapshot's tree (with its expansion state) after `destination`'s subtree.
    ///
    /// - Throws: like `insert(_:before:)`.
    /// - Complexity: O(size of `snapshot` + siblings).
    public mutating func insert(_ snapshot: SectionSnapshot, after destination: String) throws {
        try insert(snapshot, relativeTo: destination, after: true)
    }

    /// Deletes items together with all their descendants. Naming an item twice, or an item and one of
    /// its ancestors, is fine.
    ///
    /// - Throws: `.itemNotFound` naming every unknown item; nothing is deleted then.
    /// - Complexity: O(deleted items + their siblings).
    public mutating func delete(_ items: [String]) throws {
        let unknown = items.filter { nodes[$0] == nil }
        if !unknown.isEmpty {
            throw SnapshotError(
                .itemNotFound, "Failed to find items \(quoted(unknown)) in the section snapshot.", identifiers: unknown)
        }
        for id in items {
            guard let node = nodes[id] else { continue }  // already gone with an ancestor
            if let parent = node.parent {
                nodes[parent]!.children.removeAll { $0 == id }
            } else {
                roots.removeAll { $0 == id }
            }
            for removed in subtree(of: id, includingRoot: true) {
                storedBytes -= Self.bytes(removed, nodes.removeValue(forKey: removed)!.data)
                expanded.remove(removed)
            }
        }
    }

    /// Appends another section snapshot's tree (with its expansion state) at the end of the root level,
    /// or as the last children of `parent`.
    ///
    /// - Throws: `.duplicateItem` when an item of `snapshot` already exists, `.itemNotFound` for an
    ///   unknown parent.
    /// - Complexity: O(size of `snapshot`).
    public mutating func append(_ snapshot: SectionSnapshot, to parent: String? = nil) throws {
        if let parent { try checkExists(parent, role: "Parent item") }
        try checkNoClash(with: snapshot)
        graft(snapshot, under: parent)
        if let parent {
            nodes[parent]!.children.append(contentsOf: snapshot.roots)
        } else {
            roots.append(contentsOf: snapshot.roots)
        }
    }

    /// Removes an item with its descendants and returns them as a section snapshot of their own, the
    /// item its single root (with their expansion state): what moving a subtree takes out.
    ///
    /// - Throws: `.itemNotFound`.
    /// - Complexity: O(subtree + the item's siblings).
    public mutating func detach(_ item: String) throws -> SectionSnapshot {
        let subtree = try snapshot(of: item, includingParent: true)
        try delete([item])
        return subtree
    }

    /// Whether `item` lies below `ancestor` (at any depth). O(depth).
    public func isDescendant(_ item: String, of ancestor: String) -> Bool {
        var current = nodes[item]?.parent
        while let parent = current {
            if parent == ancestor { return true }
            current = nodes[parent]?.parent
        }
        return false
    }

    /// Whether the section snapshot holds more than a flat list of items: an item with children, or an
    /// expanded item. O(n).
    public var isOutline: Bool { !expanded.isEmpty || nodes.values.contains { !$0.children.isEmpty } }

    /// The number of items a list does not show (below a collapsed ancestor). O(visible + roots).
    public var hiddenCount: Int { count - visibleLevels.count }

    /// Replaces the payload of an item; an unknown item is ignored. O(1) on average.
    public mutating func setData(_ data: JSONValue, of item: String) {
        guard let old = nodes[item]?.data else { return }
        storedBytes += Self.bytes(item, data) - Self.bytes(item, old)
        nodes[item]!.data = data
    }

    /// Removes every item and the expansion state.
    public mutating func deleteAll() {
        self = SectionSnapshot()
    }

    /// Expands items; unknown identifiers are ignored (as UIKit does). A childless item can be expanded.
    /// O(k).
    public mutating func expand(_ items: [String]) {
        for id in items where nodes[id] != nil { expanded.insert(id) }
    }

    /// Collapses items; unknown identifiers are ignored. O(k).
    public mutating func collapse(_ items: [String]) {
        for id in items { expanded.remove(id) }
    }

    /// Replaces the children of `parent` with the root items of `snapshot` (and their subtrees and
    /// expansion state).
    ///
    /// - Throws: `.itemNotFound` for an unknown parent; `.duplicateItem` when an item of `snapshot`
    ///   exists outside the replaced children.
    /// - Complexity: O(replaced subtree + size of `snapshot`).
    public mutating func replace(childrenOf parent: String, using snapshot: SectionSnapshot) throws {
        try checkExists(parent, role: "Parent item")
        let replaced = Set(subtree(of: parent, includingRoot: false))
        let clashes = snapshot.items.map(\.id).filter { nodes[$0] != nil && !replaced.contains($0) }
        if !clashes.isEmpty {
            throw SnapshotError(
                .duplicateItem,
                "Identifiers in a section snapshot must be unique. Duplicate item identifiers: \(quoted(clashes)).",
                identifiers: clashes)
        }
        for id in replaced {
            storedBytes -= Self.bytes(id, nodes.removeValue(forKey: id)!.data)
            expanded.remove(id)
        }
        nodes[parent]!.children = []
        graft(snapshot, under: parent)
        nodes[parent]!.children = snapshot.roots
    }

    // MARK: Queries

    /// Every item in depth-first order, with its payload. O(n).
    public var items: [Item] { depthFirst(visibleOnly: false).map { Item($0, data: nodes[$0]!.data) } }

    /// The items at the root level, in order. O(roots).
    public var rootItems: [Item] { roots.map { Item($0, data: nodes[$0]!.data) } }

    /// The items whose every ancestor is expanded, in depth-first order: what a list shows. O(visible + roots).
    public var visibleItems: [Item] { depthFirst(visibleOnly: true).map { Item($0, data: nodes[$0]!.data) } }

    /// The visible items' identifiers with their depths (0 at the root level), in depth-first order: what
    /// a list shows, with its indentation. O(visible + roots).
    public var visibleLevels: [(id: String, level: Int)] {
        var result: [(id: String, level: Int)] = []
        var stack: [(id: String, level: Int)] = roots.reversed().map { ($0, 0) }
        while let (id, level) = stack.popLast() {
            result.append((id, level))
            if expanded.contains(id) { stack.append(contentsOf: nodes[id]!.children.reversed().map { ($0, level + 1) }) }
        }
        return result
    }

    /// The items a list shows when `isExpanded` says which items are expanded (a view's own expansion
    /// over the stored one), with their depths, in depth-first order. O(visible + roots).
    public func visibleItems(isExpanded: (String) -> Bool) -> [(item: Item, level: Int)] {
        var result: [(item: Item, level: Int)] = []
        var stack: [(id: String, level: Int)] = roots.reversed().map { ($0, 0) }
        while let (id, level) = stack.popLast() {
            let node = nodes[id]!
            result.append((Item(id, data: node.data), level))
            if isExpanded(id) { stack.append(contentsOf: node.children.reversed().map { ($0, level + 1) }) }
        }
        return result
    }

    /// The expanded items, in depth-first order. O(n).
    public var expandedItems: [String] { depthFirst(visibleOnly: false).filter { expanded.contains($0) } }

    /// The number of items. O(1).
    public var count: Int { nodes.count }


    /// Whether the item is in the section snapshot. O(1) on average.
    public func contains(_ item: String) -> Bool { nodes[item] != nil }

    /// The position of an item in depth-first order, or `nil`. O(n).
    public func index(of item: String) -> Int? {
        guard nodes[item] != nil else { return nil }
        return depthFirst(visibleOnly: false).firstIndex(of: item)
    }

    /// The payload of an item, or `nil` when it does not exist. O(1) on average.
    public func data(of item: String) -> JSONValue? { nodes[item]?.data }

    /// The depth of an item: 0 at the root level.
    ///
    /// - Throws: `.itemNotFound`.
    /// - Complexity: O(depth).
    public func level(of item: String) throws -> Int {
        try checkExists(item, role: "Item")
        var level = 0
        var current = nodes[item]!.parent
        while let parent = current {
            level += 1
            current = nodes[parent]!.parent
        }
        return level
    }

    /// The parent of an item, `nil` at the root level.
    ///
    /// - Throws: `.itemNotFound`.
    /// - Complexity: O(1) on average.
    public func parent(of item: String) throws -> String? {
        try checkExists(item, role: "Child item")
        return nodes[item]!.parent
    }

    /// The children of an item, in order.
    ///
    /// - Throws: `.itemNotFound`.
    public func children(of item: String) throws -> [String] {
        try checkExists(item, role: "Item")
        return nodes[item]!.children
    }

    /// Whether an item is expanded.
    ///
    /// - Throws: `.itemNotFound`.
    public func isExpanded(_ item: String) throws -> Bool {
        try checkExists(item, role: "Item")
        return expanded.contains(item)
    }

    /// Whether every ancestor of an item is expanded.
    ///
    /// - Throws: `.itemNotFound`.
    /// - Complexity: O(depth).
    public func isVisible(_ item: String) throws -> Bool {
        try checkExists(item, role: "Item")
        var current = nodes[item]!.parent
        while let parent = current {
            if !expanded.contains(parent) { return false }
            current = nodes[parent]!.parent
        }
        return true
    }

    /// The subtree below `parent` as a section snapshot of its own (with expansion state); with
    /// `includingParent`, `parent` is its single root.
    ///
    /// - Throws: `.itemNotFound`.
    /// - Complexity: O(subtree).
    public func snapshot(of parent: String, includingParent: Bool = false) throws -> SectionSnapshot {
        try checkExists(parent, role: "Parent item")
        var result = SectionSnapshot()
        for id in subtree(of: parent, includingRoot: includingParent) {
            var node = nodes[id]!
            if id == parent || (!includingParent && node.parent == parent) {
                node.parent = nil
                result.roots.append(id)
            }
            result.nodes[id] = node
            result.storedBytes += Self.bytes(id, node.data)
            if expanded.contains(id) { result.expanded.insert(id) }
        }
        return result
    }

    /// A text dump in the shape of UIKit's `visualDescription()`: one line per item, indented two spaces
    /// per level, `+` for expanded or `-`, `*` for visible or a space, then the identifier.
    public var visualDescription: String {
        var lines = ["<SectionSnapshot: \(count) items"]
        var stack: [(id: String, level: Int, visible: Bool)] = roots.reversed().map { ($0, 0, true) }
        while let (id, level, visible) = stack.popLast() {
            let marker = (expanded.contains(id) ? "+" : "-") + (visible ? "*" : " ")
            lines.append(String(repeating: "  ", count: level) + marker + " " + id)
            let childrenVisible = visible && expanded.contains(id)
            for child in nodes[id]!.children.reversed() { stack.append((child, level + 1, childrenVisible)) }
        }
        lines.append(">")
        return lines.joined(separator: "\n")
    }

    // MARK: Helpers

    private func checkExists(_ item: String, role: String) throws {
        guard nodes[item] != nil else {
            throw SnapshotError(
                .itemNotFound, "\(role) \"\(item)\" does not exist in the section snapshot.", identifiers: [item])
        }
    }

    private func checkNew(_ items: [Item]) throws {
        var seen = Set<String>()
        var duplicates: [String] = []
        for item in items where (!seen.insert(item.id).inserted || nodes[item.id] != nil) && !duplicates.contains(item.id) {
            duplicates.append(item.id)
        }
        if !duplicates.isEmpty {
            throw SnapshotError(
                .duplicateItem,
                "Identifiers in a section snapshot must be unique. Duplicate item identifiers: \(quoted(duplicates)).",
                identifiers: duplicates)
        }
    }

    private func checkNoClash(with snapshot: SectionSnapshot) throws {
        let clashes = snapshot.nodes.keys.filter { nodes[$0] != nil }.sorted()
        if !clashes.isEmpty {
            throw SnapshotError(
                .duplicateItem,
                "Identifiers in a section snapshot must be unique. Duplicate item identifiers: \(quoted(clashes)).",
                identifiers: clashes)
        }
    }

    private mutating func insert(_ items: [Item], relativeTo destination: String, after: Bool) throws {
        try checkExists(destination, role: "Item to insert \(after ? "after" : "before")")
        try checkNew(items)
        let parent = nodes[destination]!.parent
        for item in items {
            nodes[item.id] = Node(data: item.data, parent: parent, children: [])
            storedBytes += Self.bytes(item.id, item.data)
        }
        insertSiblings(items.map(\.id), parent: parent, relativeTo: destination, after: after)
    }

    private mutating func insert(_ snapshot: SectionSnapshot, relativeTo destination: String, after: Bool) throws {
        try checkExists(destination, role: "Item to insert \(after ? "after" : "before")")
        try checkNoClash(with: snapshot)
        let parent = nodes[destination]!.parent
        graft(snapshot, under: parent)
        insertSiblings(snapshot.roots, parent: parent, relativeTo: destination, after: after)
    }

    private mutating func insertSiblings(_ ids: [String], parent: String?, relativeTo destination: String, after: Bool) {
        func place(_ siblings: inout [String]) {
            let index = siblings.firstIndex(of: destination)!
            siblings.insert(contentsOf: ids, at: after ? index + 1 : index)
        }
        if let parent { place(&nodes[parent]!.children) } else { place(&roots) }
    }

    /// Copies the nodes of `snapshot` in, with its roots hung under `parent` (not yet listed as children).
    private mutating func graft(_ snapshot: SectionSnapshot, under parent: String?) {
        for (id, var node) in snapshot.nodes {
            if node.parent == nil { node.parent = parent }
            nodes[id] = node
        }
        storedBytes += snapshot.storedBytes
        expanded.formUnion(snapshot.expanded)
    }

    /// The identifiers below `root` in depth-first order, iteratively.
    private func subtree(of root: String, includingRoot: Bool) -> [String] {
        var result: [String] = []
        var stack: [String] = includingRoot ? [root] : nodes[root]!.children.reversed()
        while let id = stack.popLast() {
            result.append(id)
            stack.append(contentsOf: nodes[id]!.children.reversed())
        }
        return result
    }

    private func depthFirst(visibleOnly: Bool) -> [String] {
        var result: [String] = []
        result.reserveCapacity(nodes.count)
        var stack: [String] = roots.reversed()
        while let id = stack.popLast() {
            result.append(id)
            if !visibleOnly || expanded.contains(id) { stack.append(contentsOf: nodes[id]!.children.reversed()) }
        }
        return result
    }
}

extension SectionSnapshot {
    /// A flat section snapshot holding `items` at the root level.
    ///
    /// - Throws: `.duplicateItem`.
    public init(items: [Item]) throws {
        try append(items)
    }
}

extension Snapshot {
    /// Puts a section snapshot into a section, as UIKit's `apply(_:to:)` does: the section is appended
    /// when missing, its items are replaced by the section snapshot's **visible** items otherwise.
    /// Visible items that exist in other sections are moved here, with a warning.
    ///
    /// - Complexity: O(items of the section + visible items of `sectionSnapshot`).
    @discardableResult
    public mutating func apply(_ sectionSnapshot: SectionSnapshot, to section: String) -> [SnapshotWarning] {
        if contains(section: section) {
            deleteItems((try? itemIdentifiers(inSection: section)) ?? [])
        } else {
            try! appendSections([Section(section)])  // cannot fail: the section does not exist
        }
        // Cannot fail: the identifiers of a section snapshot are unique and the section exists.
        return try! appendItems(sectionSnapshot.visibleItems, toSection: section)
    }

    /// A flat section snapshot of a section's items (what UIKit returns when none was applied).
    ///
    /// - Throws: `.sectionNotFound`.
    public func sectionSnapshot(of section: String) throws -> SectionSnapshot {
        try SectionSnapshot(items: items(inSection: section))
    }
}
