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

    /// Whether the view has expanded or collapsed nothing itself (it shows the data source's snapshot).
    public var isEmpty: Bool { overrides.isEmpty }

    /// Whether `item` of `section`'s outline is expanded in this view.
    public func isExpanded(_ item: String, inSection section: String, outline: SectionSnapshot) -> Bool {
        overrides[section]?[item] ?? ((try? outline.isExpanded(item)) ?? false)
    }

    /// Records that the view expands (or collapses) `items` of `section` itself. Call `update` next.
    public mutating func set(_ items: [String], expanded: Bool, inSection section: String) {
        for item in items { overrides[section, default: [:]][item] = expanded }
    }

    /// Sets the overrides a view asked for when it attached (`attach` with `expansion`).
    public mutating func set(_ requested: [String: [String: Bool]]) {
        for (section, items) in requested where !items.isEmpty { overrides[section, default: [:]].merge(items) { _, new in new } }
    }

    /// Brings the projection to `model` as it is now and returns what changed for this view: the
    /// difference between the projections before and after, then the items `sharedChanges` reloaded or
    /// reconfigured (or, with `nil`, every item: the data source was reloaded whole) and those whose depth
    /// or expansion changed, reconfigured where the view still shows them, then the sections it reloaded.
    ///
    /// Overrides of items (and sections) the outlines no longer hold are dropped first; all of them when
    /// the scope is `shared`. O(items of the snapshot).
    public mutating func update(to model: DataSourceModel, sharedChanges: StagedChanges?) -> StagedChanges {
        prune(model)
        let before = projection
        let placementsBefore = placements
        project(model)
        var changes = projection.difference(from: before)
        var reconfigured = Set<String>()
        for stage in changes.stages {
            for change in stage.itemReconfigures { reconfigured.insert(change.item.id) }
            for change in stage.itemReloads { reconfigured.insert(change.item.id) }
        }
        var follow = ChangeStage()
        func reconfigure(_ item: String) {
            guard !reconfigured.contains(item), before.contains(item: item), let path = projection.indexPath(ofItem: item),
                let data = projection.data(ofItem: item)
            else { return }
            reconfigured.insert(item)
            follow.itemReconfigures.append(ItemChange(indexPath: path, item: Item(item, data: data)))
        }
        var sectionReloads = ChangeStage()
        if let sharedChanges {
            for stage in sharedChanges.stages {
                for change in stage.itemReloads { reconfigure(change.item.id) }
                for change in stage.itemReconfigures { reconfigure(change.item.id) }
                for reload in stage.sectionReloads {
                    guard let index = projection.index(ofSection: reload.section.id), before.contains(section: reload.section.id) else { continue }
                    sectionReloads.sectionReloads.append(SectionReload(index: index, section: reload.section))
                }
            }
        } else {
            for section in projection.sectionIdentifiers {
                for item in (try? projection.itemIdentifiers(inSection: section)) ?? [] { reconfigure(item) }
            }
        }
        // Disclosures and indentation: the sections the view overrides now or did before (one it no
        // longer overrides, or did not yet, shows the data source's expansion).
        for section in Set(placements.keys).union(placementsBefore.keys) {
            guard let outline = model.outlines[section] else { continue }
            let shown = placements[section] ?? Self.placements(of: outline, overrides: [:])
            let previous = placementsBefore[section] ?? Self.placements(of: outline, overrides: [:])
            for (item, placement) in shown where previous[item] != nil && previous[item] != placement { reconfigure(item) }
        }
        follow.itemReconfigures.sort { $0.indexPath < $1.indexPath }
        sectionReloads.sectionReloads.sort { $0.index < $1.index }
        // A reloaded section's items need no reconfigure of their own in the same change.
        if !sectionReloads.isEmpty {
            let reloaded = Set(sectionReloads.sectionReloads.map(\.index))
            follow.itemReconfigures.removeAll { reloaded.contains($0.indexPath.section) }
        }
        if !follow.isEmpty { changes.stages.append(follow) }
        if !sectionReloads.isEmpty { changes.stages.append(sectionReloads) }
        return changes
    }

    /// Drops what the view set on items (and sections) the outlines no longer hold; everything when the
    /// data source shares one expansion.
    private mutating func prune(_ model: DataSourceModel) {
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
        for (section, items) in overrides {
            guard let outline = model.outlines[section], projection.contains(section: section) else { continue }
            let visible = outline.visibleItems { item in items[item] ?? ((try? outline.isExpanded(item)) ?? false) }
            // The outline's items are unique and the section exists: replacing its items cannot fail.
            _ = try? projection.perform(.replaceItems(inSection: section, with: visible.map(\.item)))
            placements[section] = Self.placements(of: visible, outline: outline, overrides: items)
        }
        self.projection = projection
        self.placements = placements
    }
}
