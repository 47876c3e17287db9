import CellCore
import DiffableCore
import ListWire
import NIOCore

extension CommandRouter {
    /// How long a supervised plugin's first run keeps other plugins from announcing types while it has
    /// not connected (one that hangs must not lock the others out).
    static let supervisedPluginHelloGrace: Duration = .seconds(10)

    /// `hello {role: "plugin"}`: the connection becomes the provider of its types.
    static func becomePlugin(_ context: CommandContext, name: String?, provides: [JSONValue]?) throws(WireError) {
        guard let name, !name.isEmpty else { throw WireError(.invalidArgument, "A plugin needs a \"name\".") }
        guard let provides, !provides.isEmpty else { throw WireError(.invalidArgument, "A plugin needs \"provides\": the types it configures.") }
        var types: [String] = []
        for value in provides {
            guard case .string(let type) = value, !type.isEmpty, !type.hasPrefix("plugin:") else {
                throw WireError(.invalidArgument, "\"provides\" lists type names such as \"emoji\" (registrations then use plugin:emoji).")
            }
            types.append(type)
        }
        let connection = context.connection
        guard connection.client.plugin == nil else { throw WireError(.invalidArgument, "This connection is already a plugin.") }
        let state = context.state
        // Plugins see every payload sent to them and put content in everyone's cells: only trusted users
        // (and the plugins listd starts itself) may be one.
        // Supervised plugins run as listd's own user; a pid alone proves nothing (pids are reused).
        let supervised =
            connection.identity.uid == state.serviceIdentity.uid ? state.plugins.supervisor?.supervisedName(peer: connection.identity.pid) : nil
        guard supervised != nil || state.policy.mayProvidePlugins(connection.identity) else {
            throw WireError(
                .permissionDenied,
                "User \(connection.identity.displayName) (uid \(connection.identity.uid)) is not trusted to provide plugins; root, the user listd runs as, and the users and groups of trustedPluginUsers and trustedPluginGroups are.",
                details: ["uid": .int(Int(connection.identity.uid))])
        }
        let taken = types.filter { state.plugins.byType[$0] != nil }
        if !taken.isEmpty {
            throw WireError(
                .pluginTypeTaken,
                "Types \(taken.map { "\"\($0)\"" }.joined(separator: ", ")) are provided by plugin \"\(state.plugins.byType[taken[0]]!.name)\".")
        }
        // From listd's start, the plugins it supervises come first: until each has connected (its types
        // are then reserved for it), its first run has ended, or it has had `supervisedPluginHelloGrace`
        // to connect, no other plugin may announce types, since theirs are not known yet.
        if supervised == nil, let supervisor = state.plugins.supervisor {
            let reservedFor = Set(state.plugins.reservations.values)
            let comingUp = supervisor.statuses.filter { status in
                status.lastExit == nil && !reservedFor.contains(status.name)
                    && (status.startedAt.map { ContinuousClock.now - $0 < Self.supervisedPluginHelloGrace } ?? true)
            }.map(\.name)
            if !comingUp.isEmpty {
                throw WireError(
                    .pluginTypeTaken,
                    "listd is starting its supervised plugins (\(comingUp.sorted().joined(separator: ", "))): the types they provide are theirs, and not known until they connect; try again once they have.")
            }
        }
        // A supervised plugin's types (those it announced, and those its configuration names) stay its
        // own while the supervisor starts or restarts it.
        for type in types {
            guard let holder = state.plugins.reservations[type], holder != supervised else { continue }
            if state.plugins.supervisor?.manages(holder) == true {
                throw WireError(
                    .pluginTypeTaken,
                    "Type \"\(type)\" belongs to the supervised plugin \"\(holder)\": only the process listd starts for it may provide it.")
            }
            state.plugins.reservations[type] = nil
        }
        let session = PluginSession(name: name, types: types, connection: connection)
        connection.client.plugin = session
        for type in types {
            state.plugins.byType[type] = session
            if let supervised { state.plugins.reservations[type] = supervised }
        }
        state.logger.info("plugin connected", metadata: ["plugin": "\(name)", "provides": "\(types.joined(separator: ","))"])
    }

    static var pluginCommands: [Command] { [Command(ConfiguredCommand.self)] }

    /// One cell for a plugin to configure: where its answer goes in the reply, and what it shows.
    struct PluginCellRequest {
        var index: Int
        var registration: Registration
        var context: TemplateContext
        var cell: String
        /// What the view shows in the cell (the item's identifier).
        var key: String { context.item }
    }

    /// Why cells go to their plugin: a dequeue hands out no cell that failed; a reconfigure keeps the
    /// displayed cell and its previous content, and reports the error beside it.
    enum PluginConfigurePurpose {
        case dequeue
        case reconfigure
    }

    /// One cell of a configure event: `{cell, registration, type, indexPath, item, data, state, properties}`,
    /// written straight from the model (this is the plugin path's hottest loop).
    static func writeConfigureCell(_ entry: PluginCellRequest, type: String, to writer: inout JSONWriter) {
        let context = entry.context
        writer.beginObject()
        writer.key("cell")
        writer.string(entry.cell)
        writer.key("registration")
        writer.string(entry.registration.name)
        writer.key("type")
        writer.string(type)
        writer.key("indexPath")
        writer.indexPath(context.indexPath)
        writer.key("item")
        writer.string(context.item)
        writer.key("data")
        writer.value(context.data)
        // As in dequeue replies: only the flags that are on, and the custom keys.
        writer.key("state")
        CellReply.writeState(context.state, to: &writer)
        writer.key("properties")
        if entry.registration.hasContentProperties {
            writer.value(entry.registration.pluginProperties(context))
        } else {
            writer.beginObject()
            writer.endObject()
        }
        writer.endObject()
    }

    /// Sends plugin cells to their plugins (one configure request per plugin), and calls `done` once every
    /// one has an answer, an error or has timed out. `replies` holds every cell of the reply, in order;
    /// plugin cells are placeholders until then.
    static func configurePluginCells(
        _ requests: [PluginCellRequest], replies: [CellReply], purpose: PluginConfigurePurpose,
        view: ViewSession, state: ServerState, eventLoop: EventLoop, done: @escaping ([CellReply]) -> Void
    ) {
        var replies = replies
        var byType: [String: [PluginCellRequest]] = [:]
        for request in requests { byType[request.registration.pluginType!, default: []].append(request) }
        var outstanding = 0
        func fail(_ entry: PluginCellRequest, _ code: ErrorCode, _ message: String) {
            if purpose == .dequeue { view.cells.release(entry.cell) }
            replies[entry.index].error = WireError(code, message)
        }
        var finished = false
        func finishIfDone() {
            if outstanding == 0 && !finished {
                finished = true
                done(replies)
            }
        }
        for (type, entries) in byType {
            guard let plugin = state.plugins.byType[type] else {
                for entry in entries { fail(entry, .pluginUnavailable, "No connected plugin provides \"\(type)\".") }
                continue
            }
            outstanding += 1
            plugin.configure(
                ids: entries.map(\.cell), writeCells: { writer in for entry in entries { writeConfigureCell(entry, type: type, to: &writer) } },
                deadline: .milliseconds(Int64(state.configuration.pluginDeadlineMilliseconds)),
                limits: (state.configuration.maximumPluginPendingRequests, state.configuration.maximumOutputBytesHard), eventLoop: eventLoop
            ) { answers in
                outstanding -= 1
                for entry in entries {
                    guard let answers else {
                        fail(entry, .pluginTimeout, "Plugin \"\(plugin.name)\" did not configure the cell within \(state.configuration.pluginDeadlineMilliseconds) ms.")
                        continue
                    }
                    guard let answer = answers[entry.cell] else {
                        fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\" is gone or gave no answer for this cell.")
                        continue
                    }
                    if case .object(let error)? = answer["error"] {
                        plugin.errors += 1
                        fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\": \(error["message"]?.stringValue ?? "error")")
                        continue
                    }
                    guard case .object(let content)? = answer["content"] else {
                        plugin.errors += 1
                        fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\" sent content of the wrong shape.")
                        plugin.close(reason: "configured: cell \(entry.cell) has no content object")
                        continue
                    }
                    // A plugin providing several types may answer with any of them (UIKit: a cell given
                    // another content configuration type); a type it does not provide is a protocol error.
                    var contentType = type
                    if let named = content["type"] {
                        guard case .string(let name) = named, plugin.types.contains(name) else {
                            plugin.errors += 1
                            fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\" answered with a content type it does not provide.")
                            plugin.close(reason: "configured: cell \(entry.cell) has content type \(named), not one of \(plugin.types)")
                            continue
                        }
                        contentType = name
                    }
                    let configured = entry.registration.configured(
                        withPluginContent: content, type: "plugin:" + contentType, background: answer["background"],
                        accessories: answer["accessories"], entry.context)
                    // The view may have let the cell go (or reused it for another item) while the plugin worked.
                    guard view.cells.displayedCell(for: entry.key)?.id == entry.cell else {
                        replies[entry.index].configured = configured
                        continue
                    }
                    if let previous = view.cells.replacedContentType(configuring: entry.cell, with: configured) {
                        replies[entry.index].replacedWarning =
                            "Cell \(entry.cell) of registration \"\(entry.registration.name)\" had a \(previous) configuration and now gets a \(configured.type) one: the content view must be replaced. Use separate registrations for different types of cells."
                    }
                    replies[entry.index].configured = configured
                }
                finishIfDone()
            }
        }
        finishIfDone()
    }
}

extension CommandRouter {
    /// What follows the error reply to a line that is not JSON: nothing for a client; a plugin broke the
    /// protocol ("Deadlines and faults"), so it is disconnected with the reason logged, and the cells
    /// waiting on it fail with `plugin-unavailable`.
    static func afterUnreadableLine(from connection: ConnectionHandler, _ error: WireError) -> [() -> Void] {
        guard let plugin = connection.client.plugin else { return [] }
        return [{ plugin.close(reason: "sent a line that is not JSON (\(error.message))") }]
    }
}

/// `configured`: a plugin's answer to a configure event.
struct ConfiguredCommand: CommandDeclaration {
    static let about = CommandAbout("configured", "A plugin's answer to a configure event: per cell, its content (and optional background and accessories) or an error.", result: "{accepted} (false when the request had already timed out)")
    @Arg("The configure event's request number.") var request: Int
    @Arg("One answer per cell of the request.", type: "[{cell, content?, background?, accessories?, error?}]") var cells: [JSONValue]

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        guard let plugin = context.connection.client.plugin else {
            throw WireError(.invalidRequest, "Only plugins send configured (hello with role plugin first).")
        }
        var answers: [String: JSONValue] = [:]
        for (index, cell) in cells.enumerated() {
            guard case .string(let id)? = cell["cell"] else {
                return CommandResult(
                    reply: .members { _ in },
                    afterReply: [{ plugin.close(reason: "configured: cells[\(index)] has no \"cell\"") }])
            }
            answers[id] = cell
        }
        let accepted: Bool
        switch plugin.answer(request, cells: answers) {
        case .delivered: accepted = true
        case .late: accepted = false
        case .unknown:
            return CommandResult(
                reply: .members { writer in
                    writer.key("accepted")
                    writer.bool(false)
                }, afterReply: [{ plugin.close(reason: "configured: request \(request) was never sent (or was answered already)") }])
        }
        return CommandResult { writer in
            writer.key("accepted")
            writer.bool(accepted)
        }
    }
}
