/// A cheap summary of an `InProcessServer`'s state: per data source its incarnation, version, counts
/// and stored bytes, and the number of registrations. Two equal fingerprints are not proof of equal
/// states (compare `stateEncoding` for that), but taking one costs O(data sources), not O(items): a
/// fuzzer can take one after every request line.
public struct StateFingerprint: Equatable, Sendable {
    /// Every data source, sorted by name.
    public var dataSources: [DataSourceFingerprint]
    /// How many cell registrations there are.
    public var registrations: Int

    /// The data source named `name`, if there is one.
    public func dataSource(_ name: String) -> DataSourceFingerprint? { dataSources.first { $0.name == name } }
}

/// One data source's part of a `StateFingerprint`.
public struct DataSourceFingerprint: Equatable, Sendable {
    public var name: String
    public var incarnation: String
    public var version: Int
    public var sections: Int
    public var items: Int
    /// The snapshot's identifier and payload bytes (changes with any payload or identifier).
    public var storedBytes: Int
    /// How many sections hold an outline.
    public var outlines: Int
}

extension InProcessServer {
    /// The state's fingerprint now (see `StateFingerprint`).
    public var fingerprint: StateFingerprint {
        let served = state.engine.dataSources
        let dataSources = served.keys.sorted().map { name in
            let dataSource = served[name]!
            return DataSourceFingerprint(
                name: name, incarnation: dataSource.incarnation, version: dataSource.version, sections: dataSource.snapshot.numberOfSections,
                items: dataSource.snapshot.numberOfItems, storedBytes: dataSource.snapshot.storedBytes, outlines: dataSource.outlines.count)
        }
        return StateFingerprint(dataSources: dataSources, registrations: state.model.registrations.count)
    }
}

/// A fingerprint's content hashed: two numbers, no allocation (see `InProcessServer.digest(visiting:)`).
/// Equal states have equal digests; a change to any data source's incarnation, version, counts or
/// stored bytes, or to the number of registrations, changes it but for a hash collision.
public struct StateDigest: Equatable, Sendable {
    /// Over everything the fingerprint holds.
    public var value: Int
    /// The same without the incarnations (equal for two servers that made the same data sources).
    public var ignoringIncarnations: Int
}

extension InProcessServer {
    /// The state's digest now, in O(data sources) without allocating (what a fuzzer can take after
    /// every line); `visit` sees each data source's incarnation and version.
    public func digest(visiting visit: (_ incarnation: String, _ version: Int) -> Void = { _, _ in }) -> StateDigest {
        var digest = StateDigest(value: state.model.registrations.count, ignoringIncarnations: state.model.registrations.count)
        for (name, dataSource) in state.engine.dataSources {
            var hasher = Hasher()
            hasher.combine(name)
            hasher.combine(dataSource.version)
            hasher.combine(dataSource.snapshot.numberOfSections)
            hasher.combine(dataSource.snapshot.numberOfItems)
            hasher.combine(dataSource.snapshot.storedBytes)
            hasher.combine(dataSource.outlines.count)
            var withIncarnation = hasher
            withIncarnation.combine(dataSource.incarnation)
            // Summed: the dictionary's order does not matter.
            digest.ignoringIncarnations &+= hasher.finalize()
            digest.value &+= withIncarnation.finalize()
            visit(dataSource.incarnation, dataSource.version)
        }
        return digest
    }
}

extension InProcessServer {
    /// The registration keys, in creation order (to unregister them, e.g. when a fuzzer empties a server
    /// it reuses).
    public var registrationKeys: [String] { state.model.registrationOrder }
}
