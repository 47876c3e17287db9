import CellCore
import DiffableCore
import ListDurability
import ListEngine
import ListStore
import ListWire

extension CommandRouter {
    /// A displayed cell configured again: at once, or once its plugin answers `request` (the placeholder
    /// holds the cell's previous content, which stays when the plugin fails).
    enum Reconfiguration {
        case configured(CellReply)
        case plugin(PluginCellRequest, placeholder: CellReply)
    }

    /// Configures a displayed cell again for what it shows now (same cell identifier); `nil` when what it
    /// showed is gone.
    /// `work` is the render budget shared by the cells of one request or one change (see `RenderWork`).
    static func reconfigure(
        view: ViewSession, cell id: String, in dataSource: DataSource, registrations: [String: Registration], work: RenderWork = RenderWork()
    ) -> Reconfiguration? {
        guard let cell = view.cells.cells[id], let key = cell.displayedFor,
            let registration = registrations[cell.registration]
                ?? (cell.registration == DefaultPresentation.name ? DefaultPresentation.registration : nil)
        else { return nil }
        let snapshot = view.snapshot(in: dataSource)
        if let (elementKind, item) = anchoredSupplementary(ofKey: key) {
            guard let path = snapshot.indexPath(ofItem: item), let data = snapshot.data(ofItem: item) else { return nil }
            let section = snapshot.sectionIdentifier(at: path.section)!
            return .configured(
                configureCell(
                    view: view, key: key, registration: registration,
                    context: { TemplateContext(item: item, data: data, section: section, indexPath: path, state: $0) },
                    position: .supplementary(path, elementKind: elementKind, section: section, item: item), work: work))
        }
        if registration.pluginType != nil {
            guard let path = snapshot.indexPath(ofItem: key), let data = snapshot.data(ofItem: key) else { return nil }
            let section = snapshot.sectionIdentifier(at: path.section)!
            let placement = outlinePlacement(of: key, inSection: section, in: dataSource, view: view)
            var state = cell.state
            if let placement, state.expanded != placement.expanded {
                state.expanded = placement.expanded
                view.cells.setState(state, of: id)
            }
            let context = TemplateContext(item: key, data: data, section: section, indexPath: path, state: state)
            let placeholder = CellReply(
                id: id, position: .item(path, key), registration: registration.name, reused: false, state: state,
                indentationLevel: placement?.level ?? 0, configured: cell.configured)
            return .plugin(PluginCellRequest(index: 0, registration: registration, context: context, cell: id), placeholder: placeholder)
        }
        if key.hasPrefix("\u{1}") {
            let parts = key.split(separator: "\u{1}", omittingEmptySubsequences: false)
            guard parts.count == 4, let index = snapshot.index(ofSection: String(parts[2])), let section = snapshot.section(at: index) else { return nil }
            let path = IndexPath(section: index, item: Int(parts[3]) ?? 0)
            return .configured(
                configureCell(
                    view: view, key: key, registration: registration,
                    context: { TemplateContext(item: section.id, data: section.data, section: section.id, indexPath: path, state: $0) },
                    position: .supplementary(path, elementKind: String(parts[1]), section: section.id), work: work))
        }
        guard let path = snapshot.indexPath(ofItem: key), let data = snapshot.data(ofItem: key) else { return nil }
        let section = snapshot.sectionIdentifier(at: path.section)!
        var configured = configureCell(
            view: view, key: key, registration: registration,
            context: { TemplateContext(item: key, data: data, section: section, indexPath: path, state: $0) },
            position: .item(path, key), outline: outlinePlacement(of: key, inSection: section, in: dataSource, view: view), work: work)
        configured.reorderable = dataSource.cellProvider?.canReorder(Item(key, data: data), inSection: section) ?? false
        return .configured(configured)
    }
}

extension CommandRouter {
    /// What a mutation does to the views' displayed cells, as UIKit does it: cells of deleted or
    /// reloaded items (and sections) go back to their pools, and the view dequeues the reloaded index
    /// paths again; reconfigured items keep their cell, configured anew and pushed as `cellUpdated`.
    ///
    /// `viewChanges` are the changes of views that show an expansion of their own (by view), which
    /// replace `changes` for them.
    static func updateDisplayedCells(
        of dataSource: DataSource, after changes: StagedChanges, reloadData: Bool, viewChanges: [ObjectIdentifier: StagedChanges] = [:],
        state: ServerState
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
            updateDisplayedCells(of: view, in: dataSource, after: own ?? changes, reloadData: reloadData, state: state, work: work)
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
        of view: ViewSession, in dataSource: DataSource, after changes: StagedChanges, reloadData: Bool, state: ServerState, work: RenderWork
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
        var pluginRequests: [PluginCellRequest] = []
        var placeholders: [CellReply] = []
        // A reconfigured item's badges are configured anew with it (they show its data).
        let anchoredKinds = view.cells.displayedCount > 0 ? dataSource.layout.itemSupplementaryKinds : []
        let keys = reconfigured + anchoredKinds.flatMap { kind in reconfigured.map { itemSupplementaryKey(kind, item: $0) } }
        for key in keys {
            guard let cell = view.cells.displayedCell(for: key) else { continue }
            switch reconfigure(view: view, cell: cell.id, in: dataSource, registrations: state.registrations, work: work) {
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
            configurePluginCells(pluginRequests, replies: placeholders, purpose: .reconfigure, view: view, state: state, eventLoop: eventLoop) { cells in
                for cell in cells where view.cells.cells[cell.id]?.displayedFor != nil {
                    view.connection.sendEvent(ViewEvent.cellUpdated(dataSource: view.dataSource, view: view.name, cell: { cell.write(to: &$0) }))
                }
            }
        }
    }
}

/// `setState`: a displayed cell's state changed, the cell configured again.
struct SetStateCommand: CommandDeclaration {
    static let about = CommandAbout("setState", "Changes a displayed cell's state (selected, highlighted, …, custom keys) and configures it again; the view also gets a cellUpdated event. `selected` on an item's cell is the view's selection: it stays with the item when the cell is reused, and views following selections get selectionChanged.", result: "{version, cell: {…as in dequeue}}")
    var target: ViewTarget
    @Arg("The cell (or give item).") var cell: String?
    @Arg("The item whose displayed cell changes.") var item: String?
    @Arg("Flags are booleans; other keys are custom (null removes).", type: "{selected?, highlighted?, focused?, disabled?, editing?, expanded?, swiped?, reordering?, …}")
    var state: [String: JSONValue]

    func validate(_ context: CommandContext) throws(WireError) {
        guard (cell == nil) != (item == nil) else {
            throw WireError(.invalidArgument, "Give either \"cell\" or \"item\".")
        }
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (viewName, cellID, itemID, changes) = (target.view, cell, item, state)
        let view = try target.view(context)
        let dataSource = try context.dataSource(view.dataSource)
        let id: String
        if let cellID {
            guard view.cells.cells[cellID]?.displayedFor != nil else {
                throw WireError(.cellNotFound, "View \"\(viewName)\" displays no cell \"\(cellID)\".")
            }
            id = cellID
        } else {
            guard let cell = view.cells.displayedCell(for: itemID!) else {
                throw WireError(.cellNotFound, "View \"\(viewName)\" displays no cell for item \"\(itemID!)\".")
            }
            id = cell.id
        }
        var state = view.cells.cells[id]!.state
        do throws(CellStateError) {
            try state.update(with: changes)
        } catch {
            throw WireError(.invalidArgument, error.message)
        }
        view.cells.setState(state, of: id)
        // A displayed item's selection is the view's, seen by the views that follow selections.
        var selectionChange: (selected: [String], deselected: [String]) = ([], [])
        if changes["selected"] != nil, let key = view.cells.cells[id]?.displayedFor, !isSupplementaryKey(key),
            view.selection.set(key, selected: state.selected)
        {
            selectionChange = state.selected ? ([key], []) : ([], [key])
        }
        let version = dataSource.version
        func execution(_ cell: CellReply) -> CommandResult {
            let event = ViewEvent.cellUpdated(dataSource: view.dataSource, view: view.name, cell: { cell.write(to: &$0) })
            return CommandResult(
                reply: .members { writer in
                    writer.key("version")
                    writer.int(version)
                    writer.key("cell")
                    cell.write(to: &writer)
                },
                afterReply: [
                    { view.connection.sendEvent(event) },
                    { dataSource.selectionChanged(in: view, selected: selectionChange.selected, deselected: selectionChange.deselected) },
                ])
        }
        switch CommandRouter.reconfigure(view: view, cell: id, in: dataSource, registrations: context.state.registrations) {
        case nil:
            throw WireError(.cellNotFound, "Cell \"\(id)\" no longer shows anything.")
        case .configured(let cell):
            return execution(cell)
        case .plugin(let request, let placeholder):
            guard let eventLoop = context.connection.eventLoop else { return execution(placeholder) }
            let deferred = Deferred<CommandResult>()
            CommandRouter.configurePluginCells([request], replies: [placeholder], purpose: .reconfigure, view: view, state: context.state, eventLoop: eventLoop) {
                deferred.resolve(execution($0[0]))
            }
            var waiting = CommandResult { _ in }
            waiting.deferred = deferred
            return waiting
        }
    }
}
