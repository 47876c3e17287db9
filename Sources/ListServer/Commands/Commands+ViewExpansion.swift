import DiffableCore
import ListEngine
import ListStore
import ListWire

/// Expansion per view: a data source whose expansion scope is `perView` lets each view expand and
/// collapse outline items in its own view, with read access (see `ViewExpansion`).
/// `setExpansionScope`: whose outline expansion a data source's views show.
struct SetExpansionScopeCommand: CommandDeclaration {
    static let about = CommandAbout("setExpansionScope", "Whose outline expansion views show: shared (expand and collapse change the data source, for every view) or perView (each view may also expand and collapse in its own view, with read access).", result: "{dataSource, version, expansionScope}")
    static var effect: Command.Effect { .mutates }
    @Arg("The data source.") var dataSource: String
    @Arg("shared is where every data source starts.") var scope: ExpansionScope

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (dataSource, scope) = (dataSource, scope)
        return try context.state.commit(
            .dataSource(name: dataSource, ifVersion: nil, createAs: nil, .setExpansionScope(scope)), connection: context.connection,
            allocator: context.allocator
        ) { applied in
            CommandResult(
                reply: .dataSource(dataSource, after: applied.outcome) { writer in
                    writer.key("expansionScope")
                    writer.string(scope.rawValue)
                })
        }
    }
}

extension ExpansionScope: JSONArgumentValue {
    public static var wireType: String { "\"shared\" | \"perView\"" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> ExpansionScope {
        let text = try String.decode(value, name: name)
        guard let scope = ExpansionScope(rawValue: text) else {
            throw WireError(.invalidArgument, "Argument \"\(name)\" must be \"shared\" or \"perView\", not \"\(ControlCharacters.escaped(text))\".")
        }
        return scope
    }
}

/// `expandInView` and `collapseInView`: outline items expanded or collapsed in one view only.
struct ViewExpansionCommand<Direction: ExpansionDirection>: CommandDeclaration {
    static var about: CommandAbout {
        CommandAbout(
            Direction.expands ? "expandInView" : "collapseInView",
            (Direction.expands ? "Expands" : "Collapses")
                + " outline items in one view only (expansion scope perView; read access): the view gets expansionChanged with its changes.",
            result: "{dataSource, view, version}")
    }
    var target: ViewTarget
    @Arg("The section holding the outline.") var section: String
    @Arg("Outline items.") var items: [String]
    @Arg("false: the view shows the change without animation (default true).") var animatingDifferences: Bool?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let view = try target.view(context)
        let dataSource = try context.dataSource(view.dataSource)
        guard dataSource.expansionScope == .perView else {
            throw WireError(
                .invalidArgument,
                "Data source \"\(dataSource.name)\" shares one expansion among its views (expansion scope shared): \(Direction.expands ? "expand" : "collapse") changes it for every view and needs write access; its owner can set the scope to perView (setExpansionScope).")
        }
        guard let outline = dataSource.outlines[section] else {
            throw WireError(
                dataSource.snapshot.contains(section: section) ? .invalidArgument : .sectionNotFound,
                dataSource.snapshot.contains(section: section)
                    ? "Section \"\(section)\" has no outline (applySectionSnapshot makes one)."
                    : "Section \"\(section)\" does not exist.")
        }
        let unknown = items.filter { !outline.contains($0) }
        if !unknown.isEmpty {
            throw WireError(
                .itemNotFound,
                "Items \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")) are not in the outline of section \"\(section)\".")
        }
        if view.expansion == nil { try CommandRouter.checkOwnExpansionQuota(for: view, context.state) }
        let changes = dataSource.changeExpansion(of: view, sharedChanges: StagedChanges()) { expansion in
            expansion.set(items, expanded: Direction.expands, inSection: section)
        }
        dataSource.settleExpansion(of: view)
        let version = dataSource.version
        var json = JSONWriter(capacity: 192)
        json.changes(changes, reloadData: false, animatingDifferences: animatingDifferences ?? true)
        let event = ViewEvent.expansionChanged(dataSource: dataSource.name, view: view.name, version: version, changesJSON: json.bytes)
        let state = context.state
        var result = CommandResult { writer in
            writer.key("dataSource")
            writer.string(dataSource.name)
            writer.key("view")
            writer.string(view.name)
            writer.key("version")
            writer.int(version)
        }
        result.afterReply.append {
            view.connection.sendEvent(event)
            // Cells of items the view no longer shows go back to their pools; disclosures change.
            ViewPublisher.updateDisplayedCells(of: view, in: dataSource, after: changes, reloadData: false, sources: state.cellSources, work: RenderWork())
        }
        return result
    }
}

extension CommandRouter {
    static var viewExpansionCommands: [Command] {
        [Command(SetExpansionScopeCommand.self), Command(ViewExpansionCommand<Expanding>.self), Command(ViewExpansionCommand<Collapsing>.self)]
    }

    /// `outline` with the expansion `view` shows: its own items expanded or collapsed applied (a copy,
    /// O(items), only when it has any in `section`).
    static func outlineAsShown(_ outline: SectionSnapshot, section: String, by view: ViewSession) -> SectionSnapshot {
        guard let own = view.expansion?.overrides[section], !own.isEmpty else { return outline }
        var shown = outline
        shown.expand(own.filter(\.value).map(\.key))
        shown.collapse(own.filter { !$0.value }.map(\.key))
        return shown
    }

    /// Refuses a further view of the user showing an expansion of its own past
    /// `maxOwnExpansionViewsPerUser`, or one whose copy of its data source's snapshot would take the
    /// viewer's account past `maxBytesPerUser` (`quota-exceeded`, part `expansions`). Root's own
    /// connections are exempt (a relay's are not).
    static func checkOwnExpansionQuota(for view: ViewSession, _ state: ServerState) throws(WireError) {
        let holder = view.connection.accountHolder
        guard holder.isCharged else { return }
        if let dataSource = state.dataSources[view.dataSource] {
            let snapshot = dataSource.snapshot
            let copy = snapshot.storedBytes + (snapshot.numberOfItems + snapshot.numberOfSections) * ViewExpansion.entryBytes
            try state.checkCharge(of: view.connection, adding: copy, to: .expansions)
        }
        let uid = view.connection.identity.uid
        let limit = state.configuration.maximumOwnExpansionViewsPerUser
        var held = 0
        for dataSource in state.dataSources.values {
            held += dataSource.viewsWithOwnExpansion.lazy.filter { $0.connection.accountHolder == holder }.count
        }
        guard held >= limit else { return }
        throw WireError(
            .quotaExceeded,
            "User \(view.connection.identity.displayName) (uid \(uid)) has \(held) views showing an expansion of their own; the limit is \(limit) (maxOwnExpansionViewsPerUser). Detach one first.",
            details: ["quota": "maxOwnExpansionViewsPerUser", "uid": .int(Int(uid)), "limit": .int(limit)])
    }
}

/// The `expansion` argument of `attach`: `{section: {expanded?: [item], collapsed?: [item]}}`, what a
/// view that expanded or collapsed items itself asks to show again when it attaches anew.
struct ViewExpansionArgument: JSONArgumentValue {
    /// Per section, the items the view expanded (true) or collapsed (false).
    var sections: [String: [String: Bool]]

    static var wireType: String { "{section: {expanded?: [item], collapsed?: [item]}}" }

    static func decode(_ value: JSONValue, name: String) throws(WireError) -> ViewExpansionArgument {
        guard case .object(let sections) = value else {
            throw WireError(.invalidArgument, "Argument \"\(name)\" must be an object: {section: {expanded?: [item], collapsed?: [item]}}.")
        }
        var result: [String: [String: Bool]] = [:]
        for (section, entry) in sections {
            guard case .object(let members) = entry, members.keys.allSatisfy({ $0 == "expanded" || $0 == "collapsed" }) else {
                throw WireError(.invalidArgument, "\(name).\(section) must be {expanded?: [item], collapsed?: [item]}.")
            }
            var items: [String: Bool] = [:]
            for (key, expanded) in [("collapsed", false), ("expanded", true)] {
                guard let list = members[key], !list.isNull else { continue }
                guard case .array(let values) = list else { throw WireError(.invalidArgument, "\(name).\(section).\(key) must be an array of strings.") }
                for value in values {
                    guard case .string(let item) = value else {
                        throw WireError(.invalidArgument, "\(name).\(section).\(key) must be an array of strings.")
                    }
                    items[item] = expanded
                }
            }
            result[section] = items
        }
        return ViewExpansionArgument(sections: result)
    }
}
