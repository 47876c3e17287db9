import CellCore
import DiffableCore
import ListDurability
import ListEngine
import ListStore
import ListWire

/// The arguments that name a view (dequeue, endDisplaying, setState, …).
struct ViewTarget: ArgumentGroup {
    @Arg("A view: attached on this connection, or any attached view of that name.") var view: String
    @Arg("The view's data source, when several have a view of that name.") var dataSource: String?

    /// The view they name (`CommandRouter.view`).
    func view(_ context: CommandContext) throws(WireError) -> ViewSession {
        try CommandRouter.view(view, context, dataSource: dataSource)
    }
}

extension CommandRouter {
    /// The view named `name`: one attached on this connection first, else any attached view of that name
    /// (of `dataSource` when given), so that scripts can act on a running view. Events still go to the
    /// view's own connection. Another connection's view is `permission-denied` unless it belongs to the
    /// same user (or the caller is an administrator).
    static func view(_ name: String, _ context: CommandContext, dataSource: String? = nil) throws(WireError) -> ViewSession {
        if let own = context.connection.views.named(name, dataSource: dataSource) {
            return own
        }
        let candidates = context.state.dataSources.values
            .filter { context.state.canRead($0.model, context.connection) }
            .compactMap { $0.views[name] }.filter { dataSource == nil || $0.dataSource == dataSource }
        guard let found = candidates.first else {
            throw WireError(.notAttached, "No view named \"\(name)\" is attached\(dataSource.map { " to data source \"\($0)\"" } ?? "").")
        }
        guard candidates.count == 1 else {
            throw WireError(.invalidArgument, "Several data sources have a view named \"\(name)\"; give \"dataSource\".")
        }
        try context.state.authorize(view: found, by: context.connection, to: "run \(context.connection.client.currentCommand) on it")
        return found
    }

    /// `dequeueSupplementary` of a kind the section's layout anchors to its items (a badge): the
    /// supplementary provider's rules see the item (its payload and section), the template its data.
    static func dequeueAnchoredSupplementary(
        _ elementKind: String, at path: IndexPath, section: String, view: ViewSession, dataSource: DataSource, context: CommandContext
    ) throws(WireError) -> CommandResult {
        guard let item = view.snapshot(in: dataSource).item(at: path) else {
            throw WireError(.indexOutOfRange, "There is no item at [\(path.section), \(path.item)] for the \"\(elementKind)\" anchored to items.")
        }
        guard let reference = dataSource.supplementaryProviders[elementKind]?.registration(for: item, inSection: section) else {
            throw WireError(.noRegistration, "No supplementary provider for \"\(elementKind)\" maps item \"\(item.id)\" to a registration.")
        }
        let registration = try context.state.registration(reference, of: dataSource.model, for: "item \"\(item.id)\"")
        if registration.pluginType != nil {
            throw WireError(
                .invalidArgument,
                "Registration \"\(registration.name)\" is configured by a plugin; a supplementary view anchored to items is configured by its template.")
        }
        let cell = CellConfigurator.configureCell(
            view: view, key: itemSupplementaryKey(elementKind, item: item.id), registration: registration,
            context: { state in TemplateContext(item: item.id, data: item.data, section: section, indexPath: path, state: state) },
            position: .supplementary(path, elementKind: elementKind, section: section, item: item.id))
        let version = dataSource.version
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key("cell")
            cell.write(to: &writer)
        }
    }

}

/// `dequeue`: configured cells for index paths of a view.
struct DequeueCommand: CommandDeclaration {
    static let about = CommandAbout("dequeue", "Configured cells for index paths of a view: from the registration's reuse pool when one is free, else new.", result: "{version, cells: [{cell, indexPath, item, registration, reused, content, background, accessories, state, indentationLevel?, warnings?}]}")
    var target: ViewTarget
    @Arg("The positions to show.") var indexPaths: [IndexPath]

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let paths = indexPaths
        let view = try target.view(context)
        let dataSource = try context.dataSource(view.dataSource)
        // The cells a view keeps are charged to its user: one at its quota dequeues no more.
        try context.state.checkCharge(of: context.connection, adding: 1, to: .cells)
        let snapshot = view.snapshot(in: dataSource)
        // Check everything first: a dequeue that fails hands out no cell.
        // The registrations the cells use, each looked up and copied once per request (a batch
        // of cells mostly shares one or two); the plan refers to them by position.
        var used: [Registration] = []
        // Payloads stay packed: a cell's templates rebuild only the members they read.
        var plan: [(path: IndexPath, item: String, payload: PackedPayload, section: String, registration: Int, reorderable: Bool)] = []
        plan.reserveCapacity(paths.count)
        for path in paths {
            guard let (item, payload) = snapshot.packedItem(at: path) else { throw WireError(.indexOutOfRange, "There is no item at \(path).") }
            let section = snapshot.sectionIdentifier(at: path.section)!
            // No rule maps the item: it shows in the default presentation. A rule naming a
            // registration that does not exist is still an error.
            // One pass over the rules: the registration and whether views may move the item.
            let (reference, reorderable) = dataSource.cellProvider?.cellRule(forPayload: payload, inSection: section) ?? (nil, false)
            // `nil` is the default presentation; no registration takes its name (nor key).
            let key = reference?.key(dataSourceOwner: dataSource.model.owner) ?? DefaultPresentation.name
            if let index = used.firstIndex(where: { $0.key == key }) {
                plan.append((path, item, payload, section, index, reorderable))
                continue
            }
            if let reference {
                used.append(try context.state.registration(reference, of: dataSource.model, for: "item \"\(item)\""))
            } else {
                used.append(DefaultPresentation.registration)
            }
            plan.append((path, item, payload, section, used.count - 1, reorderable))
        }
        var results: [CellReply] = []
        results.reserveCapacity(plan.count)
        var pluginRequests: [CellConfigurator.PluginCellRequest] = []
        let work = RenderWork()
        for entry in plan {
            let registration = used[entry.registration]
            if registration.pluginType != nil {
                // Configured by its plugin: a placeholder now, the plugin's content later.
                let (id, reused) = view.obtainCell(registration: registration.key, for: entry.item)
                var cellState = view.cells.state(of: id)!
                let placement = CellConfigurator.outlinePlacement(of: entry.item, inSection: entry.section, in: dataSource, view: view)
                if let placement, cellState.expanded != placement.expanded {
                    cellState.expanded = placement.expanded
                    view.cells.setState(cellState, of: id)
                }
                let templateContext = TemplateContext(
                    item: entry.item, packedData: entry.payload, section: entry.section, indexPath: entry.path, state: cellState)
                // The registration's templates go over the cell's limits: that cell fails, as a configured one does.
                do throws(CellError) {
                    try work.spend(on: registration) { budget throws(CellError) in
                        try registration.checkPluginRendering(templateContext, budget: &budget)
                    }
                } catch {
                    view.cells.release(id)
                    var failed = CellReply(
                        id: id, position: .item(entry.path, entry.item), registration: registration.name, reused: reused,
                        state: cellState, indentationLevel: placement?.level ?? 0)
                    failed.error = WireError(error)
                    results.append(failed)
                    continue
                }
                pluginRequests.append(CellConfigurator.PluginCellRequest(index: results.count, registration: registration, context: templateContext, cell: id))
                var placeholder = CellReply(
                    id: id, position: .item(entry.path, entry.item), registration: registration.name, reused: reused,
                    state: cellState, indentationLevel: placement?.level ?? 0)
                placeholder.reorderable = entry.reorderable
                results.append(placeholder)
                continue
            }
            var configured = CellConfigurator.configureCell(
                view: view, key: entry.item, registration: registration,
                context: { state in
                    TemplateContext(item: entry.item, packedData: entry.payload, section: entry.section, indexPath: entry.path, state: state)
                }, position: .item(entry.path, entry.item),
                outline: CellConfigurator.outlinePlacement(of: entry.item, inSection: entry.section, in: dataSource, view: view), work: work)
            configured.reorderable = entry.reorderable
            results.append(configured)
        }
        // UIKit's willDisplay: the items whose cells the view is about to show, for those who watch.
        if dataSource.display.isWatched {
            dataSource.display.note(
                view: view.name, items: plan.map(\.item), prefetch: false, dataSource: dataSource.name, eventLoop: context.connection.eventLoop,
                perSecond: context.state.configuration.maximumDisplaySignalsPerViewPerSecond,
                viewQueueLimit: context.state.configuration.maximumViewQueueBytes)
        }
        let version = dataSource.version
        func execution(_ cells: [CellReply]) -> CommandResult {
            CommandResult { writer in
                writer.key("version")
                writer.int(version)
                writer.key("cells")
                writer.beginArray()
                for cell in cells { cell.write(to: &writer) }
                writer.endArray()
            }
        }
        guard !pluginRequests.isEmpty, let eventLoop = context.connection.eventLoop else { return execution(results) }
        let deferred = Deferred<CommandResult>()
        CellConfigurator.configurePluginCells(pluginRequests, replies: results, purpose: .dequeue, view: view, sources: context.state.cellSources, eventLoop: eventLoop) { cells in
            deferred.resolve(execution(cells))
        }
        var waiting = execution([])
        waiting.deferred = deferred
        return waiting
    }
}

/// `dequeueSupplementary`: a configured supplementary view of a section.
struct DequeueSupplementaryCommand: CommandDeclaration {
    static let about = CommandAbout("dequeueSupplementary", "A configured supplementary view (header, footer, …) of a section, from its registration's pool.", result: "{version, cell: {cell, indexPath, elementKind, section, item?, registration, reused, content, background, accessories, state}}")
    var target: ViewTarget
    @Arg("e.g. \"header\", or a kind the layout anchors to items (\"badge\").") var elementKind: String
    @Arg("The section (item is usually 0); for a kind anchored to items, the item it decorates.") var indexPath: IndexPath

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let path = indexPath
        let view = try target.view(context)
        let dataSource = try context.dataSource(view.dataSource)
        // The cells a view keeps are charged to its user: one at its quota dequeues no more.
        try context.state.checkCharge(of: context.connection, adding: 1, to: .cells)
        guard let section = view.snapshot(in: dataSource).section(at: path.section), path.item >= 0 else {
            throw WireError(.indexOutOfRange, "There is no section at \(path.section).")
        }
        if dataSource.layout.anchorsToItems(elementKind: elementKind, inSection: section.id) {
            return try CommandRouter.dequeueAnchoredSupplementary(elementKind, at: path, section: section.id, view: view, dataSource: dataSource, context: context)
        }
        let asItem = Item(section.id, data: section.data)
        guard let reference = dataSource.supplementaryProviders[elementKind]?.registration(for: asItem, inSection: section.id) else {
            throw WireError(.noRegistration, "No supplementary provider for \"\(elementKind)\" maps section \"\(section.id)\" to a registration.")
        }
        let registration = try context.state.registration(reference, of: dataSource.model, for: "section \"\(section.id)\"")
        let cell = CellConfigurator.configureCell(
            view: view, key: supplementaryKey(elementKind, section: section.id, index: path.item), registration: registration,
            context: { state in TemplateContext(item: section.id, data: section.data, section: section.id, indexPath: path, state: state) },
            position: .supplementary(path, elementKind: elementKind, section: section.id))
        let version = dataSource.version
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key("cell")
            cell.write(to: &writer)
        }
    }
}

/// `endDisplaying`: cells that left the screen go back to their pools.
struct EndDisplayingCommand: CommandDeclaration {
    static let about = CommandAbout("endDisplaying", "Returns cells that left the screen to their registrations' reuse pools.", result: "{released}")
    var target: ViewTarget
    @Arg("Cell identifiers from dequeue.") var cells: [String]

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (viewName, ids) = (target.view, cells)
        let view = try target.view(context)
        let unknown = ids.filter { !view.cells.isDisplayed($0) }
        if !unknown.isEmpty {
            throw WireError(.cellNotFound, "View \"\(viewName)\" displays no cell \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")).")
        }
        for id in ids { view.cells.release(id) }
        return CommandResult { writer in
            writer.key("released")
            writer.int(ids.count)
        }
    }
}
