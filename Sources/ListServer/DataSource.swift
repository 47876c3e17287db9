import CellCore
import DiffableCore
import ListLayout
import ListWire
import NIOCore

/// One named data source: its snapshot, its version, the outlines (section snapshots) applied to its
/// sections, and the views attached to it. Confined to the server's event loop.
final class DataSource {
    let name: String
    var snapshot = Snapshot()
    /// Increments by one with every accepted mutation: the total order of the data source's changes.
    private(set) var version = 0
    /// Section snapshots applied with `applySectionSnapshot`, by section. An outline is kept while the
    /// section's items are still its visible items; any other change to the section drops it.
    var outlines: [String: SectionSnapshot] = [:]
    /// The cell provider rules (`setCellProvider`) and the supplementary providers by element kind.
    var cellProvider: CellProvider?
    var supplementaryProviders: [String: CellProvider] = [:]
    /// The compositional layout every view renders (`setLayout`).
    var layout = LayoutDescription()
    /// Attached views, by view name, in attach order.
    private(set) var views: [String: ViewSession] = [:]
    private(set) var viewOrder: [String] = []

    init(name: String) {
        self.name = name
    }

    /// Records an accepted mutation: bumps the version and returns the `changes` event line for the
    /// attached views (encoded once, written to every view).
    func commit(_ changes: StagedChanges, reloadData: Bool, allocator: ByteBufferAllocator) -> (version: Int, event: ByteBuffer?) {
        version += 1
        reconcileOutlines()
        guard !views.isEmpty else { return (version, nil) }
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("event")
        writer.string("changes")
        writer.key("dataSource")
        writer.string(name)
        writer.key("version")
        writer.int(version)
        writer.key("changes")
        writer.changes(changes, reloadData: reloadData)
        writer.endObject()
        var buffer = allocator.buffer(capacity: writer.bytes.count + 1)
        buffer.writeBytes(writer.bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return (version, buffer)
    }

    func attach(_ attachment: ViewSession) {
        views[attachment.name] = attachment
        viewOrder.append(attachment.name)
    }

    func detach(view name: String) {
        guard views.removeValue(forKey: name) != nil else { return }
        viewOrder.removeAll { $0 == name }
    }

    var attachedViews: [ViewSession] { viewOrder.compactMap { views[$0] } }

    /// Drops outlines whose section no longer shows exactly their visible items.
    private func reconcileOutlines() {
        guard !outlines.isEmpty else { return }
        for (section, outline) in outlines {
            let current = (try? snapshot.itemIdentifiers(inSection: section)) ?? nil
            if current != outline.visibleItems.map(\.id) { outlines[section] = nil }
        }
    }
}

/// A view attached to a data source, living on one connection: its name and its cells (the displayed
/// ones and the reuse pools). Shared by the data source and the connection; confined to the event loop.
final class ViewSession {
    let name: String
    let dataSource: String
    unowned let connection: ConnectionHandler
    var cells: ViewCells

    init(name: String, dataSource: String, connection: ConnectionHandler, poolLimit: Int) {
        self.name = name
        self.dataSource = dataSource
        self.connection = connection
        self.cells = ViewCells(poolLimit: poolLimit)
    }
}
