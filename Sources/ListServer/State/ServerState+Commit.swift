import DiffableCore
import ListStore
import ListWire
import NIOCore

/// A committed change: its outcome, and what publishing it to views takes once the reply is written.
struct Committed {
    var outcome: ChangeOutcome
    /// The served data source the change touched (created, changed or dropped).
    var dataSource: DataSource?
    var broadcast: (DataSource, ByteBuffer)?
    var afterReply: [() -> Void] = []
    /// With a store: resolves once the change is durable (`nil`), or with the error that undid it.
    var durable: Deferred<WireError?>?
    /// The encoded `changes` object when the change's event was made: the reply reuses it.
    var changesJSON: [UInt8]?

    /// The execution replying with `result`, then publishing; with a store, once the change is durable.
    func execution(_ result: @escaping (inout JSONWriter) -> Void) -> Execution {
        let execution = Execution(result: result, broadcast: broadcast, afterReply: afterReply)
        guard let durable else { return execution }
        var waiting = Execution { _ in }
        waiting.awaitsStorage = true
        waiting.deferred = durable.map { error in
            guard let error else { return execution }
            var failed = Execution { _ in }
            failed.failure = error
            return failed
        }
        return waiting
    }

    /// The execution replying `{dataSource, version, …}` (`more` writes the rest), then publishing.
    func execution(dataSource name: String, _ more: @escaping (inout JSONWriter) -> Void = { _ in }) -> Execution {
        let version = outcome.version ?? 0
        return execution { writer in
            writer.key("dataSource")
            writer.string(name)
            writer.key("version")
            writer.int(version)
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
    /// The change is made as the connection's user: refused with `permission-denied` when the policy
    /// does not allow it, and what it creates is owned by that user.
    ///
    /// A `followed` change is one another instance committed to the shared store (`StoreFollower`): it
    /// was checked and stored there, so it is applied without limits or a policy and not stored again;
    /// `storedEvent` is the event line the committing instance stored with it, sent as it is.
    func commit(
        _ change: StateChange, connection: ConnectionHandler?, allocator: ByteBufferAllocator = ByteBufferAllocator(), followed: Bool = false,
        storedEvent: [UInt8]? = nil, known: KnownChanges? = nil, rehearsal: Rehearsal? = nil
    ) throws(WireError) -> Committed {
        let change = followed ? change : try authorized(change, connection: connection)
        let previousVersion = change.dataSourceName.flatMap { model.dataSources[$0]?.version }
        let recordingUndo = pipeline != nil && !followed
        var outcome: ChangeOutcome
        if let rehearsal, let installed = try model.install(rehearsal, limits: changeLimits, recordingUndo: recordingUndo) {
            outcome = installed  // worked out off the loop against this very version
        } else {
            outcome = try model.apply(change, limits: followed ? .none : changeLimits, recordingUndo: recordingUndo, knownChanges: known?.changes)
        }
        // The replaced snapshot is freed off the loop (nothing else may keep it: the outcome lets it go).
        let retired = outcome.retired.map(Releasing.init)
        outcome.retired = nil
        if !followed, let follower { follower.touched(change.dataSourceName) }
        var committed = Committed(outcome: outcome)
        // A data-source change's event line: sent to the views, retained for views that resume, stored.
        var event: [UInt8]?
        var retainedEvent: [UInt8]?
        if case .dataSource(let name, _, _, let operation) = change {
            let dataSource = outcome.createdDataSource ? serve(name) : dataSources[name]!
            if let storedEvent {
                event = storedEvent  // the committing instance's line, the same bytes this one would make
            } else if case .setLayout = operation {
                event = Self.layoutChangedEvent(dataSource)
            } else if let known {
                committed.changesJSON = known.json
                if !(dataSource.views.isEmpty && RetainedEvents.tooLarge(outcome)) { event = dataSource.changesEvent(changesJSON: known.json) }
            } else if !(dataSource.views.isEmpty && RetainedEvents.tooLarge(outcome)) {
                var changes = JSONWriter(capacity: 192)
                changes.changes(outcome.changes, reloadData: outcome.reloadData)
                committed.changesJSON = changes.bytes
                event = dataSource.changesEvent(changesJSON: changes.bytes)
            }
            retainedEvent = outcome.reloadData || (event?.count ?? .max) > RetainedEvents.maximumEventBytes ? nil : event
            dataSource.retained.append(dataSource.version, retainedEvent)
        }
        if let pipeline, !followed {
            let records = model.records(of: change, outcome: outcome, event: retainedEvent)
            if !records.isEmpty {
                committed.durable = pipeline.add(
                    records, dataSources: change.dataSourceName.map { [$0] } ?? [], previousVersion: previousVersion,
                    registrations: change.dataSourceName == nil, undo: outcome.undo)
            }
        }
        switch change {
        case .createDataSource(let name, _, _):
            committed.dataSource = serve(name)
        case .dropDataSource(let name):
            guard let dropped = dataSources[name] else { break }
            committed.dataSource = dropped
            let views = dropped.attachedViews
            committed.afterReply.append { [self] in
                if dataSources[name] === dropped { dataSources[name] = nil }
                for view in views { view.connection.viewDropped(view) }
            }
        case .dataSource(let name, _, _, let operation):
            let dataSource = dataSources[name]!
            committed.dataSource = dataSource
            // One buffer for every view (`changes` or `layoutChanged`).
            if let event, !dataSource.views.isEmpty {
                var buffer = allocator.buffer(capacity: event.count + 1)
                buffer.writeBytes(event)
                buffer.writeInteger(UInt8(ascii: "\n"))
                committed.broadcast = (dataSource, buffer)
            }
            if case .setLayout = operation {
                // Views keep their cells; they draw them in the new layout.
            } else {
                committed.afterReply.append { [self] in
                    CommandRouter.updateDisplayedCells(of: dataSource, after: outcome.changes, reloadData: outcome.reloadData, state: self)
                }
            }
            if let retired {
                committed.afterReply.append { [self] in releaseOffLoop(retired) }
            }
        case .register:
            break
        case .unregister(let name):
            committed.afterReply.append { [self] in
                for dataSource in dataSources.values {
                    for view in dataSource.attachedViews { view.cells.drain(registration: name) }
                }
            }
        }
        return committed
    }

    /// Refuses a change the store cannot take now or the connection's user may not make; else the
    /// change with that user as the owner of what it creates.
    private func authorized(_ change: StateChange, connection: ConnectionHandler?) throws(WireError) -> StateChange {
        if let reason = pipeline?.unavailableReason { throw WireError(.storageFailed, reason) }
        let actor = identity(of: connection)
        try authorize(change, by: actor)
        return owned(change, by: actor.uid)
    }

    /// After a failed write: undoes the changes that were not stored, newest first (`undos` oldest
    /// first), so memory is as it was before the failed group, and serves the touched data sources as
    /// they are now. Their views were sent none of those changes (a change is published once durable),
    /// so they need no event; a data source the undone changes had created is forgotten, one they had
    /// dropped is served again.
    package func undo(_ undos: [ChangeUndo], dataSources touched: Set<String>, registrations: Bool) {
        model.undo(undos)
        for name in touched {
            if let restored = model.dataSources[name] {
                if let served = dataSources[name] {
                    if served.incarnation != restored.incarnation { served.retained.removeAll() }
                    served.model = restored
                    served.retained.removeVersions(after: restored.version)
                } else {
                    dataSources[name] = makeDataSource(restored)
                }
            } else if let served = dataSources.removeValue(forKey: name) {
                for view in served.attachedViews { view.connection.viewDropped(view) }
            }
        }
    }

    /// Loads what a store holds into the (empty) state at start-up and serves it, with the events
    /// the store kept for views that resume.
    package func serve(_ loaded: StoredState) throws(StorageError) {
        try model.load(loaded)
        for stored in loaded.dataSources {
            let dataSource = makeDataSource(model.dataSources[stored.name]!)
            for (version, event) in stored.retainedChanges { dataSource.retained.append(version, event) }
            dataSources[stored.name] = dataSource
        }
    }

    /// Starts serving a data source the model just created.
    private func serve(_ name: String) -> DataSource {
        let dataSource = makeDataSource(model.dataSources[name]!)
        dataSources[name] = dataSource
        return dataSource
    }

    /// Serves a data source of the model, with empty retained events.
    func makeDataSource(_ model: DataSourceModel) -> DataSource {
        DataSource(
            model: model,
            retention: RetainedEvents(maximumVersions: configuration.changeLogVersions, maximumBytes: configuration.changeLogBytes))
    }

    /// The `layoutChanged` event of the data source's current version (see `ViewEvent.layoutChanged`).
    private static func layoutChangedEvent(_ dataSource: DataSource) -> [UInt8] {
        ViewEvent.layoutChanged(dataSource: dataSource.name, version: dataSource.version, layout: dataSource.layout.json)
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
