import DiffableCore
import ListLayout

/// Everything a terminal view knows about what it shows: the data source's snapshot (kept current by
/// applying pushed changes), its layout, the configured cells on screen, how far it is scrolled and
/// where its cursor is. Pure: the `listview` executable does the talking to listd.
public struct ViewModel: Sendable {
    public var snapshot: Snapshot { didSet { cachedLayout = nil } }
    public var version: Int
    public var layoutDescription: LayoutDescription { didSet { cachedLayout = nil } }
    /// Viewport size in terminal cells.
    public var width: Int { didSet { cachedLayout = nil } }
    public var height: Int { didSet { cachedLayout = nil } }
    /// The first content row shown, and how far each orthogonally scrolling section is scrolled (by section identifier).
    public var top = 0
    public var horizontalOffsets: [String: Int] = [:]
    /// The item the cursor is on.
    public var cursor: String?
    /// Items the last change inserted, moved, reloaded or reconfigured when it was to be animated
    /// (`animatingDifferences`): drawn marked until `clearMarks()` (a terminal's brief animation).
    public private(set) var marked: Set<String> = []

    /// Configured cells on screen, by key (an item's identifier, or `supplementaryKey`).
    public private(set) var cells: [String: JSONValue] = [:]
    /// Rows a cell needed when it was configured, by item (self-sizing).
    private var measured: [String: Int] = [:] { didSet { cachedLayout = nil } }
    /// Supplementary views the data source has no registration for (not laid out).
    private var absentSupplementaries: Set<String> = [] { didSet { cachedLayout = nil } }
    /// The layout of the current snapshot, size and measured cells: computed again only after one of
    /// them changed, so moving the cursor and scrolling cost what is on screen.
    private var cachedLayout: CollectionLayout?

    public init(snapshot: Snapshot, version: Int, layout: LayoutDescription, width: Int, height: Int) {
        self.snapshot = snapshot
        self.version = version
        layoutDescription = layout
        self.width = width
        self.height = height
    }

    public static func supplementaryKey(_ elementKind: String, section: String) -> String { "\u{1}\(elementKind)\u{1}\(section)" }

    /// The key of a supplementary view anchored to an item (a badge).
    public static func itemSupplementaryKey(_ elementKind: String, item: String) -> String { "\u{2}\(elementKind)\u{2}\(item)" }

    /// The key a configured cell (from dequeue, dequeueSupplementary, setState or cellUpdated) is kept
    /// under: its item, its section's supplementary kind, or its item's supplementary kind.
    public static func key(ofCell cell: JSONValue) -> String? {
        if let kind = cell["elementKind"]?.stringValue {
            if let item = cell["item"]?.stringValue { return itemSupplementaryKey(kind, item: item) }
            return cell["section"]?.stringValue.map { supplementaryKey(kind, section: $0) }
        }
        return cell["item"]?.stringValue
    }

    /// What a pending supplementary view is: its kind and index path (the section's with item 0, or
    /// the decorated item's), and whether it is anchored to an item.
    public struct PendingSupplementary: Hashable, Sendable {
        public var elementKind: String
        public var indexPath: IndexPath
        public var anchoredToItem: Bool
    }

    // MARK: Layout

    /// The layout for the current snapshot, size and measured cells (O(items) after a change to one of
    /// them, O(1) otherwise).
    public mutating func layout() -> CollectionLayout {
        if let cachedLayout { return cachedLayout }
        let layout = computeLayout()
        cachedLayout = layout
        return layout
    }

    private func computeLayout() -> CollectionLayout {
        let sections = snapshot.sections
        let inputs = sections.map { SectionInput(identifier: $0.id, itemCount: (try? snapshot.numberOfItems(inSection: $0.id)) ?? 0) }
        return CollectionLayout(
            layoutDescription, sections: inputs, width: width, viewportHeight: height,
            hasSupplementary: { section, kind in !absentSupplementaries.contains(Self.supplementaryKey(kind, section: sections[section].id)) },
            measuredHeight: { section, item in
                guard !measured.isEmpty, let identifier = snapshot.item(at: IndexPath(section: section, item: item))?.id else { return nil }
                return measured[identifier]
            })
    }

    /// What is on screen.
    public func visibleElements(in layout: CollectionLayout) -> [VisibleElement] {
        var offsets: [Int: Int] = [:]
        for (index, section) in layout.sections.enumerated() where section.scrollsOrthogonally {
            offsets[index] = horizontalOffsets[section.identifier] ?? 0
        }
        return layout.visibleElements(top: top, height: height, horizontalOffsets: offsets)
    }

    /// What is about to come on screen (UIKit's prefetching): the items of the next screen down, and in
    /// a sideways row on screen the next two groups past its right edge. Not the visible ones.
    public func prefetchPaths(in layout: CollectionLayout, visible: [VisibleElement]) -> [IndexPath] {
        var shown = Set<IndexPath>()
        for element in visible { if case .item(let item) = element.kind { shown.insert(IndexPath(section: element.section, item: item)) } }
        var offsets: [Int: Int] = [:]
        for (index, section) in layout.sections.enumerated() where section.scrollsOrthogonally {
            offsets[index] = horizontalOffsets[section.identifier] ?? 0
        }
        var paths: [IndexPath] = []
        for element in layout.visibleElements(top: top + height, height: height, horizontalOffsets: offsets) {
            guard case .item(let item) = element.kind else { continue }
            let path = IndexPath(section: element.section, item: item)
            if !shown.contains(path) { paths.append(path) }
        }
        for section in Set(visible.map(\.section)) where section < layout.sections.count && layout.sections[section].scrollsOrthogonally {
            let last = visible.compactMap { element -> Int? in
                guard element.section == section, case .item(let item) = element.kind else { return nil }
                return item
            }.max() ?? -1
            let count = layout.sections[section].items.count
            let ahead = 2 * max(1, layout.sections[section].itemsPerGroup)
            for item in (last + 1)..<min(count, last + 1 + ahead) { paths.append(IndexPath(section: section, item: item)) }
        }
        return paths
    }

    /// The key of a visible element.
    public func key(of element: VisibleElement) -> String {
        switch element.kind {
        case .item(let index): return snapshot.item(at: IndexPath(section: element.section, item: index))?.id ?? ""
        case .supplementary(let kind): return Self.supplementaryKey(kind, section: snapshot.sectionIdentifier(at: element.section) ?? "")
        case .itemSupplementary(let kind, let index):
            return Self.itemSupplementaryKey(kind, item: snapshot.item(at: IndexPath(section: element.section, item: index))?.id ?? "")
        }
    }

    /// What to ask listd for: visible items and supplementary views without a cell yet, and the cells
    /// that left the screen (to hand back with `endDisplaying`).
    public func plan(_ visible: [VisibleElement]) -> (items: [IndexPath], supplementaries: [PendingSupplementary], released: [String]) {
        var items: [IndexPath] = []
        var supplementaries: [PendingSupplementary] = []
        var shown = Set<String>()
        for element in visible {
            let key = key(of: element)
            shown.insert(key)
            guard cells[key] == nil else { continue }
            switch element.kind {
            case .item(let index): items.append(IndexPath(section: element.section, item: index))
            case .supplementary(let kind):
                supplementaries.append(PendingSupplementary(elementKind: kind, indexPath: IndexPath(section: element.section, item: 0), anchoredToItem: false))
            case .itemSupplementary(let kind, let index):
                // A kind the data source gives no view for is not asked for again.
                guard !absentSupplementaries.contains(Self.supplementaryKey(kind, section: snapshot.sectionIdentifier(at: element.section) ?? "")) else { continue }
                supplementaries.append(PendingSupplementary(elementKind: kind, indexPath: IndexPath(section: element.section, item: index), anchoredToItem: true))
            }
        }
        let released = cells.filter { !shown.contains($0.key) }.compactMap { $0.value["cell"]?.stringValue }.sorted()
        return (items, supplementaries, released)
    }

    // MARK: Cells

    /// Records a configured cell (from dequeue, dequeueSupplementary, setState or cellUpdated); returns
    /// whether its height changed (the layout must be computed again).
    @discardableResult
    public mutating func store(_ cell: JSONValue) -> Bool {
        guard let key = Self.key(ofCell: cell) else { return false }
        if cell["content"] == nil, cell["error"] != nil, let previous = cells[key] {
            // A failed reconfiguration keeps what was shown.
            var kept = previous
            if case .object(var members) = kept {
                members["error"] = cell["error"]
                kept = .object(members)
            }
            cells[key] = kept
            return false
        }
        cells[key] = cell
        guard cell["elementKind"] == nil else { return false }
        let rows = CellRenderer.height(of: cell, width: width)
        let before = measured[key] ?? 1
        guard before != rows else { return false }
        measured[key] = rows == 1 ? nil : rows
        return true
    }

    /// The data source has no registration for this supplementary view: leave it out of the layout.
    public mutating func markAbsent(elementKind: String, section: String) {
        absentSupplementaries.insert(Self.supplementaryKey(elementKind, section: section))
    }

    /// Forgets the error cells (a failed dequeue: no cell to hand back) of elements not in `visible`,
    /// as the others are forgotten once handed back; one coming back on screen is dequeued again.
    public mutating func forgetErrorCells(notIn visible: [VisibleElement]) {
        let shown = Set(visible.map { key(of: $0) })
        for (key, cell) in cells where cell["cell"] == nil && !shown.contains(key) { cells[key] = nil }
    }

    /// Forgets cells that were handed back.
    public mutating func forget(cellIdentifiers: Set<String>) {
        cells = cells.filter { !cellIdentifiers.contains($0.value["cell"]?.stringValue ?? "") }
    }

    /// Forgets every cell (a re-attach starts over).
    public mutating func forgetAllCells() {
        cells = [:]
        if !measured.isEmpty { measured = [:] }
        if !absentSupplementaries.isEmpty { absentSupplementaries = [] }
    }

    // MARK: Changes

    /// Applies a pushed `changes` event with the core's stage application. Cells of deleted and
    /// reloaded items and sections are forgotten (listd already took them back); reloaded ones are
    /// dequeued again when visible, whatever registration they come from now. The cursor stays on its
    /// item wherever it moved.
    public mutating func apply(_ changes: StagedChanges, version newVersion: Int, reloadData: Bool, animatingDifferences: Bool = true) throws {
        let reloaded = try applyStages(changes)
        version = newVersion
        marked = animatingDifferences && !reloadData ? changedItems(changes, reloaded: reloaded.items) : []
        if reloadData {
            cells = [:]
            if !measured.isEmpty { measured = [:] }
        } else {
            let (reloadedItems, reloadedSections) = reloaded
            for item in reloadedItems {
                cells[item] = nil
                measured[item] = nil
            }
            cells = cells.filter { key, _ in
                if key.hasPrefix("\u{2}") {
                    // A badge goes with its item.
                    let item = String(key.split(separator: "\u{2}", omittingEmptySubsequences: false).last ?? "")
                    guard snapshot.contains(item: item), !reloadedItems.contains(item) else { return false }
                    return reloadedSections.isEmpty || !reloadedSections.contains(snapshot.sectionIdentifier(containingItem: item) ?? "")
                }
                if key.hasPrefix("\u{1}") {
                    let section = String(key.split(separator: "\u{1}", omittingEmptySubsequences: false).last ?? "")
                    return snapshot.contains(section: section) && !reloadedSections.contains(section)
                }
                guard snapshot.contains(item: key) else { return false }
                return reloadedSections.isEmpty || !reloadedSections.contains(snapshot.sectionIdentifier(containingItem: key) ?? "")
            }
            if measured.contains(where: { !snapshot.contains(item: $0.key) }) { measured = measured.filter { snapshot.contains(item: $0.key) } }
        }
        if let cursor, !snapshot.contains(item: cursor) { self.cursor = nil }
        if cursor == nil { cursor = snapshot.item(at: IndexPath(section: 0, item: 0)).map(\.id) ?? firstItem() }
    }

    /// Applies the stages one by one, noting the items and sections each reloads. Reloads name only
    /// positions before their stage (the wire carries no identifiers for them), so they are read off the
    /// snapshot before that stage is applied.
    private mutating func applyStages(_ changes: StagedChanges) throws -> (items: Set<String>, sections: Set<String>) {
        var items = Set<String>()
        var sections = Set<String>()
        for stage in changes.stages {
            for reload in stage.itemReloads {
                if let item = snapshot.item(at: reload.indexPath) { items.insert(item.id) }
            }
            for reload in stage.sectionReloads {
                if let section = snapshot.sectionIdentifier(at: reload.index) { sections.insert(section) }
            }
            try snapshot.apply(StagedChanges(stages: [stage]))
        }
        return (items, sections)
    }

    /// Forgets the marks of the last animated change (its moment is over).
    public mutating func clearMarks() { marked = [] }

    /// The items a change inserted, reloaded or reconfigured, the items of inserted sections, and (for a
    /// one-stage change, whose destinations are final) the items it moved.
    private func changedItems(_ changes: StagedChanges, reloaded: Set<String>) -> Set<String> {
        var items = reloaded
        for stage in changes.stages {
            for insert in stage.itemInserts { items.insert(insert.item.id) }
            for change in stage.itemReconfigures { items.insert(change.item.id) }
            for insert in stage.sectionInserts { items.formUnion(insert.items.map(\.id)) }
        }
        if changes.stages.count == 1 {
            for move in changes.stages[0].itemMoves { if let item = snapshot.item(at: move.to) { items.insert(item.id) } }
        }
        return items.filter { snapshot.contains(item: $0) }
    }

    private func firstItem() -> String? {
        for section in snapshot.sectionIdentifiers {
            if let first = (try? snapshot.itemIdentifiers(inSection: section))?.first { return first }
        }
        return nil
    }

    // MARK: Scrolling and the cursor

    /// Keeps `top` inside the content.
    public mutating func clampScroll(_ layout: CollectionLayout) {
        top = max(0, min(top, layout.contentHeight - height))
    }

    /// Scrolls so that the cursor's item is fully on screen (vertically, and sideways in its section).
    public mutating func revealCursor(_ layout: CollectionLayout) {
        guard let cursor, let path = snapshot.indexPath(ofItem: cursor), path.section < layout.sections.count else { return }
        let section = layout.sections[path.section]
        guard path.item < section.items.count else { return }
        let frame = section.items[path.item]
        // A section's header comes into view with its first row.
        let sectionTop = path.item < section.itemsPerGroup ? section.frame.y : frame.y
        if frame.y < top || sectionTop < top && frame.maxY - sectionTop <= height { top = min(frame.y, sectionTop) }
        if frame.maxY > top + height { top = frame.maxY - height }
        if section.scrollsOrthogonally {
            var offset = horizontalOffsets[section.identifier] ?? 0
            var steps = 0
            while frame.x - offset < 0 && steps < 10_000 {
                offset = layout.scrolled(section: path.section, from: offset, direction: -1)
                steps += 1
            }
            while frame.maxX - offset > width && steps < 10_000 {
                let next = layout.scrolled(section: path.section, from: offset, direction: 1)
                if next == offset { break }
                offset = next
                steps += 1
            }
            horizontalOffsets[section.identifier] = offset
        }
        clampScroll(layout)
    }

    private func itemCount(ofSection index: Int) -> Int {
        snapshot.sectionIdentifier(at: index).flatMap { try? snapshot.numberOfItems(inSection: $0) } ?? 0
    }

    /// Moves the cursor `by` items in reading order (across sections).
    public mutating func moveCursor(by delta: Int) {
        guard let cursor, var path = snapshot.indexPath(ofItem: cursor) else {
            self.cursor = firstItem()
            return
        }
        var remaining = abs(delta)
        while remaining > 0 {
            if delta > 0 {
                if path.item + 1 < itemCount(ofSection: path.section) {
                    path.item += 1
                } else {
                    var next = path.section + 1
                    while next < snapshot.numberOfSections, itemCount(ofSection: next) == 0 { next += 1 }
                    guard next < snapshot.numberOfSections else { break }
                    path = IndexPath(section: next, item: 0)
                }
            } else {
                if path.item > 0 {
                    path.item -= 1
                } else {
                    var previous = path.section - 1
                    while previous >= 0, itemCount(ofSection: previous) == 0 { previous -= 1 }
                    guard previous >= 0 else { break }
                    path = IndexPath(section: previous, item: itemCount(ofSection: previous) - 1)
                }
            }
            remaining -= 1
        }
        self.cursor = snapshot.item(at: path)?.id ?? cursor
    }

    /// Moves the cursor down (or up) a row: past the rest of its group in grids, out of a sideways
    /// scrolling section at once.
    public mutating func moveCursorRow(_ direction: Int, in layout: CollectionLayout) {
        guard let cursor, let path = snapshot.indexPath(ofItem: cursor), path.section < layout.sections.count else {
            moveCursor(by: direction)
            return
        }
        let section = layout.sections[path.section]
        if section.scrollsOrthogonally {
            // Leave the band: to the first item after it, or the last before it.
            let count = section.items.count
            moveCursor(by: direction > 0 ? count - path.item : -(path.item + 1))
            if direction < 0, let now = self.cursor, let moved = snapshot.indexPath(ofItem: now), moved.section == path.section { self.cursor = cursor }
            return
        }
        // The next item whose row starts below (above) this one's, in the same column when there is one.
        let frame = section.items[path.item]
        var candidate = path.item + direction
        while candidate >= 0 && candidate < section.items.count && section.items[candidate].y == frame.y { candidate += direction }
        if candidate >= 0 && candidate < section.items.count {
            let rowY = section.items[candidate].y
            var best = candidate
            var probe = candidate
            while probe >= 0 && probe < section.items.count && section.items[probe].y == rowY {
                if abs(section.items[probe].x - frame.x) < abs(section.items[best].x - frame.x) { best = probe }
                probe += direction
            }
            self.cursor = snapshot.item(at: IndexPath(section: path.section, item: best))?.id ?? cursor
        } else {
            moveCursor(by: direction > 0 ? section.items.count - path.item : -(path.item + 1))
        }
    }

    /// h / l: the previous or next item in the cursor's row (in a sideways band, scrolling it).
    public mutating func moveCursorSideways(_ direction: Int, in layout: CollectionLayout) {
        guard let cursor, let path = snapshot.indexPath(ofItem: cursor), path.section < layout.sections.count else { return }
        let section = layout.sections[path.section]
        let target = path.item + direction
        guard target >= 0 && target < section.items.count else { return }
        if section.scrollsOrthogonally || section.items[target].y == section.items[path.item].y {
            self.cursor = snapshot.item(at: IndexPath(section: path.section, item: target))?.id ?? cursor
        }
    }

    /// The cursor's section and item, when the cursor is on an item.
    public var cursorPath: IndexPath? { cursor.flatMap { snapshot.indexPath(ofItem: $0) } }

    // MARK: Drawing

    /// Draws the visible part of `layout` with the cells on hand.
    public func draw(_ layout: CollectionLayout, visible: [VisibleElement], on canvas: inout Canvas, showCursor: Bool) {
        // Boxes of grouped lists first, cut by the viewport's top and bottom.
        for section in layout.sections where section.frame.maxY > top && section.frame.y < top + height {
            guard let box = section.box else { continue }
            canvas.box(
                x: box.x, y: box.y - top, width: box.width, height: box.height, openTop: box.y < top, openBottom: box.maxY > top + height)
        }
        for element in visible {
            let key = key(of: element)
            guard let cell = cells[key] else { continue }
            switch element.kind {
            case .item:
                CellRenderer.draw(cell, in: element.frame, on: &canvas, isCursor: showCursor && key == cursor)
                if marked.contains(key) {
                    // Just changed, with animation: yellow (bold without colours) for a moment.
                    canvas.restyle(x: element.frame.x, y: element.frame.y, width: element.frame.width, height: element.frame.height) {
                        $0.foreground = 33
                        $0.bold = true
                    }
                }
            case .supplementary: CellRenderer.draw(cell, in: element.frame, on: &canvas)
            case .itemSupplementary: CellRenderer.drawBadge(cell, in: element.frame, on: &canvas)
            }
        }
    }
}
