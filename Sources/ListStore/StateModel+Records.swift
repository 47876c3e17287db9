import DiffableCore
import ListWire

extension StateModel {
    /// The store records of a change `apply` just accepted with `outcome`: what makes the store hold
    /// the same state as the model. Call it right after `apply`, before the next change.
    public func records(of change: StateChange, outcome: ChangeOutcome) -> [StoreRecord] {
        switch change {
        case .createDataSource(let name, let incarnation, let content):
            return [.createDataSource(name: name, incarnation: incarnation, version: content.version, content: StateCoding.encode(content))]
        case .dropDataSource(let name):
            return [.dropDataSource(name: name)]
        case .dataSource(let name, _, let incarnation, let operation):
            var records: [StoreRecord] = []
            if outcome.createdDataSource, let incarnation {
                records.append(.createDataSource(name: name, incarnation: incarnation, version: 0, content: StateCoding.encode(DataSourceContent())))
            }
            let version = outcome.version ?? dataSources[name]?.version ?? 0
            records.append(
                .change(dataSource: name, version: version, operation: StateCoding.encode(operation), changes: Self.retainedChanges(outcome)))
            return records
        case .register(let registration):
            return outcome.createdRegistration ? [.register(name: registration.name, registration: StateCoding.encode(registration))] : []
        case .unregister(let name):
            return [.unregister(name: name)]
        }
    }

    /// The largest staged changes kept in the log for resuming views; larger ones make a view that
    /// resumes across them reload the snapshot instead.
    public static let maximumRetainedChangesBytes = 1 << 20

    /// The `changes` JSON a resuming view is sent for this version, when small enough to keep.
    static func retainedChanges(_ outcome: ChangeOutcome) -> [UInt8]? {
        if outcome.reloadData { return nil }
        let entries = outcome.changes.stages.reduce(0) { count, stage in
            count + stage.sectionDeletes.count + stage.sectionInserts.count + stage.sectionMoves.count + stage.sectionReloads.count
                + stage.itemDeletes.count + stage.itemInserts.count + stage.itemMoves.count + stage.itemReloads.count
                + stage.itemReconfigures.count
        }
        if entries > 10_000 { return nil }  // surely past the limit: not worth encoding
        var writer = JSONWriter(capacity: 128)
        writer.changes(outcome.changes)
        return writer.bytes.count <= maximumRetainedChangesBytes ? writer.bytes : nil
    }
}
