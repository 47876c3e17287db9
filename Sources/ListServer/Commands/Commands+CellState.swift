import CellCore
import DiffableCore
import ListDurability
import ListEngine
import ListStore
import ListWire

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
        switch CellConfigurator.reconfigure(view: view, cell: id, in: dataSource, registrations: context.state.registrations) {
        case nil:
            throw WireError(.cellNotFound, "Cell \"\(id)\" no longer shows anything.")
        case .configured(let cell):
            return execution(cell)
        case .plugin(let request, let placeholder):
            guard let eventLoop = context.connection.eventLoop else { return execution(placeholder) }
            let deferred = Deferred<CommandResult>()
            CellConfigurator.configurePluginCells([request], replies: [placeholder], purpose: .reconfigure, view: view, sources: context.state.cellSources, eventLoop: eventLoop) {
                deferred.resolve(execution($0[0]))
            }
            var waiting = CommandResult { _ in }
            waiting.deferred = deferred
            return waiting
        }
    }
}
