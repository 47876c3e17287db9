/// The views attached on one connection, in attach order: adding one, finding one by name and
/// removing one are O(1) (amortized), so a connection with many views costs what it has, not its square.
/// Removed views leave the order lazily, as in `DataSource`. Confined to the event loop.
struct ConnectionViews: Sequence {
    /// By name: usually one view (names are unique per data source, not per connection).
    private var byName: [String: [ViewSession]] = [:]
    private var order: [ViewSession] = []
    private var attached: Set<ObjectIdentifier> = []

    var count: Int { attached.count }
    var isEmpty: Bool { attached.isEmpty }

    mutating func append(_ view: ViewSession) {
        byName[view.name, default: []].append(view)
        order.append(view)
        attached.insert(ObjectIdentifier(view))
    }

    /// The view named `name` (of `dataSource` when given), the first attached when several match.
    func named(_ name: String, dataSource: String? = nil) -> ViewSession? {
        byName[name]?.first { dataSource == nil || $0.dataSource == dataSource }
    }

    /// Every view named `name` (of `dataSource` when given).
    func all(named name: String, dataSource: String? = nil) -> [ViewSession] {
        byName[name]?.filter { dataSource == nil || $0.dataSource == dataSource } ?? []
    }

    /// Removes `view` when it is attached here.
    mutating func remove(_ view: ViewSession) {
        guard attached.remove(ObjectIdentifier(view)) != nil else { return }
        byName[view.name]?.removeAll { $0 === view }
        if byName[view.name]?.isEmpty == true { byName[view.name] = nil }
        if order.count > 2 * attached.count + 16 { order.removeAll { !attached.contains(ObjectIdentifier($0)) } }
    }

    mutating func removeAll() {
        byName = [:]
        order = []
        attached = []
    }

    /// The attached views in attach order.
    func makeIterator() -> IndexingIterator<[ViewSession]> {
        order.filter { attached.contains(ObjectIdentifier($0)) }.makeIterator()
    }
}
