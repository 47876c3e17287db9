import CellCore
import DiffableCore
import ListLayout
import ListEngine
import ListStore
import ListWire
import NIOCore

/// One named data source as the server serves it: the engine's served data source (its state and
/// retained events, written only by `StateEngine`) with its views attached. Confined to the server's
/// event loop.
package typealias DataSource = ServedDataSource<DataSourceViews>

/// What the server attaches to each data source it serves: the views attached to it, and the display
/// signals of those views. Confined to the server's event loop.
package final class DataSourceViews: DataSourceAttachment {
    /// Attached views, by view name.
    fileprivate(set) var views: [String: ViewSession] = [:]
    /// The views in attach order, with detached ones left in place until they outnumber the attached
    /// (then dropped in one pass), so that attaching and detaching are O(1) amortized: closing a
    /// connection with many views costs what it has, not its square.
    fileprivate var order: [ViewSession] = []
    /// The views showing an expansion of their own (see `ViewExpansion`), by name.
    fileprivate var expanding: [String: ViewSession] = [:]
    /// What its views display and are about to, for the connections that watch (`watchDisplay`).
    let display = DisplaySignals()

    package var hasViews: Bool { !views.isEmpty }
}

extension DataSource {
    /// Attached views, by view name.
    var views: [String: ViewSession] { attachment.views }
    /// What its views display and are about to, for the connections that watch (`watchDisplay`).
    var display: DisplaySignals { attachment.display }

    func attach(_ attachment: ViewSession) {
        if let previous = views[attachment.name], previous !== attachment {
            previous.isAttached = false
            previous.releaseCharges()
        }
        self.attachment.views[attachment.name] = attachment
        attachment.isAttached = true
        self.attachment.order.append(attachment)
    }

    /// The attached views with an expansion of their own. O(those views).
    var viewsWithOwnExpansion: [ViewSession] { attachment.expanding.values.filter { views[$0.name] === $0 } }

    /// Changes what `view` expanded or collapsed itself (`change` edits its `ViewExpansion`) and brings
    /// what it shows up to the data source as it is now; returns the view's changes (`sharedChanges` are
    /// the data source's).
    func changeExpansion(of view: ViewSession, sharedChanges: StagedChanges, _ change: (inout ViewExpansion) -> Void = { _ in }) -> StagedChanges {
        var expansion = view.expansion ?? ViewExpansion(showing: model)
        change(&expansion)
        let changes = expansion.update(to: model, sharedChanges: sharedChanges)
        view.expansion = expansion
        attachment.expanding[view.name] = view
        return changes
    }

    /// Makes what `view` shows the data source's as it is now, without changes (it reloads everything, or
    /// the changes it was not sent were undone).
    func reprojectExpansion(of view: ViewSession) {
        view.expansion?.reproject(model)
    }

    /// Once a change is published: `view` forgets what it set on items the outlines no longer hold (all of
    /// it when the scope became shared), and a view left with nothing of its own shows the data source's
    /// snapshot again.
    func settleExpansion(of view: ViewSession) {
        guard var expansion = view.expansion else { return }
        expansion.prune(model)
        guard expansion.isEmpty else {
            view.expansion = expansion
            return
        }
        view.expansion = nil
        if attachment.expanding[view.name] === view { attachment.expanding[view.name] = nil }
    }

    /// Detaches a view; the views that follow selections learn that its selection is gone.
    func detach(view name: String) {
        guard let view = attachment.views.removeValue(forKey: name) else { return }
        view.isAttached = false
        view.releaseCharges()
        if attachment.expanding[name] === view { attachment.expanding[name] = nil }
        if attachment.order.count > 2 * views.count + 16 { attachment.order.removeAll { !$0.isAttached } }
        if !view.selection.isEmpty {
            let deselected = view.selection.items
            view.selection = ViewSelection()
            selectionChanged(in: view, selected: [], deselected: deselected)
        }
    }

    /// Whether the cell provider or a supplementary provider names the registration of this key
    /// (`Registration.key`: another user's registration of that name is another registration).
    func names(registration key: String) -> Bool {
        if cellProvider?.names(key: key, dataSourceOwner: model.owner) == true { return true }
        return supplementaryProviders.values.contains { $0.names(key: key, dataSourceOwner: model.owner) }
    }

    /// The attached views in attach order. O(views attached and recently detached).
    var attachedViews: [ViewSession] { attachment.order.filter(\.isAttached) }

    /// Calls `body` with every attached view in attach order, without making an array or hashing a name
    /// (a change's event to each view). A view detached meanwhile is skipped.
    func forEachAttachedView(_ body: (ViewSession) -> Void) {
        for view in attachment.order where view.isAttached { body(view) }
    }
}

/// A view attached to a data source, living on one connection: its name and its cells (the displayed
/// ones and the reuse pools). Shared by the data source and the connection; confined to the event loop.
final class ViewSession {
    let name: String
    let dataSource: String
    unowned let connection: any ViewConnection
    /// The ledger its cells and expansion are charged in, to the viewer's account (`connection.accountHolder`).
    private let accounts: UserAccounts
    var cells: ViewCells {
        didSet { chargeKeptBytes() }
    }
    /// The items selected in this view (`setState` with `selected`).
    var selection = ViewSelection()
    /// Whether this view gets `selectionChanged` events about other views (`attach` with `selectionEvents`).
    var followsSelection = false
    /// Whether the data source holds this view (set by `DataSource.attach` and `detach`).
    fileprivate(set) var isAttached = false
    /// What the view expanded or collapsed itself (expansion scope `perView`), and what it shows as a
    /// result; `nil` while it shows the data source's snapshot as it is. Kept by `DataSource`.
    fileprivate(set) var expansion: ViewExpansion? {
        didSet { chargeKeptBytes() }
    }
    /// What this view's cells and expansion copy are charged to its user's account now (see
    /// `chargeKeptBytes`); charging stops once the view is detached.
    private var chargedCellBytes = 0
    private var chargedExpansionBytes = 0
    private var charges = true

    /// The snapshot this view shows, whose index paths its requests give: its own projection, or the
    /// data source's snapshot.
    func snapshot(in dataSource: DataSource) -> Snapshot {
        expansion?.projection ?? dataSource.snapshot
    }

    init(name: String, dataSource: String, connection: any ViewConnection, accounts: UserAccounts, poolLimit: Int) {
        self.name = name
        self.dataSource = dataSource
        self.connection = connection
        self.accounts = accounts
        self.cells = ViewCells(poolLimit: poolLimit)
    }

    /// Brings the charges of the viewer's account (`cells`, `expansions`) to what the view keeps. O(1)
    /// for cells; an expansion's size is read in O(sections it overrides).
    private func chargeKeptBytes() {
        guard charges else { return }
        let cellBytes = cells.keptBytes
        if cellBytes != chargedCellBytes {
            accounts.charge(connection.accountHolder, .cells, cellBytes - chargedCellBytes)
            chargedCellBytes = cellBytes
        }
        let expansionBytes = expansion?.heldBytes ?? 0
        if expansionBytes != chargedExpansionBytes {
            accounts.charge(connection.accountHolder, .expansions, expansionBytes - chargedExpansionBytes)
            chargedExpansionBytes = expansionBytes
        }
    }

    /// Once detached: what the view kept is no longer charged (it goes with the view).
    func releaseCharges() {
        guard charges else { return }
        accounts.charge(connection.accountHolder, .cells, -chargedCellBytes)
        accounts.charge(connection.accountHolder, .expansions, -chargedExpansionBytes)
        (chargedCellBytes, chargedExpansionBytes, charges) = (0, 0, false)
    }
}
