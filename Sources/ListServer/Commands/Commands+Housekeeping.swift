import CellCore
import DiffableCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// Events a connection may receive, for `describe`.
let eventCatalog: [(name: String, summary: String)] = [
    ("changes", "To attached views, after every accepted mutation of the data source, in version order: {dataSource, version, changes}; a view showing an expansion of its own (scope perView) gets its own changes, with view: {dataSource, view, version, changes}."),
    ("expansionChanged", "To a view that expanded or collapsed outline items in its own view (expandInView, collapseInView): its changes, at the same version (no other view sees them): {dataSource, view, version, changes}."),
    ("cellUpdated", "To a view whose displayed cell was configured again (setState, reconfigured or updated items), same cell id: {dataSource, view, cell}."),
    ("selectionChanged", "To views attached with selectionEvents when another view of the data source selects or deselects items (setState selected, a deleted item, a view that goes away): {dataSource, view, from: {view, user, items}, selected, deselected}."),
    ("configure", "To a plugin: cells to configure {request, cells: [{cell, registration, type, indexPath, item, data, state, properties}]}; answer with configured before the deadline."),
    ("layoutChanged", "To attached views when setLayout changed the data source's layout (a new version): {dataSource, version, layout}."),
    ("registrationChanged", "To attached views whose data source's cell or supplementary provider names a registration that was made (change \"created\"), deleted (\"deleted\") or given another definition (\"replaced\", register with replace): their cells of it, and cells that failed for want of it, are to be dequeued again: {dataSource, view, registration, change}."),
    ("display", "To connections that watchDisplay a data source: the items one of its views will display (it dequeued their cells) and is about to (prefetch), merged per view and watcher while unsent, each list at most 1000 identifiers and 64 KiB of them (the signals left out counted in more): {dataSource, view, willDisplay, prefetch, more?}."),
    ("didReorder", "To connections that watchDisplay a data source, once a view's reorder is stored (reorderingHandlers.didReorder): {dataSource, view, user, item, version, changes}."),
    ("dropped", "To attached views when their data source is dropped, or (reason \"access\") a reload took the user's read access away; the view is detached: {dataSource, view, reason?}."),
    ("overflow", "To a view whose connection left more than the view queue limit unread; the connection is then closed: {limit}. To a display watcher whose queue and unsent output passed the same limit (watch: \"display\"): the watch stops, the connection stays: {dataSource, watch, limit}."),
    ("shutdown", "To connections with attached views when listd stops; the connection is then closed."),
]

/// `hello`: who the client is, which protocol it speaks; a plugin says what it configures.
struct HelloCommand: CommandDeclaration {
    static let about = CommandAbout("hello", "Says who the client is and checks the protocol version.", result: "{protocol, server, features, limits, uid, gid, pid, user?, role?}")
    static var effect: Command.Effect { .independentOfStore }
    @Arg("The protocol version the client speaks (1).") var `protocol`: Int?
    @Arg("A name for the client, shown in stats and logs.") var client: String?
    @Arg("true: the client relays for others (listweb's pages); its views, queues and output are charged like any user's, root's included.")
    var relay: Bool?
    @Arg("\"plugin\" to become a plugin cell provider (with name and provides).") var role: String?
    @Arg("A plugin's name.") var name: String?
    @Arg("The content configuration types a plugin configures (registrations use plugin:TYPE).", type: "[string]") var provides: [JSONValue]?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let protocolVersion = CommandRouter.protocolVersion
        if let version = `protocol`, version != protocolVersion {
            throw WireError(.invalidArgument, "Protocol version \(version) is not supported; listd speaks \(protocolVersion).")
        }
        if let client { context.connection.client.name = client }
        if let relay { try context.connection.becomeRelay(relay) }
        if let role {
            guard role == "plugin" else { throw WireError(.invalidArgument, "Unknown role \"\(role)\"; the only role is \"plugin\".") }
            try CommandRouter.becomePlugin(context, name: name, provides: provides)
        } else if name != nil || provides != nil {
            throw WireError(.invalidArgument, "\"name\" and \"provides\" go with \"role\": \"plugin\".")
        }
        let configuration = context.state.configuration
        let identity = context.connection.identity
        return CommandResult { writer in
            writer.key("protocol")
            writer.int(protocolVersion)
            writer.key("server")
            writer.string(CommandRouter.serverVersion)
            writer.key("features")
            writer.value(["snapshots", "sectionSnapshots", "batch", "views", "layouts", "cells", "plugins"])
            writer.key("limits")
            CommandRouter.writeLimits(configuration, to: &writer)
            // Who listd sees on this connection (the kernel's word, SO_PEERCRED).
            writer.key("uid")
            writer.int(Int(identity.uid))
            writer.key("gid")
            writer.int(Int(identity.gid))
            writer.key("pid")
            writer.int(Int(identity.pid))
            if let user = identity.user {
                writer.key("user")
                writer.string(user)
            }
            if role != nil {
                writer.key("role")
                writer.string("plugin")
            }
        }
    }
}

/// `ping`: answered at once.
struct PingCommand: CommandDeclaration {
    static let about = CommandAbout("ping", "Answers at once.", result: "{}")
    static var effect: Command.Effect { .independentOfStore }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult { CommandResult { _ in } }
}

/// `describe`: every command with its arguments (from their declarations), error code and event.
struct DescribeCommand: CommandDeclaration {
    static let about = CommandAbout("describe", "Lists every command with its arguments, every error code and every event.", result: "{protocol, commands: [{name, summary, arguments, result}], errors, events}")
    static var effect: Command.Effect { .independentOfStore }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        CommandResult { writer in
            let router = CommandRouter.shared
            writer.key("protocol")
            writer.int(CommandRouter.protocolVersion)
            writer.key("commands")
            writer.beginArray()
            for name in router.commandOrder {
                let command = router.commands[name]!
                writer.beginObject()
                writer.key("name")
                writer.string(command.name)
                writer.key("summary")
                writer.string(command.summary)
                writer.key("arguments")
                writer.beginArray()
                for argument in command.arguments {
                    writer.value([
                        "name": .string(argument.name), "type": .string(argument.type),
                        "required": .bool(argument.required), "summary": .string(argument.summary),
                    ])
                }
                writer.endArray()
                writer.key("result")
                writer.string(command.result)
                writer.endObject()
            }
            writer.endArray()
            writer.key("errors")
            writer.beginArray()
            for code in ErrorCode.allCases {
                writer.value(["code": .string(code.rawValue), "summary": .string(code.summary)])
            }
            writer.endArray()
            writer.key("events")
            writer.beginArray()
            for event in eventCatalog { writer.value(["name": .string(event.name), "summary": .string(event.summary)]) }
            writer.endArray()
        }
    }
}

/// `stats`: the counters.
struct StatsCommand: CommandDeclaration {
    static let about = CommandAbout("stats", "Counters: connections, views, data sources with their versions and sizes, cells per registration and per view, memory, commands, errors; with a state directory or a PostgreSQL database, the store's (`sqlite` or `postgresql`; whether it can be read, or changes are refused until it answers again, and how often listd tried; groups, mutations and records written, checkpoints, write failures, the writer's time in transactions and the time mutations waited to be durable, summed; the mutations being written now); with several listd instances on one PostgreSQL database, `shared`: how many versions this instance is behind the newest it was told of, reconnections, writes another instance beat (and that were run again), changes followed, data sources read whole, notices, failed reads).", result: "{uptimeSeconds, connections: {current, accepted, refused, partialLineBytes, heldOutputBytes, closedForHeldOutput, clients: [{id, uid, user?, pid, client?, plugin?, views}]}, views, dataSources, items, cells: {registrations, views, registrationsRepeated}, memory, commands, errors, events, access: {permissionDenied, quotaRefused, storedBytesByUser, accounts: {uid: {data, layouts, cellProviders, registrations, changeLog, cells, expansions, queues, output, total}}}, storage?: {store, available, restoreRetries, groupsWritten, mutationsWritten, recordsWritten, checkpointsWritten, writeFailures, writeMilliseconds, waitMilliseconds, writesInFlight, shared?: {lag, reconnects, conflicts, changesFollowed, dataSourcesReloaded, notices, readFailures}}, limits}")
    static var effect: Command.Effect { .independentOfStore }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (state, connection) = (context.state, context.connection)
        return CommandResult { writer in state.writeStats(for: connection, to: &writer) }
    }
}

extension CommandRouter {
    static var housekeepingCommands: [Command] {
        [Command(HelloCommand.self), Command(PingCommand.self), Command(DescribeCommand.self), Command(StatsCommand.self)]
    }

    static func writeLimits(_ configuration: ServerConfiguration, to writer: inout JSONWriter) {
        writer.value([
            "maxLineBytes": .int(configuration.maximumLineBytes),
            "maxViewQueueBytes": .int(configuration.maximumViewQueueBytes),
            "maxDataSources": .int(configuration.maximumDataSources),
            "maxItemsPerDataSource": .int(configuration.maximumItemsPerDataSource),
            "maxBatchOperations": .int(configuration.maximumBatchOperations),
            "maxIdentifierBytes": .int(configuration.maximumIdentifierBytes),
            "maxDisplaySignalsPerViewPerSecond": .int(configuration.maximumDisplaySignalsPerViewPerSecond),
            "maxConnections": .int(configuration.maximumConnections),
            "maxRegistrations": .int(configuration.maximumRegistrations),
            "maxPooledCells": .int(configuration.maximumPooledCells),
            "maxViewsPerConnection": .int(configuration.maximumViewsPerConnection),
            "maxOwnExpansionViewsPerUser": .int(configuration.maximumOwnExpansionViewsPerUser),
            "pluginDeadlineMilliseconds": .int(configuration.pluginDeadlineMilliseconds),
            "maxOutputBytes": .int(configuration.maximumOutputBytes),
            "maxOutputBytesHard": .int(configuration.maximumOutputBytesHard),
            "maxOutputBytesTotal": .int(configuration.maximumOutputBytesTotal),
            "partialLineTimeoutSeconds": .int(configuration.partialLineTimeoutSeconds),
            "maxPartialLineBytesTotal": .int(configuration.maximumPartialLineBytesTotal),
            "maxPluginPendingRequests": .int(configuration.maximumPluginPendingRequests),
            "maxConnectionsPerUser": .int(configuration.maximumConnectionsPerUser),
            "maxDataSourcesPerUser": .int(configuration.quota.maximumDataSources),
            "maxItemsPerUser": .int(configuration.quota.maximumItems),
            "maxBytesPerUser": .int(configuration.quota.maximumBytes),
            "maxRegistrationsPerUser": .int(configuration.quota.maximumRegistrations),
        ])
    }
}

/// This process's resident memory, from /proc/self/statm.
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 128)
    guard fgets(&line, 128, file) != nil else { return 0 }
    let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
