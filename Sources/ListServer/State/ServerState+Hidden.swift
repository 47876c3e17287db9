import ListWire

/// A data source a user may not even read is, to that user, one that does not exist: every look-up made
/// for a request before the command's own access check goes through here, so that no argument
/// (`minVersion`, `ifVersion`, a view's name, …) answers differently for a hidden name than for a
/// missing one.
extension ServerState {
    /// The named data source when `connection`'s user may know it exists (may at least read it); `nil`
    /// for a hidden one, as for one that does not exist.
    func visibleDataSource(_ name: String, to connection: any ServedConnection) -> DataSource? {
        guard let dataSource = dataSources[name], canRead(dataSource.model, connection) else { return nil }
        return dataSource
    }
}
