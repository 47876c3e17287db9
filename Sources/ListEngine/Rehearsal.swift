import CellCore
import DiffableCore
import ListStore
import ListWire

/// A data-source change worked out on a copy of the data source, on any thread (a server does it off
/// its event loop for changes whose cost grows with a large data source: an outline of 400k items
/// expanded or collapsed), then installed in O(1) by `StateModel.install(_:limits:recordingUndo:)`
/// while the data source is still at the version it was worked out against. Installed once at most
/// (the data source takes its result over).
public struct Rehearsal: @unchecked Sendable {
    /// The change rehearsed.
    public let change: StateChange
    /// What applying it gave (changes, warnings, the new version).
    public let outcome: ChangeOutcome
    let baseVersion: Int
    let baseIncarnation: String
    /// The data source after the change (a model of its own, handed over once).
    let result: DataSourceModel
}

/// A data source's state to rehearse a change against, taken on the model's thread (O(1): values shared
/// until changed).
public struct RehearsalBase: Sendable {
    let name: String
    let incarnation: String
    let content: DataSourceContent
}

extension StateModel {
    /// The data source `name` as it is now, to rehearse a change against; `nil` when it does not exist.
    public func rehearsalBase(of name: String) -> RehearsalBase? {
        dataSources[name].map { RehearsalBase(name: name, incarnation: $0.incarnation, content: $0.content) }
    }

    /// Applies `change` (a data-source change of `base`'s data source) to a copy of it, with `limits`
    /// (the per-user quotas are checked again when installing, against every data source the owner has).
    /// Pure: runs on any thread.
    public static func rehearse(_ change: StateChange, on base: RehearsalBase, limits: ChangeLimits) throws(WireError) -> Rehearsal {
        let scratch = StateModel()
        scratch.dataSources[base.name] = DataSourceModel(name: base.name, incarnation: base.incarnation, content: base.content)
        var local = limits
        local.quota = .unlimited
        let outcome = try scratch.apply(change, limits: local)
        guard let result = scratch.dataSources[base.name] else { throw WireError(.internal, "A rehearsed change removed its data source.") }
        // What `storedItemCount` and `storedBytes` cost is paid here, off the caller's thread.
        _ = result.storedBytes
        return Rehearsal(change: change, outcome: outcome, baseVersion: base.content.version, baseIncarnation: base.incarnation, result: result)
    }

    /// Installs a rehearsed change: the data source takes the rehearsal's result in O(number of outlines),
    /// after the per-user quotas are checked. `nil` (nothing changed) when the data source is no longer
    /// at the version the change was rehearsed against: apply the change instead.
    @usableFromInline
    func install(_ rehearsal: Rehearsal, limits: ChangeLimits, recordingUndo: Bool) throws(WireError) -> ChangeOutcome? {
        guard case .dataSource(let name, _, _, _) = rehearsal.change, let dataSource = dataSources[name],
            dataSource.version == rehearsal.baseVersion, dataSource.incarnation == rehearsal.baseIncarnation
        else { return nil }
        if rehearsal.outcome.unchanged { return rehearsal.outcome }  // nothing to install: the version stays
        let result = rehearsal.result
        let itemsBefore = dataSource.storedItemCount
        let bytesBefore = dataSource.storedBytes
        let itemsAfter = result.storedItemCount
        try checkQuota(addingItems: itemsAfter - itemsBefore, owner: dataSource.owner, limits)
        try checkBytes(replacing: bytesBefore, with: result.storedBytes, owner: dataSource.owner, limits)
        var outcome = rehearsal.outcome
        if recordingUndo { outcome.undo = ChangeUndo(step: .changed(dataSource, before: dataSource.before(snapshot: .replaced(dataSource.snapshot)))) }
        dataSource.adopt(result)
        adjustUsage(of: dataSource.owner, items: itemsAfter - itemsBefore)
        adjustBytes(of: dataSource.owner, by: dataSource.storedBytes - bytesBefore)
        return outcome
    }
}
