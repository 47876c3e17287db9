import CellCore
import DiffableCore
import ListEngine
import ListStore
import ListWire
import NIOCore

extension ViewPublisher {
    /// What a mutation does to the views' displayed cells, as UIKit does it: cells of deleted or
    /// reloaded items (and sections) go back to their pools, and the view dequeues the reloaded index
    /// paths again; reconfigured items keep their cell, configured anew and pushed as `cellUpdated`.
    ///
    /// `viewChanges` are the changes of views that show an expansion of their own (by view), which
    /// replace `changes` for them.
    static func updateDisplayedCells(
        of dataSource: DataSource, after changes: StagedChanges, reloadData: Bool, viewChanges: [ObjectIdentifier: StagedChanges] = [:],
        sources: CellSources
    ) {
        func touchesCells(_ changes: StagedChanges) -> Bool { Self.touchesCells(changes, reloadData: reloadData) }
        let sharedTouches = touchesCells(changes)
        guard sharedTouches || viewChanges.values.contains(where: touchesCells) else { return }
        if sharedTouches { dataSource.pruneSelections() }
        // One render budget for every cell this change configures again, across all views.
        let work = RenderWork()
        for view in dataSource.attachedViews where view.cells.displayedCount > 0 {
            let own = viewChanges[ObjectIdentifier(view)]
            guard own.map(touchesCells) ?? sharedTouches else { continue }
            updateDisplayedCells(of: view, in: dataSource, after: own ?? changes, reloadData: reloadData, sources: sources, work: work)
        }
    }

    /// Whether `changes` may change a displayed cell or a selection: inserts and moves leave every
    /// displayed cell and every selection as it is (the common append).
    static func touchesCells(_ changes: StagedChanges, reloadData: Bool) -> Bool {
        reloadData || changes.stages.contains { stage in
            !stage.itemDeletes.isEmpty || !stage.sectionDeletes.isEmpty || !stage.itemReloads.isEmpty || !stage.sectionReloads.isEmpty
                || !stage.itemReconfigures.isEmpty
        }
    }

    /// `updateDisplayedCells` for one view, with the changes it was sent.
    static func updateDisplayedCells(
        of view: ViewSession, in dataSource: DataSource, after changes: StagedChanges, reloadData: Bool, sources: CellSources, work: RenderWork
    ) {
        let snapshot = view.snapshot(in: dataSource)
        var reloadedItems = Set<String>()
        var reloadedSections = Set<String>()
        var reconfigured: [String] = []
        for stage in changes.stages {
            for reload in stage.itemReloads { reloadedItems.insert(reload.item.id) }
            for reload in stage.sectionReloads { reloadedSections.insert(reload.section.id) }
            for change in stage.itemReconfigures { reconfigured.append(change.item.id) }
        }
        for (key, id) in view.cells.displayedCells {
            let gone: Bool
            if let (_, item) = anchoredSupplementary(ofKey: key) {
                // A badge goes with its item.
                gone = reloadData || !snapshot.contains(item: item) || reloadedItems.contains(item)
                    || (!reloadedSections.isEmpty && reloadedSections.contains(snapshot.sectionIdentifier(containingItem: item) ?? ""))
            } else if key.hasPrefix("\u{1}") {
                let section = key.split(separator: "\u{1}", omittingEmptySubsequences: false).dropFirst(2).first.map(String.init) ?? ""
                gone = reloadData || !snapshot.contains(section: section) || reloadedSections.contains(section)
            } else {
                gone = reloadData || !snapshot.contains(item: key) || reloadedItems.contains(key)
                    || (!reloadedSections.isEmpty && reloadedSections.contains(snapshot.sectionIdentifier(containingItem: key) ?? ""))
            }
            if gone { view.cells.release(id) }
        }
        var pluginRequests: [CellConfigurator.PluginCellRequest] = []
        var placeholders: [CellReply] = []
        // A reconfigured item's badges are configured anew with it (they show its data).
        let anchoredKinds = view.cells.displayedCount > 0 ? dataSource.layout.itemSupplementaryKinds : []
        let keys = reconfigured + anchoredKinds.flatMap { kind in reconfigured.map { itemSupplementaryKey(kind, item: $0) } }
        for key in keys {
            guard let cell = view.cells.displayedCell(for: key) else { continue }
            switch CellConfigurator.reconfigure(view: view, cell: cell.id, in: dataSource, registrations: sources.registrations, work: work) {
            case nil: continue
            case .configured(let configured): view.connection.sendEvent(ViewEvent.cellUpdated(dataSource: view.dataSource, view: view.name, cell: { configured.write(to: &$0) }))
            case .plugin(var request, let placeholder):
                request.index = placeholders.count
                pluginRequests.append(request)
                placeholders.append(placeholder)
            }
        }
        // Plugin cells follow as their plugins answer (one request per plugin for the whole change).
        if !pluginRequests.isEmpty, let eventLoop = view.connection.eventLoop {
            CellConfigurator.configurePluginCells(pluginRequests, replies: placeholders, purpose: .reconfigure, view: view, sources: sources, eventLoop: eventLoop) { cells in
                for cell in cells where view.cells.cells[cell.id]?.displayedFor != nil {
                    view.connection.sendEvent(ViewEvent.cellUpdated(dataSource: view.dataSource, view: view.name, cell: { cell.write(to: &$0) }))
                }
            }
        }
    }
}
