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

extension SectionSnapshotEdit {
    /// The members each `op` of an outline edit reads besides `op` (as `read(_:field:)` reads them).
    static let argumentNames: [String: [String]] = [
        "append": ["items", "parent"],
        "insert": ["before", "after", "snapshot", "items"],
        "delete": ["items"],
        "deleteAll": [],
        "replaceChildren": ["parent", "snapshot"],
        "expand": ["items"],
        "collapse": ["items"],
    ]
}
