import CellCore
import DiffableCore
import ListStore
import ListWire

extension StateModel {
    /// A model of what a store holds, apart from any engine's (to compare a store with a served state).
    public convenience init(loading stored: StoredState) throws(StorageError) {
        self.init()
        try load(stored)
    }

    /// Loads a store's state into an empty model: the registrations, then every data source's
    /// checkpoint with its log tail replayed (through `apply`, without limits: what was accepted
    /// stays accepted).
    func load(_ stored: StoredState) throws(StorageError) {
        restoreRegistrationsKeyed(stored.registrations)
        defer { recountUsage() }
        for dataSource in stored.dataSources { try replay(dataSource) }
    }

    /// Makes a data source exactly what was stored: its checkpoint, then its log tail replayed.
    func restore(_ stored: StoredDataSource) throws(StorageError) {
        defer { recountUsage() }
        try replay(stored)
    }

    /// `restore` without recounting usage (the caller recounts once).
    private func replay(_ stored: StoredDataSource) throws(StorageError) {
        let model = DataSourceModel(name: stored.name, incarnation: stored.incarnation, content: stored.checkpoint)
        let previous = dataSources[stored.name]
        dataSources[stored.name] = model
        for entry in stored.tail {
            do {
                _ = try apply(.dataSource(name: stored.name, ifVersion: entry.version - 1, createAs: nil, entry.operation), limits: .none)
            } catch {
                dataSources[stored.name] = previous
                throw StorageError(.corrupt, "Data source \"\(stored.name)\": the logged change to version \(entry.version) does not replay: \(error.message)")
            }
        }
    }

    /// Forgets a data source the store does not have.
    func forget(dataSource name: String) {
        dataSources[name] = nil
        recountUsage()
    }

    /// Replaces every registration with the stored ones, in their order.
    func restoreRegistrations(_ stored: [Registration]) {
        restoreRegistrationsKeyed(stored)
        recountUsage()
    }

    /// Keeps `stored` by key (owner and name), in their order; a key stored twice keeps its last definition.
    private func restoreRegistrationsKeyed(_ stored: [Registration]) {
        registrations = Dictionary(stored.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        var seen = Set<String>()
        registrationOrder = stored.map(\.key).filter { seen.insert($0).inserted }
    }
}
