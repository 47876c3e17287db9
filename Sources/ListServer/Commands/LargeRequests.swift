import DiffableCore
import ListDurability
import ListEngine
import ListStore
import ListWire
import NIOCore
import NIOPosix

/// Large requests do their heavy, pure work off the event loop, so one client's 1M-item snapshot does
/// not stall everyone else's requests.
///
/// A line of at least `CommandRouter.largeRequestBytes` is decoded on the large-request thread. An
/// `apply` then also builds its snapshot, diffs it against the data source as it was when the work
/// started, and encodes the changes there; back on the loop, the command commits that result in O(1)
/// when the data source is still at that version (else it does the work again on the loop, as for a
/// small request). Meanwhile the connection's later requests wait their turn (replies stay in order);
/// other connections are served. The snapshot an `apply` replaces is freed on that thread too.
extension CommandRouter {
    /// Lines this long are decoded off the event loop.
    static let largeRequestBytes = 256 << 10

    /// What reading a request line gave.
    enum DecodedLine: Sendable {
        case request(Request)
        /// Not JSON at all (a plugin sending this is disconnected).
        case notJSON(WireError)
        /// JSON, but not a request.
        case invalid(WireError, rawID: [UInt8]?)
    }

    /// Decodes a line: the one-pass decoder for well-formed requests, else the reference parser, which
    /// says what is wrong. Pure: runs on any thread.
    static func decode(_ line: UnsafeRawBufferPointer) -> DecodedLine {
        if let request = Request.decode(line: line) { return .request(request) }
        return decodeByReference(line)
    }

    /// What the one-pass decoder did not take, parsed the reference way (which says what is wrong).
    static func decodeByReference(_ line: UnsafeRawBufferPointer) -> DecodedLine {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            return .notJSON(WireError(.invalidJSON, "The line is not valid JSON: \(error)."))
        }
        do throws(WireError) {
            var request = try Request(value)
            request.rawID = Request.rawID(in: line) ?? request.rawID
            return .request(request)
        } catch {
            return .invalid(error, rawID: Request.rawID(in: line))
        }
    }

    /// Runs a large line: decoded (and, for `apply`, prepared) on `pool`, then run on the loop.
    func handleLarge(_ line: [UInt8], connection: ConnectionHandler, pool: NIOThreadPool, loop: EventLoop) -> CommandResult {
        let deferred = Deferred<CommandResult>()
        let waiting = NIOLoopBound((connection, deferred), eventLoop: loop)
        let router = self
        pool.runIfActive(eventLoop: loop) { () -> (DecodedLine, ApplyInput?) in
            let decoded = line.withUnsafeBytes { Self.decode($0) }
            guard case .request(let request) = decoded else { return (decoded, nil) }
            return (decoded, ApplyInput(request))
        }.whenComplete { result in
            let (connection, deferred) = waiting.value
            guard case .success(let (decoded, input)) = result else {
                // The thread is stopping (listd is): do it here.
                return deferred.resolve(line.withUnsafeBytes { router.handle(line: $0, connection: connection) })
            }
            guard let input, let job = input.job(state: connection.state, for: connection) else {
                return deferred.resolve(line.withUnsafeBytes { router.handle(decoded, line: $0, connection: connection) })
            }
            pool.runIfActive(eventLoop: loop) { try job.run() }.whenComplete { prepared in
                let (connection, deferred) = waiting.value
                deferred.resolve(line.withUnsafeBytes { router.handle(decoded, line: $0, connection: connection, prepared: try? prepared.get()) })
            }
        }
        return CommandResult(reply: .encoded([]), deferred: deferred)
    }
}

/// An `apply` request's snapshot argument, read off the loop.
struct ApplyInput: Sendable {
    let dataSource: String
    let sections: [(section: Section, items: [Item])]
    let reloadData: Bool
    let animatingDifferences: Bool

    /// `nil` unless `request` is an `apply` whose arguments read well (any problem is reported by the
    /// command itself, on the loop).
    init?(_ request: Request) {
        guard request.command == ApplyCommand.about.name else { return nil }
        // Decoded as the command decodes them (`null` is absent); a wrong type is left to the command.
        var arguments = request.arguments
        guard let apply = try? ApplyCommand(arguments: &arguments) else { return nil }
        dataSource = apply.target.dataSource
        sections = apply.snapshot.sections
        reloadData = apply.reloadData ?? false
        animatingDifferences = apply.target.animates
    }

    /// The work against the data source as it is now (on the loop): `nil` when the command would refuse
    /// the snapshot before building it (over the item limit). A data source `connection`'s user may not
    /// read is worked against as a missing one (nothing of it is read; the command refuses it as one).
    func job(state: ServerState, for connection: ConnectionHandler) -> ApplyJob? {
        let count = sections.reduce(0) { $0 + $1.items.count }
        guard count <= state.configuration.maximumItemsPerDataSource else { return nil }
        let base = state.visibleDataSource(dataSource, to: connection).map {
            ApplyJob.Base(snapshot: $0.model.snapshot, version: $0.model.version, incarnation: $0.model.incarnation)
        }
        return ApplyJob(input: self, base: base)
    }
}

/// Builds an `apply`'s snapshot and its diff against `base` (off the loop).
struct ApplyJob: Sendable {
    struct Base: Sendable {
        let snapshot: Snapshot
        let version: Int
        let incarnation: String
    }

    let input: ApplyInput
    let base: Base?

    func run() throws -> PreparedApply {
        let new = try base.map { try Snapshot(input.sections, reusing: $0.snapshot) } ?? Snapshot(input.sections)
        let changes = input.reloadData ? StagedChanges() : new.difference(from: base?.snapshot ?? Snapshot())
        var writer = JSONWriter(capacity: 192)
        writer.changes(changes, reloadData: input.reloadData, animatingDifferences: input.animatingDifferences)
        return PreparedApply(
            dataSource: input.dataSource, baseVersion: base?.version, baseIncarnation: base?.incarnation, snapshot: new,
            known: KnownChanges(changes: changes, json: writer.bytes))
    }
}

/// An `apply` built and diffed off the loop, valid while the data source is at `baseVersion` of
/// `baseIncarnation` (both `nil`: it did not exist). A class: every command's context carries one
/// reference, usually `nil`.
final class PreparedApply: Sendable {
    let dataSource: String
    let baseVersion: Int?
    let baseIncarnation: String?
    let snapshot: Snapshot
    let known: KnownChanges

    init(dataSource: String, baseVersion: Int?, baseIncarnation: String?, snapshot: Snapshot, known: KnownChanges) {
        self.dataSource = dataSource
        self.baseVersion = baseVersion
        self.baseIncarnation = baseIncarnation
        self.snapshot = snapshot
        self.known = known
    }

    /// Whether it still applies to `current` (the data source now).
    func applies(to current: DataSourceModel?) -> Bool {
        current?.version == baseVersion && current?.incarnation == baseIncarnation
    }
}

/// Outline changes to large data sources are worked out off the loop too: an outline of 400k items
/// expanded or collapsed costs passes over all of them, whatever the request's size.
extension CommandRouter {
    /// Data sources holding this many items have their outline changes rehearsed off the loop.
    static let rehearsedItems = 50_000

    /// The change's execution, once it was rehearsed off the loop (`StateModel.rehearse`) and committed
    /// with the result; `nil` when it runs here as usual: not an outline change of a large data source,
    /// no thread for it (in process), or a shared store (whose conflicts are run again on the loop).
    static func rehearsedOffLoop(_ change: StateChange, _ context: CommandContext, animatingDifferences: Bool) -> CommandResult? {
        let state = context.state
        guard let pool = state.storage.largeRequests, state.storage.follower == nil, let loop = context.connection.eventLoop, case .dataSource(let name, _, _, let operation) = change
        else { return nil }
        switch operation {
        case .replaceOutline, .setExpansion: break
        default: return nil
        }
        // Only for a data source the user may read (a hidden one costs what a missing one does).
        guard let current = state.visibleDataSource(name, to: context.connection)?.model, current.storedItemCount >= rehearsedItems,
            let base = state.model.rehearsalBase(of: name)
        else { return nil }
        let limits = state.changeLimits
        let deferred = Deferred<CommandResult>()
        let waiting = NIOLoopBound((context, deferred), eventLoop: loop)
        pool.runIfActive(eventLoop: loop) { () throws(WireError) -> Rehearsal in try StateModel.rehearse(change, on: base, limits: limits) }
            .whenComplete { result in
                let (context, deferred) = waiting.value
                var execution: CommandResult
                do throws(WireError) {
                    // A rehearsal that failed is not the last word (the state may have changed since, and
                    // the access policy speaks first): the change then runs here, as any other.
                    execution = try commitMutation(change, context, rehearsal: try? result.get(), mayRehearse: false, animatingDifferences: animatingDifferences)
                } catch {
                    execution = CommandResult(reply: .failure(error))
                }
                deferred.resolve(execution)
            }
        var execution = CommandResult { _ in }
        execution.deferred = deferred
        return execution
    }
}

