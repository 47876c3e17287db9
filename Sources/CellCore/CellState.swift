import DiffableCore

/// The state of one displayed cell, like `UICellConfigurationState`: the built-in flags plus custom
/// keys (`UIConfigurationStateCustomKey`). Templates read it as `state`, e.g. `{{#state.selected}}✓{{/state.selected}}`.
public struct CellState: Hashable, Sendable {
    public static let flagNames = ["selected", "highlighted", "focused", "disabled", "editing", "expanded", "swiped", "reordering"]

    public var selected = false
    public var highlighted = false
    public var focused = false
    public var disabled = false
    public var editing = false
    public var expanded = false
    public var swiped = false
    public var reordering = false
    /// Custom keys and their values.
    public var custom: [String: JSONValue] = [:]

    public init() {}

    /// Applies the members of `changes` (`{"selected": true, "isFavorite": 1, …}`): flags must be
    /// booleans; any other key is a custom key (`null` removes it).
    ///
    /// - Throws: `CellStateError` when a built-in flag is given something other than a boolean.
    public mutating func update(with changes: [String: JSONValue]) throws(CellStateError) {
        for (key, value) in changes {
            if Self.flagNames.contains(key) {
                guard case .bool(let flag) = value else { throw CellStateError(key: key) }
                switch key {
                case "selected": selected = flag
                case "highlighted": highlighted = flag
                case "focused": focused = flag
                case "disabled": disabled = flag
                case "editing": editing = flag
                case "expanded": expanded = flag
                case "swiped": swiped = flag
                default: reordering = flag
                }
            } else if value.isNull {
                custom[key] = nil
            } else {
                custom[key] = value
            }
        }
    }

    /// The state as JSON: every flag, and the custom keys beside them.
    public var json: JSONValue {
        var members: [String: JSONValue] = custom
        members["selected"] = .bool(selected)
        members["highlighted"] = .bool(highlighted)
        members["focused"] = .bool(focused)
        members["disabled"] = .bool(disabled)
        members["editing"] = .bool(editing)
        members["expanded"] = .bool(expanded)
        members["swiped"] = .bool(swiped)
        members["reordering"] = .bool(reordering)
        return .object(members)
    }
}

/// A built-in state flag given a value that is not a boolean.
public struct CellStateError: Error, Hashable, Sendable {
    public var key: String
    public var message: String { "State \"\(key)\" must be a boolean." }
}
