import CellCore
import DiffableCore
import ListLayout
import ListStore

/// One named data source's state: its snapshot, version, outlines, cell providers and layout.
///
/// Readable by everyone; changed only by `StateModel.apply(_:limits:)` (every setter is internal to
/// this module), so every change passes the one commit path.
public final class DataSourceModel {
    public let name: String
    /// A random identifier made when the data source is created; a data source dropped and created again
    /// under the same name gets another, so a view can tell it is not the one it followed.
    public let incarnation: String
    /// The uid of the user that owns it: its creator (0 for root, and for data sources listd made itself).
    public let owner: UInt32
    /// Increments by one with every accepted change: the total order of the data source's changes.
    public internal(set) var version: Int
    public internal(set) var snapshot: Snapshot
    /// Section snapshots applied with `applySectionSnapshot`, by section. An outline is kept while the
    /// section's items are still its visible items; any other change to the section drops it.
    public private(set) var outlines: [String: SectionSnapshot]
    /// What the outlines store (their own copies of identifiers and payloads), in all and by section,
    /// kept by `setOutline(_:for:)`.
    public private(set) var outlineBytes = 0
    private var outlineBytesBySection: [String: Int] = [:]
    /// Counts the changes to `outlines` (a section's set, replaced or dropped) and to the expansion
    /// scope: a view with an expansion of its own compares it with what it last projected.
    public private(set) var outlineRevision = 0
    /// The cell provider rules (`setCellProvider`).
    public internal(set) var cellProvider: CellProvider?
    /// The supplementary providers, by element kind.
    public internal(set) var supplementaryProviders: [String: CellProvider]
    /// The compositional layout every view renders (`setLayout`).
    public internal(set) var layout: LayoutDescription
    /// Whose outline expansion views show (`setExpansionScope`).
    public internal(set) var expansionScope: ExpansionScope {
        didSet { if expansionScope != oldValue { outlineRevision += 1 } }
    }

    init(name: String, incarnation: String, content: DataSourceContent) {
        self.name = name
        self.incarnation = incarnation
        owner = content.owner
        version = content.version
        snapshot = content.snapshot
        outlines = [:]
        cellProvider = content.cellProvider
        supplementaryProviders = content.supplementaryProviders
        layout = content.layout
        expansionScope = content.expansionScope
        for (section, outline) in content.outlines { setOutline(outline, for: section) }
    }

    /// Everything but the name and incarnation, as a value (for a checkpoint).
    public var content: DataSourceContent {
        DataSourceContent(
            owner: owner, version: version, snapshot: snapshot, outlines: outlines, cellProvider: cellProvider,
            supplementaryProviders: supplementaryProviders, layout: layout, expansionScope: expansionScope)
    }

    /// The bytes the data source stores (what `maxBytesPerUser` counts): the snapshot's identifiers and
    /// payloads and the outlines' own copies. O(1).
    public var storedBytes: Int { snapshot.storedBytes + outlineBytes }

    /// Sets (or, with `nil`, drops) a section's outline, keeping `outlineBytes`. O(that outline's items).
    func setOutline(_ outline: SectionSnapshot?, for section: String) {
        outlineRevision += 1
        outlineBytes -= outlineBytesBySection[section] ?? 0
        outlines[section] = outline
        outlineBytesBySection[section] = outline?.storedBytes
        outlineBytes += outlineBytesBySection[section] ?? 0
    }

    /// Takes everything but the name, incarnation and owner from `other` (a rehearsal's result), which
    /// gives its snapshot and outlines up (so that they stay uniquely referenced here: the next edit
    /// changes them in place): O(outlines).
    func adopt(_ other: DataSourceModel) {
        version = other.version
        snapshot = other.snapshot
        other.snapshot = Snapshot()
        outlines = other.outlines
        other.outlines = [:]
        outlineRevision += 1
        outlineBytes = other.outlineBytes
        outlineBytesBySection = other.outlineBytesBySection
        cellProvider = other.cellProvider
        supplementaryProviders = other.supplementaryProviders
        layout = other.layout
        expansionScope = other.expansionScope
    }

    static func storedBytes(of outlines: [String: SectionSnapshot]) -> Int {
        outlines.values.reduce(0) { $0 + $1.storedBytes }
    }

    /// Every item the data source holds: the snapshot's, and those collapsed away inside outlines (what
    /// the item limits and quotas count).
    ///
    /// - Complexity: O(1) without outlines; O(number of outlines) with.
    public var storedItemCount: Int {
        var count = snapshot.numberOfItems
        for (section, outline) in outlines {
            count += outline.count - ((try? snapshot.numberOfItems(inSection: section)) ?? 0)
        }
        return count
    }

    /// The outline of a section: the stored one, or a flat one made from its items; `nil` when the
    /// section does not exist.
    public func outline(of section: String) -> SectionSnapshot? {
        if let stored = outlines[section] { return stored }
        return try? snapshot.sectionSnapshot(of: section)
    }

    /// Drops outlines whose section no longer shows exactly their visible items. With `syncingData`
    /// (the change may have given items new payloads: `updateItems`, `apply`), the outlines kept take
    /// their visible items' payloads from the snapshot, so that expanding, collapsing and views with an
    /// expansion of their own show what the data source holds.
    func reconcileOutlines(syncingData: Bool = false) {
        guard !outlines.isEmpty else { return }
        for (section, outline) in outlines {
            let current = (try? snapshot.itemIdentifiers(inSection: section)) ?? nil
            let visible = outline.visibleItems
            guard current == visible.map(\.id) else {
                setOutline(nil, for: section)
                continue
            }
            guard syncingData else { continue }
            var synced = outline
            var changed = false
            for item in visible {
                guard let data = snapshot.data(ofItem: item.id), data != item.data else { continue }
                synced.setData(data, of: item.id)
                changed = true
            }
            if changed { setOutline(synced, for: section) }
        }
    }
}
