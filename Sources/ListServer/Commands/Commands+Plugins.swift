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
        let session = PluginSession(name: name, types: types, connection: connection, registry: state.plugins)
        connection.client.plugin = session
        for type in types {
            state.plugins.byType[type] = session
            if let supervised { state.plugins.reservations[type] = supervised }
        }
        state.logger.info("plugin connected", metadata: ["plugin": "\(name)", "provides": "\(types.joined(separator: ","))"])
    }

    static var pluginCommands: [Command] { [Command(ConfiguredCommand.self)] }

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
