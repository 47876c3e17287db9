import CellCore
import DiffableCore
import ListStore
import ListWire

extension WireError {
    init(_ error: CellError) {
        let code: ErrorCode
        switch error.code {
        case .invalidRegistration: code = .invalidRegistration
        case .registrationExists: code = .registrationExists
        case .registrationNotFound: code = .registrationNotFound
        case .noRegistration: code = .noRegistration
        }
        self.init(code, error.message)
    }
}

/// The key under which a view tracks the supplementary view of a section (never clashes with an item id).
func supplementaryKey(_ elementKind: String, section: String, index: Int) -> String {
    "\u{1}\(elementKind)\u{1}\(section)\u{1}\(index)"
}

extension CommandRouter {
    static var cellCommands: [Command] {
        [registerCommand, unregisterCommand, registrationsCommand, stylesCommand, providerCommand(supplementary: false),
         providerCommand(supplementary: true), dequeueCommand, dequeueSupplementaryCommand, endDisplayingCommand, setStateCommand]
    }

    static var registerCommand: Command {
        Command(
            name: "register",
            summary: "Creates a cell registration (once, up front): its kind and how to configure a cell from an item.",
            arguments: [
                ArgumentSpec("registration", "string", required: true, "The registration's name."),
                ArgumentSpec("kind", "string", "\"cell\" (default) or \"supplementary\"."),
                ArgumentSpec("elementKind", "string", "For supplementary registrations: e.g. \"header\", \"footer\"."),
                ArgumentSpec("contentConfiguration", "{type, …}", required: true, "A list style and its properties; strings may be Mustache templates."),
                ArgumentSpec("background", "{type, …}", "listPlainCell, listGroupedCell, listSidebarCell or clear, with its properties."),
                ArgumentSpec("accessories", "[{type, displayed?, …}]", "disclosureIndicator, outlineDisclosure, checkmark, delete, reorder, label, detail."),
            ],
            result: "{registration, kind, type, created}"
        ) { arguments, _ throws(WireError) in
            let name = try arguments.string("registration")
            var definition: [String: JSONValue] = [:]
            for key in ["kind", "elementKind", "contentConfiguration", "background", "accessories"] {
                if let value = arguments.value(key) { definition[key] = value }
            }
            let registration: Registration
            do throws(CellError) {
                registration = try Registration(name: name, definition: .object(definition))
            } catch {
                throw WireError(error)
            }
            return { context throws(WireError) in
                let committed = try context.state.commit(.register(registration), connection: context.connection)
                let created = committed.outcome.createdRegistration
                return committed.execution { writer in
                    writeIdentity(registration, to: &writer)
                    writer.key("created")
                    writer.bool(created)
                }
            }
        }
    }

    /// `"registration", "kind", "type"` members of a registration.
    static func writeIdentity(_ registration: Registration, to writer: inout JSONWriter) {
        writer.key("registration")
        writer.string(registration.name)
        writer.key("kind")
        switch registration.kind {
        case .cell: writer.string("cell")
        case .supplementary(let elementKind): writer.string("supplementary:\(elementKind)")
        }
        writer.key("type")
        writer.string(registration.contentType)
    }

    static var unregisterCommand: Command {
        Command(
            name: "unregister", summary: "Deletes a registration and drains its reuse pools in every view.",
            arguments: [ArgumentSpec("registration", "string", required: true, "The registration.")],
            result: "{registration, drained}"
        ) { arguments, _ throws(WireError) in
            let name = try arguments.string("registration")
            return { context throws(WireError) in
                let state = context.state
                // The cells its pools and views hold, which the commit drains.
                var drained = 0
                for dataSource in state.dataSources.values {
                    for view in dataSource.attachedViews { drained += view.cells.cells.values.filter { $0.registration == name }.count }
                }
                let committed = try state.commit(.unregister(name: name), connection: context.connection)
                return committed.execution { writer in
                    writer.key("registration")
                    writer.string(name)
                    writer.key("drained")
                    writer.int(drained)
                }
            }
        }
    }

    static var registrationsCommand: Command {
        Command(
            name: "registrations",
            summary: "Lists the registrations with their definitions and cell counters over all views.",
            arguments: [],
            result: "{registrations: [{registration, kind, type, definition, created, reused, displayed, pooled, released, contentConfigurationsReplaced, neverReused}]}"
        ) { _, _ throws(WireError) in
            { context throws(WireError) in
                let state = context.state
                return Execution { writer in
                    writer.key("registrations")
                    writer.beginArray()
                    for name in state.registrationOrder {
                        let registration = state.registrations[name]!
                        let totals = state.cellTotals(registration: name)
                        writer.beginObject()
                        writeIdentity(registration, to: &writer)
                        writer.key("definition")
                        writer.value(registration.definition)
                        writeTotals(totals, to: &writer)
                        writer.endObject()
                    }
                    writer.endArray()
                }
            }
        }
    }

    static func writeTotals(_ totals: CellTotals, to writer: inout JSONWriter) {
        writer.key("created")
        writer.int(totals.counters.created)
        writer.key("reused")
        writer.int(totals.counters.reused)
        writer.key("displayed")
        writer.int(totals.displayed)
        writer.key("pooled")
        writer.int(totals.pooled)
        writer.key("released")
        writer.int(totals.counters.released)
        writer.key("contentConfigurationsReplaced")
        writer.int(totals.counters.contentConfigurationsReplaced)
        writer.key("neverReused")
        writer.bool(totals.counters.created > 0 && totals.counters.reused == 0)
    }

    /// `setCellProvider` and `setSupplementaryProvider`.
    static func providerCommand(supplementary: Bool) -> Command {
        Command(
            name: supplementary ? "setSupplementaryProvider" : "setCellProvider",
            summary: supplementary
                ? "Sets the rules that pick a supplementary registration for a section's element of one kind."
                : "Sets the rules that pick each item's registration: the first matching rule wins, then the default.",
            arguments: [ArgumentSpec("dataSource", "string", required: true, "The data source.")]
                + (supplementary ? [ArgumentSpec("elementKind", "string", required: true, "e.g. \"header\".")] : [])
                + [
                    ArgumentSpec("rules", "[{section?, match?: {field, equals}, registration}]", required: true, "In order; match compares a payload field (a dotted path)."),
                    ArgumentSpec("default", "string", "The registration when no rule matches."),
                ],
            result: "{dataSource, version, rules}"
        ) { arguments, _ throws(WireError) in
            let name = try arguments.string("dataSource")
            let elementKind = supplementary ? try arguments.string("elementKind") : nil
            var rules: [CellProvider.Rule] = []
            for (index, value) in try arguments.array("rules").enumerated() {
                guard case .object(let members) = value, case .string(let registration)? = members["registration"] else {
                    throw WireError(.invalidArgument, "rules[\(index)] must be an object with a string \"registration\".")
                }
                if let unknown = members.keys.first(where: { !["section", "match", "registration"].contains($0) }) {
                    throw WireError(.invalidArgument, "Unknown member \"\(unknown)\" in rules[\(index)].")
                }
                var rule = CellProvider.Rule(registration: registration)
                switch members["section"] {
                case nil, .null?: break
                case .string(let section)?: rule.section = section
                default: throw WireError(.invalidArgument, "rules[\(index)].section must be a string.")
                }
                switch members["match"] {
                case nil, .null?: break
                case .object(let match)? where match.count == 2:
                    guard case .string(let field)? = match["field"], let equals = match["equals"] else { fallthrough }
                    rule.match = (field, equals)
                default: throw WireError(.invalidArgument, "rules[\(index)].match must be {\"field\": …, \"equals\": …}.")
                }
                rules.append(rule)
            }
            let fallback = try arguments.optionalString("default")
            let provider = CellProvider(rules: rules, defaultRegistration: fallback)
            return { context throws(WireError) in
                let committed = try context.state.commit(
                    .dataSource(name: name, ifVersion: nil, createAs: nil, .setCellProvider(provider, elementKind: elementKind)),
                    connection: context.connection)
                return committed.execution(dataSource: name) { writer in
                    writer.key("rules")
                    writer.int(rules.count)
                }
            }
        }
    }

    /// The arguments that name a view (dequeue, endDisplaying, setState, …).
    static let viewArguments = [
        ArgumentSpec("view", "string", required: true, "A view: attached on this connection, or any attached view of that name."),
        ArgumentSpec("dataSource", "string", "The view's data source, when several have a view of that name."),
    ]

    static func readView(_ arguments: inout Arguments) throws(WireError) -> (name: String, dataSource: String?) {
        (try arguments.string("view"), try arguments.optionalString("dataSource"))
    }

    /// The view named `name`: one attached on this connection first, else any attached view of that name
    /// (of `dataSource` when given), so that scripts can act on a running view. Events still go to the
    /// view's own connection.
    static func view(_ name: String, _ context: CommandContext, dataSource: String? = nil) throws(WireError) -> ViewSession {
        if let own = context.connection.views.first(where: { $0.name == name && (dataSource == nil || $0.dataSource == dataSource) }) {
            return own
        }
        let candidates = context.state.dataSources.values.compactMap { $0.views[name] }.filter { dataSource == nil || $0.dataSource == dataSource }
        guard let found = candidates.first else {
            throw WireError(.notAttached, "No view named \"\(name)\" is attached\(dataSource.map { " to data source \"\($0)\"" } ?? "").")
        }
        guard candidates.count == 1 else {
            throw WireError(.invalidArgument, "Several data sources have a view named \"\(name)\"; give \"dataSource\".")
        }
        return found
    }

    static var dequeueCommand: Command {
        Command(
            name: "dequeue",
            summary: "Configured cells for index paths of a view: from the registration's reuse pool when one is free, else new.",
            arguments: viewArguments + [
                ArgumentSpec("indexPaths", "[[section, item]]", required: true, "The positions to show."),
            ],
            result: "{version, cells: [{cell, indexPath, item, registration, reused, content, background, accessories, state, indentationLevel?, warnings?}]}"
        ) { arguments, _ throws(WireError) in
            let (viewName, viewDataSource) = try readView(&arguments)
            var paths: [IndexPath] = []
            for (index, value) in try arguments.array("indexPaths").enumerated() {
                paths.append(try WireDecoding.indexPath(value, field: "indexPaths[\(index)]"))
            }
            return { context throws(WireError) in
                let view = try view(viewName, context, dataSource: viewDataSource)
                let dataSource = try context.dataSource(view.dataSource)
                let snapshot = dataSource.snapshot
                // Check everything first: a dequeue that fails hands out no cell.
                var plan: [(path: IndexPath, item: Item, section: String, registration: Registration)] = []
                plan.reserveCapacity(paths.count)
                for path in paths {
                    guard let item = snapshot.item(at: path) else { throw WireError(.indexOutOfRange, "There is no item at \(path).") }
                    let section = snapshot.sectionIdentifier(at: path.section)!
                    guard let name = dataSource.cellProvider?.registration(for: item, inSection: section) else {
                        throw WireError(.noRegistration, "No cell provider rule maps item \"\(item.id)\" (section \"\(section)\") to a registration.")
                    }
                    guard let registration = context.state.registrations[name] else {
                        throw WireError(.registrationNotFound, "Registration \"\(name)\" (for item \"\(item.id)\") does not exist.")
                    }
                    plan.append((path, item, section, registration))
                }
                var results: [CellReply] = []
                results.reserveCapacity(plan.count)
                var pluginRequests: [PluginCellRequest] = []
                for entry in plan {
                    if entry.registration.pluginType != nil {
                        // Configured by its plugin: a placeholder now, the plugin's content later.
                        let (id, reused, _) = view.cells.obtain(registration: entry.registration.name, for: entry.item.id)
                        var cellState = view.cells.cells[id]!.state
                        let placement = outlinePlacement(of: entry.item.id, inSection: entry.section, in: dataSource)
                        if let placement, cellState.expanded != placement.expanded {
                            cellState.expanded = placement.expanded
                            view.cells.setState(cellState, of: id)
                        }
                        let templateContext = TemplateContext(
                            item: entry.item.id, data: entry.item.data, section: entry.section, indexPath: entry.path, state: cellState)
                        pluginRequests.append(PluginCellRequest(index: results.count, registration: entry.registration, context: templateContext, cell: id))
                        results.append(
                            CellReply(
                                id: id, position: .item(entry.path, entry.item.id), registration: entry.registration.name, reused: reused,
                                state: cellState, indentationLevel: placement?.level ?? 0))
                        continue
                    }
                    results.append(
                        configureCell(
                            view: view, key: entry.item.id, registration: entry.registration,
                            context: { state in
                                TemplateContext(item: entry.item.id, data: entry.item.data, section: entry.section, indexPath: entry.path, state: state)
                            }, position: .item(entry.path, entry.item.id),
                            outline: outlinePlacement(of: entry.item.id, inSection: entry.section, in: dataSource)))
                }
                let version = dataSource.version
                func execution(_ cells: [CellReply]) -> Execution {
                    Execution { writer in
                        writer.key("version")
                        writer.int(version)
                        writer.key("cells")
                        writer.beginArray()
                        for cell in cells { cell.write(to: &writer) }
                        writer.endArray()
                    }
                }
                guard !pluginRequests.isEmpty, let eventLoop = context.connection.eventLoop else { return execution(results) }
                let deferred = Deferred<Execution>()
                configurePluginCells(pluginRequests, replies: results, purpose: .dequeue, view: view, state: context.state, eventLoop: eventLoop) { cells in
                    deferred.resolve(execution(cells))
                }
                var waiting = execution([])
                waiting.deferred = deferred
                return waiting
            }
        }
    }

    static var dequeueSupplementaryCommand: Command {
        Command(
            name: "dequeueSupplementary",
            summary: "A configured supplementary view (header, footer, …) of a section, from its registration's pool.",
            arguments: viewArguments + [
                ArgumentSpec("elementKind", "string", required: true, "e.g. \"header\"."),
                ArgumentSpec("indexPath", "[section, item]", required: true, "The section (item is usually 0)."),
            ],
            result: "{version, cell: {cell, indexPath, elementKind, section, registration, reused, content, background, accessories, state}}"
        ) { arguments, _ throws(WireError) in
            let (viewName, viewDataSource) = try readView(&arguments)
            let elementKind = try arguments.string("elementKind")
            let path = try WireDecoding.indexPath(arguments.required("indexPath"), field: "indexPath")
            return { context throws(WireError) in
                let view = try view(viewName, context, dataSource: viewDataSource)
                let dataSource = try context.dataSource(view.dataSource)
                guard let section = dataSource.snapshot.section(at: path.section), path.item >= 0 else {
                    throw WireError(.indexOutOfRange, "There is no section at \(path.section).")
                }
                let asItem = Item(section.id, data: section.data)
                guard let name = dataSource.supplementaryProviders[elementKind]?.registration(for: asItem, inSection: section.id) else {
                    throw WireError(.noRegistration, "No supplementary provider for \"\(elementKind)\" maps section \"\(section.id)\" to a registration.")
                }
                guard let registration = context.state.registrations[name] else {
                    throw WireError(.registrationNotFound, "Registration \"\(name)\" does not exist.")
                }
                let cell = configureCell(
                    view: view, key: supplementaryKey(elementKind, section: section.id, index: path.item), registration: registration,
                    context: { state in TemplateContext(item: section.id, data: section.data, section: section.id, indexPath: path, state: state) },
                    position: .supplementary(path, elementKind: elementKind, section: section.id))
                let version = dataSource.version
                return Execution { writer in
                    writer.key("version")
                    writer.int(version)
                    writer.key("cell")
                    cell.write(to: &writer)
                }
            }
        }
    }

    /// Takes a cell for `key` (displayed, pooled or new) and configures it.
    static func configureCell(
        view: ViewSession, key: String, registration: Registration, context makeContext: (CellState) -> TemplateContext,
        position: CellReply.Position, outline: OutlinePlacement? = nil
    ) -> CellReply {
        let (id, reused, _) = view.cells.obtain(registration: registration.name, for: key)
        var state = view.cells.cells[id]!.state
        // An outline item's expansion is the outline's, not the cell's.
        if let outline, state.expanded != outline.expanded {
            state.expanded = outline.expanded
            view.cells.setState(state, of: id)
        }
        var reply = CellReply(
            id: id, position: position, registration: registration.name, reused: reused, state: state,
            indentationLevel: outline?.level ?? 0)
        do throws(CellError) {
            let configured = try registration.configure(makeContext(state))
            let previousType = view.cells.cells[id]!.contentType
            if view.cells.configured(id, with: configured) {
                reply.replacedWarning =
                    "Cell \(id) of registration \"\(registration.name)\" had a \(previousType ?? "") configuration and now gets a \(configured.type) one: the content view must be replaced. Use separate registrations for different types of cells."
            }
            reply.configured = configured
        } catch {
            view.cells.release(id)
            reply.error = WireError(error)
        }
        return reply
    }

    static var endDisplayingCommand: Command {
        Command(
            name: "endDisplaying", summary: "Returns cells that left the screen to their registrations' reuse pools.",
            arguments: viewArguments + [
                ArgumentSpec("cells", "[string]", required: true, "Cell identifiers from dequeue."),
            ],
            result: "{released}"
        ) { arguments, _ throws(WireError) in
            let (viewName, viewDataSource) = try readView(&arguments)
            let ids = try arguments.strings("cells")
            return { context throws(WireError) in
                let view = try view(viewName, context, dataSource: viewDataSource)
                let unknown = ids.filter { view.cells.cells[$0]?.displayedFor == nil }
                if !unknown.isEmpty {
                    throw WireError(.cellNotFound, "View \"\(viewName)\" displays no cell \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")).")
                }
                for id in ids { view.cells.release(id) }
                return Execution { writer in
                    writer.key("released")
                    writer.int(ids.count)
                }
            }
        }
    }

    static var setStateCommand: Command {
        Command(
            name: "setState",
            summary: "Changes a displayed cell's state (selected, highlighted, …, custom keys) and configures it again; the view also gets a cellUpdated event.",
            arguments: viewArguments + [
                ArgumentSpec("cell", "string", "The cell (or give item)."),
                ArgumentSpec("item", "string", "The item whose displayed cell changes."),
                ArgumentSpec("state", "{selected?, highlighted?, focused?, disabled?, editing?, expanded?, swiped?, reordering?, …}", required: true, "Flags are booleans; other keys are custom (null removes)."),
            ],
            result: "{version, cell: {…as in dequeue}}"
        ) { arguments, _ throws(WireError) in
            let (viewName, viewDataSource) = try readView(&arguments)
            let cellID = try arguments.optionalString("cell")
            let itemID = try arguments.optionalString("item")
            guard case .object(let changes) = try arguments.required("state") else {
                throw WireError(.invalidArgument, "Argument \"state\" must be an object.")
            }
            guard (cellID == nil) != (itemID == nil) else {
                throw WireError(.invalidArgument, "Give either \"cell\" or \"item\".")
            }
            return { context throws(WireError) in
                let view = try view(viewName, context, dataSource: viewDataSource)
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
                let version = dataSource.version
                func execution(_ cell: CellReply) -> Execution {
                    let event = cellUpdatedEvent(view: view, cell: cell)
                    return Execution(
                        result: { writer in
                            writer.key("version")
                            writer.int(version)
                            writer.key("cell")
                            cell.write(to: &writer)
                        },
                        afterReply: [{ view.connection.sendEvent(event) }])
                }
                switch reconfigure(view: view, cell: id, in: dataSource, registrations: context.state.registrations) {
                case nil:
                    throw WireError(.cellNotFound, "Cell \"\(id)\" no longer shows anything.")
                case .configured(let cell):
                    return execution(cell)
                case .plugin(let request, let placeholder):
                    guard let eventLoop = context.connection.eventLoop else { return execution(placeholder) }
                    let deferred = Deferred<Execution>()
                    configurePluginCells([request], replies: [placeholder], purpose: .reconfigure, view: view, state: context.state, eventLoop: eventLoop) {
                        deferred.resolve(execution($0[0]))
                    }
                    var waiting = Execution { _ in }
                    waiting.deferred = deferred
                    return waiting
                }
            }
        }
    }

    /// A displayed cell configured again: at once, or once its plugin answers `request` (the placeholder
    /// holds the cell's previous content, which stays when the plugin fails).
    enum Reconfiguration {
        case configured(CellReply)
        case plugin(PluginCellRequest, placeholder: CellReply)
    }

    /// Configures a displayed cell again for what it shows now (same cell identifier); `nil` when what it
    /// showed is gone.
    static func reconfigure(view: ViewSession, cell id: String, in dataSource: DataSource, registrations: [String: Registration]) -> Reconfiguration? {
        guard let cell = view.cells.cells[id], let key = cell.displayedFor, let registration = registrations[cell.registration] else { return nil }
        let snapshot = dataSource.snapshot
        if registration.pluginType != nil {
            guard let path = snapshot.indexPath(ofItem: key), let data = snapshot.data(ofItem: key) else { return nil }
            let section = snapshot.sectionIdentifier(at: path.section)!
            let placement = outlinePlacement(of: key, inSection: section, in: dataSource)
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
                    position: .supplementary(path, elementKind: String(parts[1]), section: section.id)))
        }
        guard let path = snapshot.indexPath(ofItem: key), let data = snapshot.data(ofItem: key) else { return nil }
        let section = snapshot.sectionIdentifier(at: path.section)!
        return .configured(
            configureCell(
                view: view, key: key, registration: registration,
                context: { TemplateContext(item: key, data: data, section: section, indexPath: path, state: $0) },
                position: .item(path, key), outline: outlinePlacement(of: key, inSection: section, in: dataSource)))
    }

    static func cellUpdatedEvent(view: ViewSession, cell: CellReply) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.key("event")
        writer.string("cellUpdated")
        writer.key("dataSource")
        writer.string(view.dataSource)
        writer.key("view")
        writer.string(view.name)
        writer.key("cell")
        cell.write(to: &writer)
        writer.endObject()
        return writer.bytes
    }

    /// `styles`: every built-in style's defaults, which a view merges under a cell's content.
    static var stylesCommand: Command {
        Command(
            name: "styles",
            summary: "The built-in content styles with their default properties (a cell's content lists only what differs), backgrounds and accessories.",
            arguments: [], result: "{content: {style: defaults}, backgrounds: {style: defaults}, accessories: {kind: displayed}}"
        ) { _, _ throws(WireError) in
            { _ throws(WireError) in
                Execution { writer in
                    writer.key("content")
                    writer.value(.object(Dictionary(uniqueKeysWithValues: ListContentStyle.allCases.map { ($0.rawValue, JSONValue.object($0.defaults)) })))
                    writer.key("backgrounds")
                    writer.value(.object(Dictionary(uniqueKeysWithValues: BackgroundStyle.allCases.map { ($0.rawValue, JSONValue.object($0.defaults)) })))
                    writer.key("accessories")
                    writer.value(.object(Dictionary(uniqueKeysWithValues: AccessoryKind.allCases.map { ($0.rawValue, JSONValue.string($0.defaultDisplayed)) })))
                }
            }
        }
    }
}

/// One cell in a reply or a `cellUpdated` event, written field by field.
struct CellReply {
    enum Position {
        case item(IndexPath, String)
        case supplementary(IndexPath, elementKind: String, section: String)
    }

    var id: String
    var position: Position
    var registration: String
    var reused: Bool
    var state: CellState
    /// The item's depth in its section's outline (UIKit's `indentationLevel` of a list cell); written when above 0.
    var indentationLevel = 0
    var configured: ConfiguredCell?
    var replacedWarning: String?
    var error: WireError?

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("cell")
        writer.string(id)
        switch position {
        case .item(let path, let item):
            writer.key("indexPath")
            writer.indexPath(path)
            writer.key("item")
            writer.string(item)
        case .supplementary(let path, let elementKind, let section):
            writer.key("indexPath")
            writer.indexPath(path)
            writer.key("elementKind")
            writer.string(elementKind)
            writer.key("section")
            writer.string(section)
        }
        writer.key("registration")
        writer.string(registration)
        writer.key("reused")
        writer.bool(reused)
        if let configured {
            writer.key("content")
            writer.value(configured.content)
            if !configured.background.isNull {
                writer.key("background")
                writer.value(configured.background)
            }
            if case .array(let accessories) = configured.accessories, !accessories.isEmpty {
                writer.key("accessories")
                writer.value(configured.accessories)
            }
        }
        writer.key("state")
        Self.writeState(state, to: &writer)
        if indentationLevel > 0 {
            writer.key("indentationLevel")
            writer.int(indentationLevel)
        }
        if let replacedWarning {
            writer.key("warnings")
            writer.beginArray()
            writer.beginObject()
            writer.key("code")
            writer.string("content-configuration-replaced")
            writer.key("message")
            writer.string(replacedWarning)
            writer.endObject()
            writer.endArray()
        }
        if let error {
            writer.key("error")
            writer.wireError(error)
        }
        writer.endObject()
    }

    /// Only the flags that are set, and the custom keys: `{}` for a cell in its default state.
    static func writeState(_ state: CellState, to writer: inout JSONWriter) {
        writer.beginObject()
        for (name, on) in [
            ("selected", state.selected), ("highlighted", state.highlighted), ("focused", state.focused), ("disabled", state.disabled),
            ("editing", state.editing), ("expanded", state.expanded), ("swiped", state.swiped), ("reordering", state.reordering),
        ] where on {
            writer.key(name)
            writer.bool(true)
        }
        for key in state.custom.keys.sorted() {
            writer.key(key)
            writer.value(state.custom[key]!)
        }
        writer.endObject()
    }
}

extension CommandRouter {
    /// What a mutation does to the views' displayed cells, as UIKit does it: cells of deleted or
    /// reloaded items (and sections) go back to their pools, and the view dequeues the reloaded index
    /// paths again; reconfigured items keep their cell, configured anew and pushed as `cellUpdated`.
    static func updateDisplayedCells(of dataSource: DataSource, after changes: StagedChanges, reloadData: Bool, state: ServerState) {
        let views = dataSource.attachedViews.filter { $0.cells.displayedCount > 0 }
        guard !views.isEmpty else { return }
        let snapshot = dataSource.snapshot
        var reloadedItems = Set<String>()
        var reloadedSections = Set<String>()
        var reconfigured: [String] = []
        for stage in changes.stages {
            for reload in stage.itemReloads { reloadedItems.insert(reload.item.id) }
            for reload in stage.sectionReloads { reloadedSections.insert(reload.section.id) }
            for change in stage.itemReconfigures { reconfigured.append(change.item.id) }
        }
        for view in views {
            for (key, id) in view.cells.displayed {
                let gone: Bool
                if key.hasPrefix("\u{1}") {
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
            for item in reconfigured {
                guard let cell = view.cells.displayedCell(for: item) else { continue }
                switch reconfigure(view: view, cell: cell.id, in: dataSource, registrations: state.registrations) {
                case nil: continue
                case .configured(let configured): view.connection.sendEvent(cellUpdatedEvent(view: view, cell: configured))
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
                        view.connection.sendEvent(cellUpdatedEvent(view: view, cell: cell))
                    }
                }
            }
        }
    }
}
