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
    /// Section snapshots applied with `applySectionSnapshot`, by section. Every edit keeps them (see
    /// `performKeepingOutlines(_:asBatch:)`); a whole new snapshot that lists a section otherwise replaces
    /// its outline with the flat section (`reconcileOutlinesWithSnapshot()`).
    public private(set) var outlines: [String: SectionSnapshot]
    /// What the outlines store (their own copies of identifiers and payloads), in all and by section,
    /// kept by `setOutline(_:for:)`.
    public private(set) var outlineBytes = 0
    private var outlineBytesBySection: [String: Int] = [:]
    /// Counts the changes to `outlines` (a section's set, replaced or dropped) and to the expansion
    /// scope: a view with an expansion of its own compares it with what it last projected.
    public private(set) var outlineRevision = 0
    /// The cell provider rules (`setCellProvider`).
    public internal(set) var cellProvider: CellProvider? {
        didSet { if cellProvider != oldValue { providerBytes = Self.providerBytes(of: cellProvider, supplementary: supplementaryProviders) } }
    }
    /// The supplementary providers, by element kind.
    public internal(set) var supplementaryProviders: [String: CellProvider] {
        didSet { if supplementaryProviders != oldValue { providerBytes = Self.providerBytes(of: cellProvider, supplementary: supplementaryProviders) } }
    }
    /// The compositional layout every view renders (`setLayout`).
    public internal(set) var layout: LayoutDescription {
        didSet { if layout != oldValue { layoutBytes = Self.layoutBytes(of: layout) } }
    }
    /// The layout's size as stored (what the owner's account charges for it).
    public private(set) var layoutBytes = 0
    /// The provider rules' size as stored, cell and supplementary ones (charged to the owner).
    public private(set) var providerBytes = 0
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
        layoutBytes = Self.layoutBytes(of: content.layout)
        providerBytes = Self.providerBytes(of: content.cellProvider, supplementary: content.supplementaryProviders)
        for (section, outline) in content.outlines { setOutline(outline, for: section) }
    }

    /// About the bytes `layout` holds: its stored form, and each section layout's entry in memory (a
    /// data source's default layout costs nothing).
    static func layoutBytes(of layout: LayoutDescription) -> Int {
        guard layout != LayoutDescription() else { return 0 }
        let entries = (layout.sections.count + 1) * (MemoryLayout<SectionLayout>.stride + entryOverheadBytes)
        return StateCoding.encode(DataSourceOperation.setLayout(layout)).count + entries
    }

    /// About the bytes a provider's rules hold: their stored form and each rule's entry in memory.
    static func providerBytes(of provider: CellProvider?, elementKind: String?) -> Int {
        guard let provider else { return 0 }
        let entries = (provider.rules.count + 1) * (MemoryLayout<CellProvider.Rule>.stride + entryOverheadBytes)
        return StateCoding.encode(DataSourceOperation.setCellProvider(provider, elementKind: elementKind)).count + entries
    }

    /// What an entry of a table costs besides its value (its key's storage, the table's slot, the
    /// allocator's share): measured, a 110,000-section layout holds about 64 MB in a release listd.
    static let entryOverheadBytes = 256

    static func providerBytes(of provider: CellProvider?, supplementary: [String: CellProvider]) -> Int {
        supplementary.reduce(providerBytes(of: provider, elementKind: nil)) { $0 + providerBytes(of: $1.value, elementKind: $1.key) }
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

    /// Brings the outlines to a whole new snapshot (`apply`): an outline whose section lists exactly its
    /// visible items (and none of its collapsed ones elsewhere) is kept, its rows' payloads taken from the
    /// snapshot; any other is replaced by the flat section the snapshot lists, with an `outline-replaced`
    /// warning counting the collapsed items that went with it. Returns the warnings and whether an
    /// outline changed. O(items of the outlines).
    func reconcileOutlinesWithSnapshot() -> (warnings: [SnapshotWarning], changed: Bool) {
        guard !outlines.isEmpty else { return ([], false) }
        var warnings: [SnapshotWarning] = []
        var changed = false
        for (section, outline) in outlines.sorted(by: { $0.key < $1.key }) {
            guard let rows = try? snapshot.itemIdentifiers(inSection: section) else {
                setOutline(nil, for: section)  // the section went, and its outline with it
                changed = true
                continue
            }
            let visible = outline.visibleItems
            let shown = Set(visible.lazy.map(\.id))
            let hidden = outline.items.lazy.map(\.id).filter { !shown.contains($0) }
            if rows == visible.map(\.id), !hidden.contains(where: { self.snapshot.contains(item: $0) }) {
                var synced = outline
                for item in visible {
                    guard let data = snapshot.data(ofItem: item.id), data != item.data else { continue }
                    synced.setData(data, of: item.id)
                }
                if synced != outline {
                    setOutline(synced, for: section)
                    changed = true
                }
                continue
            }
            let dropped = hidden.filter { !self.snapshot.contains(item: $0) }.count
            setOutline(nil, for: section)
            changed = true
            warnings.append(
                SnapshotWarning(
                    .outlineReplaced,
                    "The snapshot lists the rows of section \"\(section)\" otherwise than its outline shows them: the section is flat now"
                        + (dropped > 0 ? ", and the \(dropped) collapsed items the snapshot does not list are gone." : "."),
                    identifiers: [section], details: ["section": .string(section), "hiddenItemsDropped": .int(dropped)]))
        }
        return (warnings, changed)
    }
}
