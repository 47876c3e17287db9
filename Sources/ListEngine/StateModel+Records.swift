import CellCore
import DiffableCore
import ListStore
import ListWire

extension StateModel {
    /// The store records of a change `apply` just accepted with `outcome`: what makes the store hold
    /// the same state as the model. Call it right after `apply`, before the next change. `event` is the
    /// line views were sent for a data-source change, kept for views that resume (`nil`: not kept).
    public func records(of change: StateChange, outcome: ChangeOutcome, event: [UInt8]?) -> [StoreRecord] {
        if outcome.unchanged { return [] }
        switch change {
        case .createDataSource(let name, let incarnation, let content):
            return [.createDataSource(name: name, incarnation: incarnation, version: content.version, content: StateCoding.encode(content))]
        case .dropDataSource(let name):
            return [.dropDataSource(name: name)]
        case .dataSource(let name, _, let creation, let operation):
            var records: [StoreRecord] = []
            if outcome.createdDataSource, let creation {
                records.append(
                    .createDataSource(
                        name: name, incarnation: creation.incarnation, version: 0, content: StateCoding.encode(DataSourceContent(owner: creation.owner))))
            }
            let version = outcome.version ?? dataSources[name]?.version ?? 0
            if case .replaceSnapshot = operation, let content = dataSources[name]?.content {
                // A whole snapshot: stored as the checkpoint it amounts to (one write of its size, where
                // an operation would cost that write, a checkpoint of it later and dropping it again).
                records.append(.change(dataSource: name, version: version, operation: StateCoding.noOperation, changes: event))
                records.append(.checkpoint(dataSource: name, version: version, content: StateCoding.encode(content)))
            } else {
                records.append(.change(dataSource: name, version: version, operation: StateCoding.encode(operation), changes: event))
            }
            return records
        case .register(let registration):
            return outcome.createdRegistration ? [.register(name: registration.key, registration: StateCoding.encode(registration))] : []
        case .replaceRegistration(let registration):
            // The stored definition replaces the old in place (the store's register record is an upsert).
            guard outcome.createdRegistration || outcome.replacedRegistration, let stored = registrations[registration.key] else { return [] }
            return [.register(name: registration.key, registration: StateCoding.encode(stored))]
        case .unregister(let name, let owner):
            return [.unregister(name: Registration.key(owner: owner, name: name))]
        }
    }
}
