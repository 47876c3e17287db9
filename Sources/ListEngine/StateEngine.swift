import CellCore
import DiffableCore
import ListLayout
import ListStore
import ListWire

/// The one writer of listd's state: the model (data sources and registrations) and the data sources
/// as served, with the events of their recent versions. Every write goes through one of its methods:
/// committing a local change, applying a followed one, loading the store at start-up, serving a data
/// source as read from the store, dropping one another instance dropped, and undoing a failed write.
/// Nothing outside this module can write `StateModel`, a `DataSourceModel` or a `ServedDataSource`.
///
/// Confined to one thread (the server's event loop); no I/O. What a write means for views (sending
/// its event, dropping views, draining pools) is returned for the caller to carry out.
public final class StateEngine<Attachment: DataSourceAttachment> {
    /// A data source as this engine serves it.
    public typealias Served = ServedDataSource<Attachment>

    /// The state, for reading (its mutators are internal to this module).
    public let model = StateModel()
    /// The data sources as served, by name.
    public private(set) var dataSources: [String: Served] = [:]
    /// How many versions, and bytes of events, each data source keeps for views that resume; applies to
    /// data sources served from now on.
    public var retention: (versions: Int, bytes: Int)
    private let attach: (DataSourceModel) -> Attachment

    /// An empty engine. `attach` makes what the server attaches to a data source it starts serving (its
    /// views), given the data source's model.
    public init(retention: (versions: Int, bytes: Int), attach: @escaping (DataSourceModel) -> Attachment) {
        self.retention = retention
        self.attach = attach
    }

    /// Applies a change (all or nothing) and makes its event: `changes` (or `layoutChanged`) of the new
    /// version, retained for views that resume.
    ///
    /// - `recordingUndo`: keep what undoes the change (`ChangeOutcome.undo`), while it is not yet durable.
    /// - `storedEvent`: the event line another instance stored with a followed change, used as it is.
    /// - `known`: the change's diff, worked out and encoded before (off the loop).
    /// - `rehearsal`: the change worked out on a copy; installed in O(1) when the data source is still
    ///   at the version it was worked out against.
    /// - `animatingDifferences`: false marks the changes (`"animatingDifferences": false`) so that views
    ///   apply them without animation; it travels in the event line, retained and stored with the version.
    ///   (`known` changes carry it in their encoding.)
    ///
    /// Inlinable, so that the server's calls are specialized for its attachment: the command path runs
    /// no generic code of the engine (no metadata look-ups, no value-witness copies).
    @inlinable
    public func commit(
        _ change: StateChange, limits: ChangeLimits, recordingUndo: Bool, storedEvent: [UInt8]? = nil, known: KnownChanges? = nil,
        rehearsal: Rehearsal? = nil, animatingDifferences: Bool = true
    ) throws(WireError) -> AppliedChange<Attachment> {
        let previousVersion = change.dataSourceName.flatMap { model.dataSources[$0]?.version }
        var outcome: ChangeOutcome
        if let rehearsal, let installed = try model.install(rehearsal, limits: limits, recordingUndo: recordingUndo) {
            outcome = installed  // worked out off the loop against this very version
        } else {
            outcome = try model.apply(change, limits: limits, recordingUndo: recordingUndo, knownChanges: known?.changes)
        }
        var applied = AppliedChange<Attachment>(outcome: outcome, previousVersion: previousVersion)
        if outcome.unchanged, let name = change.dataSourceName {
            applied.dataSource = dataSources[name]  // no version, no event: nothing to send or keep
            return applied
        }
        switch change {
        case .createDataSource(let name, _, _):
            applied.dataSource = serve(name)
        case .dropDataSource(let name):
            applied.dataSource = dataSources[name]  // still served until `retire(_:)`
        case .dataSource(let name, _, _, let operation):
            let dataSource = outcome.createdDataSource ? serve(name) : dataSources[name]!
            applied.dataSource = dataSource
            // The event line: sent to the views, retained for views that resume, stored.
            if let storedEvent {
                applied.event = storedEvent  // the committing instance's line, the same bytes this one would make
            } else if case .setLayout = operation {
                applied.event = ViewEvent.layoutChanged(dataSource: name, version: dataSource.version, layout: dataSource.layout.json)
            } else if let known, !outcome.warnings.contains(where: { $0.code == .reconfigureBecameReload }) {
                // (Reloads that replaced reconfigures are not in the encoding made before.)
                applied.changesJSON = known.json[...]
                if dataSource.hasViews || !RetainedEvents.tooLarge(outcome) { applied.event = dataSource.changesEvent(changesJSON: known.json) }
            } else if dataSource.hasViews || !RetainedEvents.tooLarge(outcome) {
                // The event line, its changes written in place (one buffer; the reply reuses the slice).
                let (event, changes) = ViewEvent.changes(
                    dataSource: name, version: dataSource.version, outcome.changes, reloadData: outcome.reloadData,
                    animatingDifferences: animatingDifferences)
                applied.event = event
                applied.changesJSON = event[changes]
            }
            let retainable = !outcome.reloadData && (applied.event?.count ?? .max) <= RetainedEvents.maximumEventBytes
            applied.retainedEvent = retainable ? applied.event : nil
            dataSource.retain(dataSource.version, applied.retainedEvent)
            dataSource.trimChangeLog(toQuota: limits.quota.maximumBytes)
        case .register, .replaceRegistration, .unregister:
            break
        }
        return applied
    }

    /// Stops serving a data source a committed `dropDataSource` removed from the model (once its reply
    /// is written), unless it was served again since.
    public func retire(_ dropped: Served) {
        if dataSources[dropped.name] === dropped, model.dataSources[dropped.name] == nil {
            dataSources[dropped.name] = nil
            dropped.releaseChangeLog()
        }
    }

    /// After a failed write: undoes the changes that were not stored, newest first (`undos` oldest
    /// first), and serves the touched data sources as they are now. Returns the served data sources
    /// that are no longer served (the undone changes had created them): their views are to be told.
    public func undo(_ undos: [ChangeUndo], dataSources touched: Set<String>) -> [Served] {
        model.undo(undos)
        var gone: [Served] = []
        for name in touched {
            if let restored = model.dataSources[name] {
                if let served = dataSources[name] {
                    if served.incarnation != restored.incarnation { served.retained.removeAll() }
                    served.model = restored
                    served.retained.removeVersions(after: restored.version)
                } else {
                    dataSources[name] = served(restored)
                }
            } else if let served = dataSources.removeValue(forKey: name) {
                served.releaseChangeLog()
                gone.append(served)
            }
        }
        return gone
    }

    /// Loads what a store holds into the (empty) state at start-up and serves it, with the events the
    /// store kept for views that resume.
    public func load(_ loaded: StoredState) throws(StorageError) {
        try model.load(loaded)
        for stored in loaded.dataSources {
            let dataSource = served(model.dataSources[stored.name]!)
            for (version, event) in stored.retainedChanges { dataSource.retained.append(version, event) }
            dataSources[stored.name] = dataSource
        }
    }

    /// What serving a data source as read from the store did.
    public enum StoredServing {
        /// The version served here was as new: nothing changed.
        case unchanged
        /// The same incarnation at a newer version: its views reload everything.
        case reloaded(Served)
        /// Another incarnation (or one not served before): the previous one's views are told it is gone.
        case replaced(previous: Served?, current: Served)
    }

    /// Serves a data source exactly as another instance stored it, read whole.
    public func serve(stored: StoredDataSource) throws(StorageError) -> StoredServing {
        let name = stored.name
        let served = dataSources[name]
        let storedVersion = stored.tail.last?.version ?? stored.checkpoint.version
        if let served, served.incarnation == stored.incarnation, served.version >= storedVersion { return .unchanged }
        try model.restore(stored)
        let restored = model.dataSources[name]!
        if let served, served.incarnation == restored.incarnation {
            served.model = restored
            served.retained.removeAll()
            return .reloaded(served)
        }
        served?.releaseChangeLog()
        let dataSource = self.served(restored)
        for (version, event) in stored.retainedChanges { dataSource.retained.append(version, event) }
        dataSources[name] = dataSource
        return .replaced(previous: served, current: dataSource)
    }

    /// Forgets a data source another instance dropped; returns the one that was served (its views are
    /// to be told).
    public func forget(dataSource name: String) -> Served? {
        guard let dropped = dataSources.removeValue(forKey: name) else { return nil }
        dropped.releaseChangeLog()
        model.forget(dataSource: name)
        return dropped
    }

    /// Makes the registrations the stored ones (in their order). Returns the keys (`Registration.key`)
    /// of the registrations deleted, defined otherwise or new (views whose providers name them dequeue
    /// those cells again), or `nil` when nothing changed.
    public func restoreRegistrations(_ stored: [Registration]) -> [String]? {
        let current = model.registrations
        let kept = Dictionary(stored.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        let changed = current.values.filter { registration in kept[registration.key].map { $0.definition != registration.definition } ?? true }
        let created = stored.filter { current[$0.key] == nil }
        guard !changed.isEmpty || !created.isEmpty || stored.map(\.key) != model.registrationOrder else { return nil }
        model.restoreRegistrations(stored)
        return changed.map(\.key) + created.map(\.key)
    }

    /// Starts serving a data source the model just created.
    @usableFromInline
    func serve(_ name: String) -> Served {
        let dataSource = served(model.dataSources[name]!)
        dataSources[name] = dataSource
        return dataSource
    }

    /// The served form of `model`, its retained events charged to its owner.
    private func served(_ model: DataSourceModel) -> Served {
        let dataSource = Served(model: model, retained: emptyRetained, attachment: attach(model))
        dataSource.accounts = self.model.accounts
        return dataSource
    }

    private var emptyRetained: RetainedEvents { RetainedEvents(maximumVersions: retention.versions, maximumBytes: retention.bytes) }
}

extension StateEngine where Attachment == NoViews {
    /// An engine that serves no views (tools, tests, benchmarks).
    public convenience init(retention: (versions: Int, bytes: Int)) {
        self.init(retention: retention) { _ in NoViews() }
    }
}

/// What `StateEngine.commit` did: the outcome and the event made for it.
public struct AppliedChange<Attachment: DataSourceAttachment> {
    @inlinable
    init(outcome: ChangeOutcome, previousVersion: Int?) {
        self.outcome = outcome
        self.previousVersion = previousVersion
    }

    public var outcome: ChangeOutcome
    /// The data source's version before the change (`nil` for registrations, or a new data source).
    public var previousVersion: Int?
    /// The served data source the change touched (created, changed, or dropped and not yet retired).
    public var dataSource: ServedDataSource<Attachment>?
    /// The event line for the data source's views (`changes` or `layoutChanged`), when one was made.
    public var event: [UInt8]?
    /// The event as retained and stored: `nil` when it is not kept (a reload, or too large).
    public var retainedEvent: [UInt8]?
    /// The encoded `changes` object when the event was made: the reply reuses it.
    public var changesJSON: ArraySlice<UInt8>?
}

/// A diff computed before the commit, with its encoding (the reply and the event use it as it is).
public struct KnownChanges: Sendable {
    public let changes: StagedChanges
    public let json: [UInt8]

    public init(changes: StagedChanges, json: [UInt8]) {
        self.changes = changes
        self.json = json
    }
}
