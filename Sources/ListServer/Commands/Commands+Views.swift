import DiffableCore
import ListStore
import ListWire

/// `attach`: this connection becomes a view of a data source.
struct AttachCommand: CommandDeclaration {
    static let about = CommandAbout("attach", "Attaches this connection as a view of a data source: the current snapshot now, then a `changes` event for every mutation, in version order.", result: "{view, incarnation, version, resumed, sections?, selections?: [{view, user, items}], expansionScope?: \"perView\"}")
    @Arg("The data source.") var dataSource: String
    @Arg("A name for the view, unique on the data source (one is made up when absent).") var view: String?
    @Arg("Resume: the last version this view applied (give incarnation too).") var fromVersion: Count?
    @Arg("Resume: the incarnation that version belongs to.") var incarnation: String?
    @Arg("Follow the other views' selections: their current selections now, then a selectionChanged event for every change.")
    var selectionEvents: Bool?
    @Arg(
        "Expansion scope perView: what this view expanded or collapsed itself before (attaching anew); it shows the snapshot as they make it (never resumed). Ignored when the scope is shared; unknown items are left out."
    ) var expansion: ViewExpansionArgument?

    func validate(_ context: CommandContext) throws(WireError) {
        if (fromVersion == nil) != (incarnation == nil) {
            throw WireError(.invalidArgument, "fromVersion and incarnation go together: give both to resume, or neither.")
        }
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let name = self.dataSource
        let dataSource = try context.dataSource(name)
        let connection = context.connection
        let viewLimit = context.state.configuration.maximumViewsPerConnection
        guard connection.views.count < viewLimit else {
            throw WireError(
                .limitExceeded, "This connection has \(connection.views.count) views attached; the limit is \(viewLimit) (maxViewsPerConnection).")
        }
        var view: String
        if let requested = self.view {
            view = requested
        } else {
            // A made-up name is never refused: one taken already (anyone can guess the numbers) is
            // skipped for the next.
            var number = connection.views.count + 1
            view = "view-\(connection.id)-\(number)"
            while dataSource.views[view] != nil {
                number += 1
                view = "view-\(connection.id)-\(number)"
            }
        }
        if view.isEmpty || view.utf8.count > context.state.configuration.maximumIdentifierBytes {
            throw WireError(.invalidArgument, "A view name must have 1 to \(context.state.configuration.maximumIdentifierBytes) bytes.")
        }
        if let error = ControlCharacters.error("view", view) { throw error }
        if dataSource.views[view] != nil {
            throw WireError(.invalidArgument, "Data source \"\(name)\" already has a view named \"\(view)\".")
        }
        let attachment = ViewSession(name: view, dataSource: name, connection: connection, accounts: context.state.model.accounts, poolLimit: context.state.configuration.maximumPooledCells)
        attachment.followsSelection = selectionEvents ?? false
        let expansion = expansion?.sections
        if dataSource.expansionScope == .perView, expansion?.isEmpty == false { try CommandRouter.checkOwnExpansionQuota(for: attachment, context.state) }
        let selections = selectionEvents == true ? dataSource.attachedViews.filter { !$0.selection.isEmpty } : []
        dataSource.attach(attachment)
        connection.views.append(attachment)
        let perView = dataSource.expansionScope == .perView
        if perView, let expansion, !expansion.isEmpty {
            _ = dataSource.changeExpansion(of: attachment, sharedChanges: StagedChanges()) { $0.set(expansion) }
            dataSource.settleExpansion(of: attachment)
        }
        let snapshot = attachment.snapshot(in: dataSource)
        let version = dataSource.version
        let current = dataSource.incarnation
        // Resuming: the same incarnation, and every version since fromVersion still retained, in
        // less than half the view queue (a longer backlog would overflow it: the snapshot instead).
        // A view showing an expansion of its own is sent what it shows (the retained events are
        // the data source's).
        let resumable = attachment.expansion == nil ? fromVersion?.value : nil
        let missed = resumable.flatMap { from in incarnation == current ? dataSource.retained.events(after: from) : nil }.flatMap {
            events in
            events.reduce(0) { $0 + $1.count + 1 } <= context.state.configuration.maximumViewQueueBytes / 2 ? events : nil
        }
        var execution = CommandResult { writer in
            writer.key("view")
            writer.string(view)
            writer.key("incarnation")
            writer.string(current)
            writer.key("version")
            writer.int(version)
            writer.key("resumed")
            writer.bool(missed != nil)
            if missed == nil {
                writer.key("sections")
                writer.sections(of: snapshot)
            }
            if perView {
                writer.key("expansionScope")
                writer.string(ExpansionScope.perView.rawValue)
            }
            if selectionEvents == true {
                writer.key("selections")
                writer.beginArray()
                for other in selections { other.writeSelection(to: &writer) }
                writer.endArray()
            }
        }
        if let missed, !missed.isEmpty {
            execution.afterReply.append {
                // The missed events at once (bounded by changeLogBytes), before any new one.
                for event in missed { connection.sendEvent(event) }
            }
        }
        return execution
    }
}

/// `detach`: a view of this connection, or all its views of a data source, detached.
struct DetachCommand: CommandDeclaration {
    static let about = CommandAbout("detach", "Detaches a view of this connection (by name), or all its views of a data source.", result: "{detached: [view]}")
    @Arg("The view's name (or give dataSource).") var view: String?
    @Arg("Every view of this connection on this data source.") var dataSource: String?

    func validate(_ context: CommandContext) throws(WireError) {
        if view == nil && dataSource == nil {
            throw WireError(.invalidArgument, "Missing argument \"view\" or \"dataSource\".")
        }
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let connection = context.connection
        let matching =
            if let view {
                connection.views.all(named: view, dataSource: dataSource)
            } else {
                connection.views.filter { $0.dataSource == dataSource }
            }
        if matching.isEmpty {
            throw WireError(.notAttached, "No matching view is attached on this connection.")
        }
        for attachment in matching {
            context.state.dataSources[attachment.dataSource]?.detach(view: attachment.name)
        }
        for attachment in matching { connection.views.remove(attachment) }
        return CommandResult { writer in
            writer.key("detached")
            writer.value(.array(matching.map { .string($0.name) }))
        }
    }
}

extension CommandRouter {
    static var viewCommands: [Command] { [Command(AttachCommand.self), Command(DetachCommand.self)] }
}
