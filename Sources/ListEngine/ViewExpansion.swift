import DiffableCore
import ListStore

/// One view's own expansion of a data source's outlines, for a data source whose expansion scope is
/// `perView`: the outline items the view expanded or collapsed itself, over the data source's expansion,
/// and the snapshot the view shows as a result (its *projection*).
///
/// Every other item follows the data source's expansion: an item the owner expands is expanded in this
/// view too unless the view collapsed it itself. What the view expanded or collapsed is forgotten with
/// the item (or the section's outline) and all at once when the scope becomes `shared`.
///
/// A view's index paths are its projection's: `dequeue` and the other view commands read it, and every
/// change of the data source becomes, for this view, the difference between its projections before and
/// after (`update(to:sharedChanges:)`). A view without an expansion of its own shows the data source's
/// snapshot and costs nothing; one with it holds its own copy of the snapshot and costs a diff of it
/// per change (O(items)). Pure: no I/O.
public struct ViewExpansion {
    /// What the view set itself, by section then item: expanded (`true`) or collapsed (`false`).
    public private(set) var overrides: [String: [String: Bool]] = [:]
    /// What the view shows.
    public private(set) var projection: Snapshot
    /// The depth and expansion of the items the view shows in the sections it overrides (what their
    /// cells show: indentation and disclosure), to reconfigure the cells whose placement changes.
    private var placements: [String: [String: Placement]] = [:]

    struct Placement: Equatable {
        var level: Int
        var expanded: Bool
    }

    /// A view showing `model`'s snapshot as it is, with nothing of its own yet.
    public init(showing model: DataSourceModel) {
        projection = model.snapshot
    }

    /// About the bytes this expansion holds for its view (what the viewer's account charges for
    /// `expansions`): its own copy of the snapshot (identifiers and payloads, and each item's entry in
    /// the copy's tables), and what it set and placed. O(sections it overrides).
    public var heldBytes: Int {
        var entries = projection.numberOfItems + projection.numberOfSections
        for items in overrides.values { entries += items.count }
        for items in placements.values { entries += items.count }
        return projection.storedBytes + entries * Self.entryBytes
    }

    /// What one item's entry in the copy's tables costs (slots, hash tables, indexes), about: measured,
    /// a view's copy of a 100,000-item outline holds about 16.5 MB in a release listd.
    public static let entryBytes = 160

    /// Whether the view has expanded or collapsed nothing itself (it shows the data source's snapshot).
    public var isEmpty: Bool { overrides.isEmpty }

    /// Whether what the view set changes nothing it shows now (the scope is shared, or none of its items
    /// is left): it shows the data source's snapshot as it is.
    public var showsSharedSnapshot: Bool { ownSections.isEmpty }

    /// Whether `item` of `section`'s outline is expanded in this view.
    public func isExpanded(_ item: String, inSection section: String, outline: SectionSnapshot) -> Bool {
        (ownSections.contains(section) ? overrides[section]?[item] : nil) ?? ((try? outline.isExpanded(item)) ?? false)
    }

    /// Records that the view expands (or collapses) `items` of `section` itself. Call `update` next.
    public mutating func set(_ items: [String], expanded: Bool, inSection section: String) {
        for item in items { overrides[section, default: [:]][item] = expanded }
        projectedRevision = -1
    }

    /// Sets the overrides a view asked for when it attached (`attach` with `expansion`).
    public mutating func set(_ requested: [String: [String: Bool]]) {
        for (section, items) in requested where !items.isEmpty { overrides[section, default: [:]].merge(items) { _, new in new } }
        projectedRevision = -1
    }

    /// Brings the projection to `model` as it is now and returns what changed for this view: the
    /// difference between the projections before and after, then the items `sharedChanges` reloaded,
    /// reconfigured or whose depth or expansion changed (where the view still shows them), then the
    /// sections it reloaded.
    ///
    /// What the view set is kept (`prune(_:)` forgets what no longer applies once the change is
    /// published, so that a change undone later finds it as it was); what does not apply now (an item or
    /// outline that is gone, everything while the scope is `shared`) is left out of the projection.
    ///
    /// A change that touches none of the sections the view shows its own way, and no section as a
    /// whole, is the view's change as it is: O(changes). Any other costs O(items of the snapshot).
    public mutating func update(to model: DataSourceModel, sharedChanges: StagedChanges) -> StagedChanges {
        if applyDirectly(sharedChanges, model) { return sharedChanges }
        let before = projection
        let placementsBefore = placements
        project(model)
        var changes = projection.difference(from: before)
        var updated = Set<String>()
        for stage in changes.stages {
            for change in stage.itemReconfigures { updated.insert(change.item.id) }
            for change in stage.itemReloads { updated.insert(change.item.id) }
        }
        // The last stage moves nothing: positions before and after it are the projection's.
        var follow = ChangeStage()
        func update(_ item: String, reload: Bool) {
            guard !updated.contains(item), before.contains(item: item), let path = projection.indexPath(ofItem: item),
                let data = projection.data(ofItem: item)
            else { return }
            updated.insert(item)
            if reload {
                follow.itemReloads.append(ItemChange(indexPath: path, item: Item(item, data: data)))
            } else {
                follow.itemReconfigures.append(ItemChange(indexPath: path, item: Item(item, data: data)))
            }
        }
        var sectionReloads = ChangeStage()
        for stage in sharedChanges.stages {
            for change in stage.itemReloads { update(change.item.id, reload: true) }
            for change in stage.itemReconfigures { update(change.item.id, reload: false) }
            for reload in stage.sectionReloads {
                guard let index = projection.index(ofSection: reload.section.id), before.contains(section: reload.section.id) else { continue }
                sectionReloads.sectionReloads.append(SectionReload(index: index, section: reload.section))
            }
        }
        // Disclosures and indentation: the sections the view shows its own way now or did before (one it
        // no longer does, or did not yet, shows the data source's expansion).
        for section in Set(placements.keys).union(placementsBefore.keys) {
            guard let outline = model.outlines[section] else { continue }
            let shown = placements[section] ?? Self.placements(of: outline, overrides: [:])
            let previous = placementsBefore[section] ?? Self.placements(of: outline, overrides: [:])
            for (item, placement) in shown where previous[item] != nil && previous[item] != placement { update(item, reload: false) }
        }
        follow.itemReloads.sort { $0.indexPath < $1.indexPath }
        follow.itemReconfigures.sort { $0.indexPath < $1.indexPath }
        sectionReloads.sectionReloads.sort { $0.index < $1.index }
        // A reloaded section's items need nothing of their own in the same change.
        if !sectionReloads.isEmpty {
            let reloaded = Set(sectionReloads.sectionReloads.map(\.index))
            follow.itemReloads.removeAll { reloaded.contains($0.indexPath.section) }
            follow.itemReconfigures.removeAll { reloaded.contains($0.indexPath.section) }
        }
        if !follow.isEmpty { changes.stages.append(follow) }
        if !sectionReloads.isEmpty { changes.stages.append(sectionReloads) }
        return changes
    }

    /// Makes the projection `model`'s as it is now, without working out what changed (the data source
    /// was reloaded whole, or a change was undone before the view was sent it). O(items).
    public mutating func reproject(_ model: DataSourceModel) {
        project(model)
    }

    /// Forgets what the view set on items (and sections) the outlines no longer hold, and everything
    /// when the data source shares one expansion: once the change that made it so is published.
    public mutating func prune(_ model: DataSourceModel) {
        guard model.expansionScope == .perView else {
            overrides = [:]
            return
        }
        for (section, items) in overrides {
            guard let outline = model.outlines[section] else {
                overrides[section] = nil
                continue
            }
            let kept = items.filter { outline.contains($0.key) }
            overrides[section] = kept.isEmpty ? nil : kept
        }
    }

    /// The outlines' revision the projection was made from (see `DataSourceModel.outlineRevision`).
    private var projectedRevision = -1
    /// The sections shown the view's own way, by identifier.
    private var ownSections: Set<String> = []

    /// Applies `changes` to the projection as they are when they touch no section the view shows its own
    /// way and no section as a whole, and the outlines are as projected; returns whether it did.
    private mutating func applyDirectly(_ changes: StagedChanges, _ model: DataSourceModel) -> Bool {
        guard model.outlineRevision == projectedRevision, model.expansionScope == .perView else { return false }
        let own = Set(ownSections.compactMap { projection.index(ofSection: $0) })
        for stage in changes.stages {
            if !stage.sectionDeletes.isEmpty || !stage.sectionInserts.isEmpty || !stage.sectionMoves.isEmpty || !stage.sectionReloads.isEmpty {
                return false
            }
            if stage.itemDeletes.contains(where: { own.contains($0.section) }) || stage.itemInserts.contains(where: { own.contains($0.indexPath.section) })
                || stage.itemMoves.contains(where: { own.contains($0.from.section) || own.contains($0.to.section) })
                || stage.itemReloads.contains(where: { own.contains($0.indexPath.section) })
                || stage.itemReconfigures.contains(where: { own.contains($0.indexPath.section) })
            {
                return false
            }
        }
        do {
            // The same sections as the data source's, at the same positions: the changes fit as they did there.
            try projection.apply(changes)
        } catch {
            assertionFailure("changes outside a view's own sections did not apply to its projection: \(error)")
            project(model)
        }
        return true
    }

    /// The placements of what `outline` shows under `overrides` over its own expansion.
    private static func placements(of outline: SectionSnapshot, overrides: [String: Bool]) -> [String: Placement] {
        placements(of: outline.visibleItems { overrides[$0] ?? ((try? outline.isExpanded($0)) ?? false) }, outline: outline, overrides: overrides)
    }

    private static func placements(of visible: [(item: Item, level: Int)], outline: SectionSnapshot, overrides: [String: Bool]) -> [String: Placement] {
        var shown: [String: Placement] = [:]
        shown.reserveCapacity(visible.count)
        for (item, level) in visible {
            shown[item.id] = Placement(level: level, expanded: overrides[item.id] ?? ((try? outline.isExpanded(item.id)) ?? false))
        }
        return shown
    }

    /// The data source's snapshot with the overridden sections' items replaced by what the view's
    /// expansion shows of their outlines.
    private mutating func project(_ model: DataSourceModel) {
        var projection = model.snapshot
        // Marks an applied snapshot carries are the data source's business: the view's diff sees payloads.
        projection.clearMarks()
        var placements: [String: [String: Placement]] = [:]
        if model.expansionScope == .perView {
            for (section, items) in overrides {
                guard let outline = model.outlines[section], projection.contains(section: section) else { continue }
                let own = items.filter { outline.contains($0.key) }
                guard !own.isEmpty else { continue }
                let visible = outline.visibleItems { item in own[item] ?? ((try? outline.isExpanded(item)) ?? false) }
                // An item the data source shows too has its payload there (the one edits keep current).
                let shown = visible.map { entry in model.snapshot.data(ofItem: entry.item.id).map { Item(entry.item.id, data: $0) } ?? entry.item }
                // The outline's items are unique and the section exists: replacing its items cannot fail.
                _ = try? projection.perform(.replaceItems(inSection: section, with: shown))
                placements[section] = Self.placements(of: visible, outline: outline, overrides: own)
            }
        }
        self.projection = projection
        self.placements = placements
        ownSections = Set(placements.keys)
        projectedRevision = model.outlineRevision
    }
}
