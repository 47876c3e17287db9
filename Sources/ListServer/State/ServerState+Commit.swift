import CellCore
import DiffableCore
import ListDurability
import ListEngine
import ListStore
import ListWire
import NIOCore

/// The replies a change's command gives, made from the engine's applied change.
extension CommandResult.Reply {
    /// `{dataSource, version, unchanged?, …}` after `outcome` (`more` writes the rest).
    static func dataSource(_ name: String, after outcome: ChangeOutcome, _ more: @escaping (inout JSONWriter) -> Void = { _ in }) -> Self {
        let (version, unchanged) = (outcome.version ?? 0, outcome.unchanged)
        return .members { writer in
            writer.key("dataSource")
            writer.string(name)
            writer.key("version")
            writer.int(version)
            if unchanged {
                writer.key("unchanged")
                writer.bool(true)
            }
            more(&writer)
        }
    }
}

extension ServerState {
    /// The limits live changes are checked against.
    var changeLimits: ChangeLimits {
        var limits = ChangeLimits(
            maximumDataSources: configuration.maximumDataSources, maximumItemsPerDataSource: configuration.maximumItemsPerDataSource,
            maximumIdentifierBytes: configuration.maximumIdentifierBytes, maximumRegistrations: configuration.maximumRegistrations)
        limits.quota = configuration.quota
        return limits
    }

    /// The one commit path for every mutation: validate and apply the change (all or nothing), then
    /// prepare its publication: the new version's event for the attached views (`changes`, or
    /// `layoutChanged`), cells to update, views to tell of a drop, pools to drain.
    ///
    /// Returns the command's result: `result` makes it (its reply) from the engine's applied change, the
    /// commit adds the publication, and with a store the result waits until the change is durable (or
    /// becomes the error that undid it).
    ///
    /// The change is made as the connection's user: refused with `permission-denied` when the policy
    /// does not allow it, and what it creates is owned by that user.
    ///
    /// A `followed` change is one another instance committed to the shared store (`StoreFollower`): it
    /// was checked and stored there, so it is applied without limits or a policy and not stored again;
    /// `storedEvent` is the event line the committing instance stored with it, sent as it is.
    func commit(
        _ change: StateChange, connection: (any ServedConnection)?, allocator: ByteBufferAllocator = ByteBufferAllocator(), followed: Bool = false,
        storedEvent: [UInt8]? = nil, known: KnownChanges? = nil, rehearsal: Rehearsal? = nil, animatingDifferences: Bool = true,
        result: (AppliedChange<DataSourceViews>) -> CommandResult = { _ in CommandResult { _ in } }
    ) throws(WireError) -> CommandResult {
        let change = followed ? change : try authorized(change, connection: connection)
        let recordingUndo = storage.pipeline != nil && !followed
        var applied = try engine.commit(
            change, limits: followed ? .none : changeLimits, recordingUndo: recordingUndo, storedEvent: storedEvent, known: known,
            rehearsal: rehearsal, animatingDifferences: animatingDifferences)
        // The replaced snapshot is freed off the loop (nothing else may keep it: the outcome lets it go).
        let retired = applied.outcome.retired.map(Releasing.init)
        applied.outcome.retired = nil
        if !followed, let follower = storage.follower { follower.touched(change.dataSourceName) }
        // Stored with what undoes it; a change that changed nothing answers once the changes before it are durable.
        // The change is numbered: its reply is held until its group is durable (`DurableReplies`); with
        // other instances, the router may run it again after a conflict (`AwaitedDurability.rerun`).
        let durability = followed ? .now : storage.pipeline?.add(applied, of: change, numbered: true) ?? .now
        var published = result(applied)
        if !applied.outcome.unchanged {  // else nothing was stored and nothing is sent
            // What publishing takes goes first; the command's own actions (rare) after it.
            var commandActions: [() -> Void] = []
            if !published.afterReply.isEmpty { swap(&commandActions, &published.afterReply) }
            preparePublication(
                of: change, applied, retired: retired, storedEvent: storedEvent, animatingDifferences: animatingDifferences, allocator: allocator,
                into: &published)
            if !commandActions.isEmpty { published.afterReply += commandActions }
        }
        switch durability {
        case .now:
            return published
        case .numbered(let number):
            published.awaited = AwaitedDurability(number: number)
            return published
        case .deferred(let durable):
            // Replied and published once the change is durable, or replied with the error that undid it.
            // (Captured by value: a captured `var` would be boxed on the heap for every commit.)
            return .later(durable.map { [published] error in error.map { CommandResult(reply: .failure($0)) } ?? published }, awaitsStorage: true)
        }
    }

    /// Sets what publishing `applied` takes once the command's reply is written: the new version's event
    /// for the attached views (`changes`, or `layoutChanged`), cells to update, views to tell of a drop,
    /// pools to drain.
    private func preparePublication(
        of change: StateChange, _ applied: AppliedChange<DataSourceViews>, retired: Releasing<Snapshot>?, storedEvent: [UInt8]?,
        animatingDifferences: Bool, allocator: ByteBufferAllocator, into published: inout CommandResult
    ) {
        let dataSource = applied.dataSource
        switch change {
        case .createDataSource:
            break
        case .register(let registration):
            guard applied.outcome.createdRegistration else { break }
            published.afterReply.append { [self] in tellViews(registration: registration.key, change: .created) }
        case .replaceRegistration(let registration):
            if applied.outcome.createdRegistration {
                published.afterReply.append { [self] in tellViews(registration: registration.key, change: .created) }
            } else if applied.outcome.replacedRegistration {
                // Cells configured by the old definition go (pooled ones would come back configured the old
                // way); the views dequeue theirs again, configured the new way.
                published.afterReply.append { [self] in
                    for dataSource in dataSources.values {
                        for view in dataSource.attachedViews { view.cells.drain(registration: registration.key) }
                    }
                    tellViews(registration: registration.key, change: .replaced)
                }
            }
        case .dropDataSource:
            guard let dropped = dataSource else { break }
            let views = dropped.attachedViews
            published.afterReply.append { [self] in
                engine.retire(dropped)
                for view in views { view.connection.viewDropped(view) }
            }
        case .dataSource(_, _, _, let operation):
            guard let dataSource else { break }
            // One buffer for every view (`changes` or `layoutChanged`).
            if let event = applied.event, !dataSource.views.isEmpty {
                var buffer = allocator.buffer(capacity: event.count + 1)
                buffer.writeBytes(event)
                buffer.writeInteger(UInt8(ascii: "\n"))
                published.broadcast = Broadcast(dataSource: dataSource, event: buffer)
            }
            // Views with an expansion of their own: their changes, made now (while the state is this
            // version's), published with the version.
            let viewChanges = changesOfViewsWithOwnExpansion(
                in: dataSource, after: operation, outcome: applied.outcome, animatingDifferences: animatingDifferences, storedEvent: storedEvent,
                published: &published, allocator: allocator)
            if case .setLayout = operation {
                // Views keep their cells; they draw them in the new layout.
            } else if ViewPublisher.touchesCells(applied.outcome.changes, reloadData: applied.outcome.reloadData)
                || viewChanges.values.contains(where: { ViewPublisher.touchesCells($0, reloadData: applied.outcome.reloadData) })
            {
                // (Inserts and moves alone leave every cell as it is: nothing to do after the reply.)
                let outcome = applied.outcome
                published.afterReply.append { [self] in
                    ViewPublisher.updateDisplayedCells(
                        of: dataSource, after: outcome.changes, reloadData: outcome.reloadData, viewChanges: viewChanges, sources: cellSources)
                }
            }
            if let retired {
                published.afterReply.append { [self] in releaseOffLoop(retired) }
            }
        case .unregister(let name, let owner):
            published.afterReply.append { [self] in
                for dataSource in dataSources.values {
                    for view in dataSource.attachedViews { view.cells.drain(registration: Registration.key(owner: owner, name: name)) }
                }
                tellViews(registration: Registration.key(owner: owner, name: name), change: .deleted)
            }
        }
    }

    /// Brings the views of `dataSource` that show an expansion of their own to the version just committed:
    /// each gets its own `changes` line in the broadcast (unless the data source was reloaded whole: then
    /// the shared line, and they read what they show anew). Returns their changes, by view.
    private func changesOfViewsWithOwnExpansion(
        in dataSource: DataSource, after operation: DataSourceOperation, outcome: ChangeOutcome, animatingDifferences: Bool,
        storedEvent: [UInt8]?, published: inout CommandResult, allocator: ByteBufferAllocator
    ) -> [ObjectIdentifier: StagedChanges] {
        switch operation {
        case .setLayout, .setCellProvider: return [:]  // what the views show stays
        default: break
        }
        let views = dataSource.viewsWithOwnExpansion
        guard !views.isEmpty else { return [:] }
        // A change another instance committed carries its flag in the event line it stored.
        var animatingDifferences = animatingDifferences
        if let storedEvent, let event = try? JSONParser.parse(storedEvent), event["changes"]?["animatingDifferences"] == .bool(false) {
            animatingDifferences = false
        }
        var byView: [ObjectIdentifier: StagedChanges] = [:]
        // Once published, what the views set that no longer applies is forgotten (not before: a change
        // undone before it is published leaves them as they were).
        published.afterReply.append {
            for view in views { dataSource.settleExpansion(of: view) }
        }
        for view in views {
            guard !outcome.reloadData else {
                // Reloaded whole: the views read what they show anew (attach with expansion).
                dataSource.reprojectExpansion(of: view)
                continue
            }
            let changes = dataSource.changeExpansion(of: view, sharedChanges: outcome.changes)
            byView[ObjectIdentifier(view)] = changes
            guard published.broadcast != nil else { continue }
            var json = JSONWriter(capacity: 192)
            json.changes(changes, reloadData: false, animatingDifferences: animatingDifferences)
            let event = ViewEvent.changes(dataSource: dataSource.name, version: dataSource.version, changesJSON: json.bytes, view: view.name)
            var buffer = allocator.buffer(capacity: event.count + 1)
            buffer.writeBytes(event)
            buffer.writeInteger(UInt8(ascii: "\n"))
            published.broadcast!.ownEvents[ObjectIdentifier(view)] = buffer
        }
        return byView
    }

    /// Refuses a change the store cannot take now or the connection's user may not make; else the
    /// change with that user as the owner of what it creates.
    private func authorized(_ change: StateChange, connection: (any ServedConnection)?) throws(WireError) -> StateChange {
        if let reason = storage.pipeline?.unavailableReason { throw WireError(.storageFailed, reason) }
        let actor = identity(of: connection)
        try authorize(change, by: actor)
        return owned(change, by: actor.uid)
    }
}

/// Random identifiers for data source incarnations.
enum Incarnation {
    /// 16 hexadecimal digits from the system's random generator.
    static func make() -> String {
        let value = UInt64.random(in: 0...UInt64.max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension DataSourceCreation {
    /// A new incarnation; `commit` makes the connection's user its owner.
    static var fresh: DataSourceCreation { DataSourceCreation(incarnation: Incarnation.make(), owner: 0) }
}
