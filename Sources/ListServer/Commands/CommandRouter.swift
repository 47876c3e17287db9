import DiffableCore
import ListDurability
import ListWire
import NIOCore

/// Everything a command's handler can reach.
struct CommandContext {
    let state: ServerState
    let connection: ConnectionHandler
    let allocator: ByteBufferAllocator
    /// An `apply` built and diffed off the loop (large requests), for the command to use when it applies.
    var prepared: PreparedApply? = nil
}

/// One command: its documentation and its handler, both from its declaration (`CommandDeclaration`).
/// The handler decodes the arguments and returns what to do; the router rejects unknown arguments
/// before doing it, so a request with a misspelt argument changes nothing.
struct Command: Sendable {
    /// What a command does to the state that lasts, declared with it: what the router needs to know
    /// while a group of changes is being made durable, and while the store is unavailable.
    enum Effect: Sendable {
        /// Reads the state (or changes what lives with a connection: views, cells, plugins): waits while
        /// a group of changes is being made durable; served whatever the store's condition.
        case reads
        /// Changes the state that lasts (through `ServerState.commit`): waits behind requests that wait,
        /// refused while the store is unavailable.
        case mutates
        /// Touches no stored state at all: answered at once, also while a group is being made durable.
        case independentOfStore
    }

    /// Position in `CommandRouter.commandOrder` (for counters).
    var index = 0
    let name: String
    let summary: String
    let arguments: [ArgumentDocumentation]
    let result: String
    var effect: Effect = .reads
    /// Decodes the command from a request's arguments, validates it, refuses arguments it does not
    /// declare (suggesting from the command given), and runs it.
    let execute: @Sendable (inout Arguments, CommandContext, Command) throws(WireError) -> CommandResult

    init(
        name: String, summary: String, arguments: [ArgumentDocumentation], result: String, effect: Effect = .reads,
        execute: @escaping @Sendable (inout Arguments, CommandContext, Command) throws(WireError) -> CommandResult
    ) {
        self.name = name
        self.summary = summary
        self.arguments = arguments
        self.result = result
        self.effect = effect
        self.execute = execute
    }
}

/// Routes request lines to commands and writes the reply envelopes:
/// `{"id":…,"ok":true,"result":{…}}` or `{"id":…,"ok":false,"error":{"code":…,"message":…}}`.
struct CommandRouter: RequestRunner {
    static let protocolVersion = 1
    /// The one router (its tables are built once).
    static let shared = CommandRouter()
    static let serverVersion = "listd/" + ListdVersion.number

    let commands: [String: Command]
    let commandOrder: [String]

    init() {
        let all = Self.housekeepingCommands + Self.dataSourceCommands + Self.mutationCommands + Self.queryCommands
            + Self.viewCommands + Self.displayCommands + Self.layoutCommands + Self.cellCommands + Self.pluginCommands + Self.storageCommands
        var numbered = all
        for index in numbered.indices { numbered[index].index = index }
        commands = Dictionary(uniqueKeysWithValues: numbered.map { ($0.name, $0) })
        commandOrder = all.map(\.name)
    }

    func handle(line: UnsafeRawBufferPointer, connection: ConnectionHandler) -> CommandResult {
        connection.client.currentCommand = ""
        if line.count >= Self.largeRequestBytes, let pool = connection.state.storage.largeRequests, let loop = connection.eventLoop {
            return handleLarge([UInt8](line), connection: connection, pool: pool, loop: loop)
        }
        // The one-pass decoder takes well-formed requests (the path every small request takes).
        if let request = Request.decode(line: line, reusing: &connection.requestBuffers) { return handle(request, line: line, connection: connection) }
        return handle(Self.decodeByReference(line), line: line, connection: connection)
    }

    /// Runs a decoded line (`prepared`: an `apply` built off the loop).
    func handle(_ decoded: DecodedLine, line: UnsafeRawBufferPointer, connection: ConnectionHandler, prepared: PreparedApply? = nil) -> CommandResult {
        switch decoded {
        case .request(let request):
            return handle(request, line: line, connection: connection, prepared: prepared)
        case .notJSON(let failure):
            var outcome = fail(id: nil, failure, connection: connection)
            // A plugin that sends something other than JSON is disconnected (see "Plugin cell providers").
            outcome.afterReply = Self.afterUnreadableLine(from: connection, failure)
            return outcome
        case .invalid(let error, let rawID):
            return fail(id: rawID.map(EchoedID.init(bytes:)), error, connection: connection)
        }
    }

    /// `Unknown command "appendItem"; did you mean "appendItems"?`, or, with nothing close, a pointer to
    /// `describe`.
    static func unknownCommandMessage(_ name: String, among names: [String]) -> String {
        guard let meant = Spelling.closest(to: name, in: names) else { return "Unknown command \"\(name)\"; `describe` lists the commands." }
        return "Unknown command \"\(name)\"; did you mean \"\(meant)\"?"
    }

    /// Runs a decoded request (`line` is kept only for a request that must wait its turn).
    private func handle(_ request: Request, line: UnsafeRawBufferPointer, connection: ConnectionHandler, prepared: PreparedApply? = nil) -> CommandResult {
        let state = connection.state
        guard let command = commands[request.command] else {
            return fail(
                id: request.echoedID,
                WireError(.unknownCommand, Self.unknownCommandMessage(request.command, among: commandOrder)),
                connection: connection)
        }
        if command.effect == .mutates, let reason = state.storage.pipeline?.unavailableReason {
            // The store cannot be read: a change could not be stored. Reads go on (memory holds only
            // what was stored: failed writes are undone in memory).
            return fail(id: request.echoedID, WireError(.storageFailed, reason), connection: connection)
        }
        if command.effect != .independentOfStore, let pipeline = state.storage.pipeline, pipeline.mustPark(mutation: command.effect == .mutates) {
            // A group of changes is being made durable: run this request once it is.
            let deferred = Deferred<CommandResult>()
            let copy = [UInt8](line)
            pipeline.park { deferred.resolve(copy.withUnsafeBytes { self.handle(line: $0, connection: connection) }) }
            return CommandResult(reply: .encoded([]), deferred: deferred)
        }
        state.stats.countCommand(command.index)
        connection.client.currentCommand = command.name
        if state.isShuttingDown {
            return fail(id: request.echoedID, WireError(.shuttingDown, "listd is stopping and accepts no new requests."), connection: connection)
        }
        var context = CommandContext(state: state, connection: connection, allocator: ByteBufferAllocator())
        context.prepared = prepared
        do {
            var arguments = request.arguments
            if command.effect == .reads, request.arguments.members["minVersion"] != nil,
                let wanted = try Self.minimumVersion(&arguments, command: command)
            {
                // A data source the caller may not read is one that is not served here (as a missing one).
                let name = request.arguments.members["dataSource"]?.stringValue ?? ""
                if (state.visibleDataSource(name, to: connection)?.version ?? -1) < wanted {
                    return waitForVersion(wanted, of: name, request: request, line: line, connection: connection)
                }
            }
            var execution = try command.execute(&arguments, context, command)
            Self.encodeReply(id: request.echoedID, of: &execution, scratch: &connection.replyScratch)
            return execution
        } catch {
            return fail(id: request.echoedID, error, connection: connection)
        }
    }

    /// How long a read with `minVersion` waits for this instance to follow the store that far.
    static let minimumVersionWait = TimeAmount.seconds(10)

    /// A read's `minVersion` (only commands that read one data source take it).
    private static func minimumVersion(_ arguments: inout Arguments, command: Command) throws(WireError) -> Int? {
        guard command.arguments.contains(where: { $0.name == "dataSource" }) else {
            throw WireError(.invalidArgument, "Argument \"minVersion\" is for reads of one data source; \(command.name) takes none.")
        }
        return try arguments.optionalInt("minVersion", in: Arguments.countRange)
    }

    /// Runs a read once this instance holds `version` of the data source (read-your-writes across
    /// instances): the follower reads the store now, without waiting for a notification; a version the
    /// store has not reached within `minimumVersionWait` (or without a store shared with other
    /// instances, at once) fails with `version-not-reached`.
    private func waitForVersion(_ version: Int, of name: String, request: Request, line: UnsafeRawBufferPointer, connection: ConnectionHandler)
        -> CommandResult
    {
        let state = connection.state
        let notReached = { (held: Int?) in
            WireError(
                .versionNotReached,
                "Data source \"\(name)\" is \(held.map { "at version \($0)" } ?? "not served") here, not yet at \(version)"
                    + (state.storage.follower == nil ? "; no other instance shares this listd's store." : " after waiting \(Self.minimumVersionWait.nanoseconds / 1_000_000_000) s."),
                details: ["version": held.map { .int($0) } ?? .null])
        }
        guard let follower = state.storage.follower, let loop = connection.eventLoop else {
            return fail(id: request.echoedID, notReached(state.visibleDataSource(name, to: connection)?.version), connection: connection)
        }
        let deferred = Deferred<CommandResult>()
        let copy = [UInt8](line)
        let waiting = WaitingRead()
        waiting.expire = { [self] in
            deferred.resolve(fail(id: request.echoedID, notReached(state.visibleDataSource(name, to: connection)?.version), connection: connection))
        }
        let bound = NIOLoopBound(waiting, eventLoop: loop)
        let timer = loop.scheduleTask(in: Self.minimumVersionWait) { bound.value.finish()?() }
        // Catch up, again after a short pause while the version is not held (a read that failed, or
        // one held back by a local write in flight), until it is or the timer answers.
        waiting.attempt = { [self] in
            follower.catchUp([name], registrations: false).whenResolved {
                guard !waiting.isFinished else { return }
                guard let held = state.visibleDataSource(name, to: connection)?.version, held >= version else {
                    loop.scheduleTask(in: .milliseconds(50)) { bound.value.attempt?() }
                    return
                }
                _ = waiting.finish()
                timer.cancel()
                deferred.resolve(copy.withUnsafeBytes { self.handle(line: $0, connection: connection) })
            }
        }
        waiting.attempt?()
        return CommandResult(reply: .encoded([]), deferred: deferred)
    }

    /// A read waiting for a version: answered once, by a catch-up that reached it or by the timer (on
    /// the event loop only).
    private final class WaitingRead {
        var expire: (() -> Void)?
        var attempt: (() -> Void)?
        private(set) var isFinished = false

        /// The first call returns what answers the read on expiry (the caller that gets it finishes the
        /// read, by expiring it or otherwise); later calls return `nil`. Drops the closures (no cycle).
        func finish() -> (() -> Void)? {
            guard !isFinished else { return nil }
            isFinished = true
            defer {
                expire = nil
                attempt = nil
            }
            return expire ?? {}
        }
    }

    /// Runs a decoded command. With a store shared by several instances, two outcomes may only mean
    /// that this instance had not yet applied what another one committed, and are run again once it
    /// has: a change that could not be stored because another instance changed the data source first
    /// (up to `conflictRetries` times; the pipeline has caught up by the time it fails), and an
    /// `ifVersion` newer than the version held here (once, after catching up with the data source).
    ///
    /// Generic over the declaration, so the command runs without a closure made for it (only a run
    /// again keeps it for later).
    static func run<Declaration: CommandDeclaration>(
        _ command: Declaration, context: CommandContext, retries: Int = conflictRetries
    ) throws(WireError) -> CommandResult {
        let expected = command.expectedVersion
        var execution: CommandResult
        do {
            execution = try command.run(context)
        } catch {
            guard error.code == .versionConflict, retries == conflictRetries, let follower = context.state.storage.follower,
                let name = expected?.dataSource, let version = expected?.version,
                let dataSource = context.state.visibleDataSource(name, to: context.connection), version > dataSource.version
            else { throw error }
            let retried = Deferred<CommandResult>()
            follower.catchUp([name], registrations: false).whenResolved {
                final { () throws(WireError) in try Self.run(command, context: context, retries: 0) }.whenResolved { retried.resolve($0) }
            }
            var waiting = CommandResult { _ in }
            waiting.deferred = retried
            return waiting
        }
        guard retries > 0, context.state.storage.follower != nil else { return execution }
        if execution.awaited != nil {
            // Held by number until durable; after a conflict, `DurableReplies` runs it again with this.
            execution.awaited?.rerun = { id in
                final { () throws(WireError) in try Self.run(command, context: context, retries: retries - 1) }.map { result in
                    var final = result
                    var fresh: [UInt8] = []
                    encodeReply(id: id, of: &final, scratch: &fresh)
                    return final
                }
            }
            return execution
        }
        guard execution.awaitsStorage, let durable = execution.deferred else { return execution }
        let retried = Deferred<CommandResult>()
        durable.whenResolved { result in
            guard let failure = result.failure, failure.details["conflict"] == true else { return retried.resolve(result) }
            final { () throws(WireError) in try Self.run(command, context: context, retries: retries - 1) }.whenResolved { retried.resolve($0) }
        }
        execution.deferred = retried
        return execution
    }

    /// Mutations that lost to another instance's commit are run again this many times.
    static let conflictRetries = 3

    /// The execution `body` makes, waiting for its deferred one when it has one; its error as a failure.
    private static func final(_ body: () throws(WireError) -> CommandResult) -> Deferred<CommandResult> {
        let done = Deferred<CommandResult>()
        do {
            let execution = try body()
            if let deferred = execution.deferred {
                deferred.whenResolved { done.resolve($0) }
            } else {
                done.resolve(execution)
            }
        } catch {
            let failed = CommandResult(reply: .failure(error))
            done.resolve(failed)
        }
        return done
    }

    /// Puts the reply envelope around an execution's result, in place: its reply becomes the encoded
    /// line (a failure: the error line, alone; a result that finishes later: one that encodes what it
    /// finishes with). In place, so the result (its event, its actions) is not copied per request.
    /// `scratch`: an empty buffer to write the reply into (the connection's, given back once the reply is
    /// written: no allocation per reply).
    private static func encodeReply(id: EchoedID?, of execution: inout CommandResult, scratch: inout [UInt8]) {
        if case .failure(let failure) = execution.reply {
            execution = CommandResult(reply: .encoded(CommandResult.errorLine(id: id, failure)))
            return
        }
        if let deferred = execution.deferred {
            // Resolves later (into an execution that may wait in turn, e.g. for its change to be stored).
            execution = CommandResult(
                reply: .encoded([]),
                deferred: deferred.map {
                    var resolved = $0
                    var fresh: [UInt8] = []
                    encodeReply(id: id, of: &resolved, scratch: &fresh)
                    return resolved
                }, awaitsStorage: execution.awaitsStorage)
            return
        }
        var buffer: [UInt8] = []
        swap(&buffer, &scratch)
        var writer = JSONWriter(reusing: consume buffer)
        writer.beginObject()
        if let id {
            writer.key(literal: "id")
            writer.echoedID(id)
        }
        writer.key(literal: "ok")
        writer.bool(true)
        writer.key(literal: "result")
        writer.beginObject()
        switch execution.reply {
        case .members(let members): members(&writer)
        case .mutation(let reply): reply.write(into: &writer)
        case .failure, .encoded: break
        }
        writer.endObject()
        writer.endObject()
        execution.reply = .encoded(writer.bytes)
        execution.awaitsStorage = false
        execution.awaited?.id = id
    }

    /// The error reply, counted; refusals by the access policy or a per-user quota are logged (notice)
    /// with the user, the command and the error.
    private func fail(id: EchoedID?, _ error: WireError, connection: ConnectionHandler) -> CommandResult {
        let state = connection.state
        state.stats.errorCounts[error.code.rawValue, default: 0] += 1
        connection.client.lastErrorCode = error.code.rawValue
        if error.code == .internal { state.logger.error("internal error", metadata: ["error": "\(error.message)"]) }
        let quota = error.details["quota"]
        if error.code == .permissionDenied || quota != nil {
            if quota != nil { state.stats.quotaRefusals += 1 } else { state.stats.permissionDenials += 1 }
            state.logger.notice(
                error.code == .permissionDenied ? "permission denied" : "quota exceeded",
                metadata: [
                    "user": "\(connection.identity.displayName)", "uid": "\(connection.identity.uid)", "connection": "\(connection.id)",
                    "command": "\(connection.client.currentCommand)", "error": "\(error.message)",
                ])
        }
        return CommandResult(reply: .encoded(CommandResult.errorLine(id: id, error)))
    }
}

extension CommandContext {
    /// The named data source, or `data-source-not-found`; `permission-denied` when the connection's
    /// user may not even read it (an access rule of level `none`).
    func dataSource(_ name: String) throws(WireError) -> DataSource {
        guard let dataSource = state.dataSources[name] else {
            throw WireError(.dataSourceNotFound, "Data source \"\(name)\" does not exist.")
        }
        try state.require(.read, on: dataSource.model, by: connection.identity, to: "read it")
        return dataSource
    }
}
