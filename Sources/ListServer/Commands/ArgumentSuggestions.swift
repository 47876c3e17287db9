import ListWire

/// Where "did you mean" finds the names an unknown argument is compared with (see `Arguments.finish`):
/// only worked out when a request has an unknown argument.
extension Command {
    /// The command's declared arguments, and `minVersion` for a read of one data source (the router
    /// reads that one itself).
    var suggestedArgumentNames: [String] {
        let declared = arguments.map(\.name)
        return effect == .reads && declared.contains("dataSource") ? declared + ["minVersion"] : declared
    }
}
