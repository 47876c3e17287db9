import ListEngine
import ListStore
import DiffableCore

extension StateModel {
    /// A deterministic encoding of the whole state that lasts: every data source (sorted by name: its
    /// name, incarnation and checkpoint content) and every registration in creation order. Two states
    /// with the same encoding are the same state (compare what is served with what a store holds).
    public var stateEncoding: [UInt8] {
        var bytes: [UInt8] = []
        for name in dataSources.keys.sorted() {
            let dataSource = dataSources[name]!
            bytes += JSONValue.array([.string(name), .string(dataSource.incarnation)]).jsonBytes
            bytes += StateCoding.encode(dataSource.content)
            bytes.append(0x0A)
        }
        for key in registrationOrder {
            if let registration = registrations[key] { bytes += StateCoding.encode(registration) }
            bytes.append(0x0A)
        }
        return bytes
    }
}

extension FaultInjectingStore {
    /// The state the store holds, in `StateModel.stateEncoding`'s form (read past any fault).
    public func storedEncoding() throws -> [UInt8] {
        try StateModel(loading: inner.load()).stateEncoding
    }
}
