import CellCore
import DiffableCore
import ListLayout

/// One accepted change to listd's state, as a value: what every mutation becomes once its request is
/// decoded, before it is validated, committed and published.
///
/// A change is applied by `StateModel.apply(_:limits:)`, the only code that changes the state. The same
/// change applied again to the same state (replaying a log) gives the same result.
public enum StateChange: Sendable {
    /// Creates a data source with `content` (empty, or the demo's). Fails when the name is taken.
    case createDataSource(name: String, incarnation: String, content: DataSourceContent)
    /// Deletes a data source.
    case dropDataSource(name: String)
    /// Changes one data source and bumps its version. With `createAs`, a missing data source is created
    /// first with that incarnation and owner (the create and the change are one change, all or nothing).
    case dataSource(name: String, ifVersion: Int?, createAs: DataSourceCreation?, DataSourceOperation)
    /// Creates a registration in its owner's namespace; registering an identical definition again
    /// changes nothing.
    case register(Registration)
    /// Gives the registration of that owner and name another definition of the same kind (its place
    /// stays), or creates it when there is none (`register` with `replace`).
    case replaceRegistration(Registration)
    /// Deletes the registration `name` of the user `owner` (root, unless given).
    case unregister(name: String, owner: UInt32 = 0)
}

extension StateChange {
    /// The data source the change is about; `nil` for registrations.
    public var dataSourceName: String? {
        switch self {
        case .createDataSource(let name, _, _), .dropDataSource(let name), .dataSource(let name, _, _, _): return name
        case .register, .replaceRegistration, .unregister: return nil
        }
    }
}

/// How a data source that a change creates starts: its incarnation and the user that owns it.
public struct DataSourceCreation: Sendable, Equatable, ExpressibleByStringLiteral {
    public var incarnation: String
    /// The uid of the user that created it (0, root, for changes listd makes itself).
    public var owner: UInt32

    public init(incarnation: String, owner: UInt32) {
        self.incarnation = incarnation
        self.owner = owner
    }

    /// An incarnation owned by root (0).
    public init(stringLiteral incarnation: String) {
        self.init(incarnation: incarnation, owner: 0)
    }
}

/// What a data-source change does.
public enum DataSourceOperation: Sendable {
    /// One snapshot edit (`appendItems`, `moveSection`, …).
    case edit(SnapshotEdit)
    /// Several edits as one transaction (`batch`): all or nothing, one version.
    case batch([SnapshotEdit])
    /// The whole snapshot replaced (`apply`); the changes are the diff, or "reload everything".
    case replaceSnapshot(Snapshot, reloadData: Bool)
    /// A section's outline replaced (`applySectionSnapshot`): its visible items become the section's items.
    case replaceOutline(section: String, SectionSnapshot)
    /// Outline items expanded or collapsed (`expand`, `collapse`).
    case setExpansion(section: String, items: [String], expanded: Bool)
    /// The compositional layout every view renders (`setLayout`).
    case setLayout(LayoutDescription)
    /// The cell provider rules, or the supplementary provider for `elementKind` (`setCellProvider`).
    case setCellProvider(CellProvider, elementKind: String?)
    /// Whose outline expansion views show (`setExpansionScope`).
    case setExpansionScope(ExpansionScope)
}

/// Whose expansion of a data source's outlines a view shows.
public enum ExpansionScope: String, Sendable, CaseIterable {
    /// One expansion for every view: `expand` and `collapse` change the data source (write access).
    case shared
    /// Each view may expand and collapse outline items in its own view (read access); what it has not
    /// expanded or collapsed itself follows the data source's expansion.
    case perView
}

/// Everything a data source holds besides its name and incarnation: what `createDataSource` starts
/// with and what a checkpoint stores.
public struct DataSourceContent: Sendable {
    /// The uid of the user that owns the data source (its creator; 0 for root and for state stored
    /// before owners were).
    public var owner: UInt32
    public var version: Int
    public var snapshot: Snapshot
    /// Section snapshots by section (see `DataSourceModel.outlines`).
    public var outlines: [String: SectionSnapshot]
    public var cellProvider: CellProvider?
    public var supplementaryProviders: [String: CellProvider]
    public var layout: LayoutDescription
    /// Whose outline expansion views show.
    public var expansionScope: ExpansionScope

    public init(
        owner: UInt32 = 0, version: Int = 0, snapshot: Snapshot = Snapshot(), outlines: [String: SectionSnapshot] = [:],
        cellProvider: CellProvider? = nil, supplementaryProviders: [String: CellProvider] = [:], layout: LayoutDescription = LayoutDescription(),
        expansionScope: ExpansionScope = .shared
    ) {
        self.owner = owner
        self.version = version
        self.snapshot = snapshot
        self.outlines = outlines
        self.cellProvider = cellProvider
        self.supplementaryProviders = supplementaryProviders
        self.layout = layout
        self.expansionScope = expansionScope
    }
}

extension DataSourceOperation {
    /// Whether the operation may store more bytes than before (what a user at its byte quota may not
    /// do): everything but removing, moving, reloading and outline expansion.
    public var mayAddBytes: Bool {
        switch self {
        case .edit(let edit): return edit.mayAddBytes
        case .batch(let edits): return edits.contains { $0.mayAddBytes }
        case .replaceSnapshot, .replaceOutline: return true
        case .setExpansion, .setLayout, .setCellProvider, .setExpansionScope: return false
        }
    }
}

extension SnapshotEdit {
    fileprivate var mayAddBytes: Bool {
        switch self {
        case .deleteSections, .deleteItems, .deleteAllItems, .moveSection, .moveItem, .reloadSections, .reloadItems, .reconfigureItems:
            return false
        default:
            return true
        }
    }
}
