import DiffableCore

/// One accessory of a registration, compiled: its kind, when it is displayed, and its options as
/// templates (`UICellAccessory` with its options).
struct CompiledAccessory: Sendable {
    var kind: AccessoryKind
    /// `always`, `whenEditing` or `whenNotEditing`.
    var displayed: String
    var properties: [String: ValueTemplate]
    /// The checks its templated options take once rendered.
    var checks: [RenderedCheck]

    /// Compiles `{type, displayed?, hidden?, tintColor?, reservedLayoutWidth?, …its kind's options}`.
    ///
    /// - Throws: `CellError`: `invalid-registration` naming the accessory (`path`) and what is wrong,
    ///   `limit-exceeded` for a template over the limits.
    init(_ entry: JSONValue, path: String, checking: Registration.Checking, budget: inout CompileBudget) throws(CellError) {
        let kinds = AccessoryKind.allCases.map(\.rawValue)
        guard case .object(var properties) = entry, case .string(let typeName)? = properties["type"], let kind = AccessoryKind(rawValue: typeName) else {
            let given = entry["type"]?.stringValue
            throw CellError(
                .invalidRegistration,
                "\(path) needs a \"type\": " + kinds.joined(separator: ", ")
                    + (given.flatMap { PropertyType.suggestion(for: $0, in: kinds) } ?? "."))
        }
        properties["type"] = nil
        var displayed = kind.defaultDisplayed
        if let value = properties.removeValue(forKey: "displayed"), !value.isNull {
            guard case .string(let text) = value, ["always", "whenEditing", "whenNotEditing"].contains(text) else {
                throw CellError(.invalidRegistration, "\(path).displayed must be always, whenEditing or whenNotEditing.")
            }
            displayed = text
        }
        self.kind = kind
        self.displayed = displayed
        switch checking {
        case .strict:
            checks = try ConfigurationSchema.check(properties, against: kind.properties, required: kind.requiredProperties, path: path)
        case .asStored:
            // A stored definition that meets today's schema renders as it did when registered (typed
            // options); one that does not still loads, unchecked.
            checks = (try? ConfigurationSchema.check(properties, against: kind.properties, required: kind.requiredProperties, path: path)) ?? []
        }
        self.properties = try Registration.compile(properties, allowed: nil, path: path, budget: &budget)
    }

    /// The accessory as a cell shows it in `context`'s state: `nil` when its `displayed` rule hides it
    /// (not editing for `whenEditing`, editing for `whenNotEditing`), else its rendered options with
    /// `type`, `displayed` and, for an outline disclosure, whether the item is `expanded`. A checkmark
    /// shows whenever it is displayed, unless `hidden`, as UIKit's `.checkmark()` does.
    ///
    /// - Throws: `CellError` as `Registration.configure` does (a template over the budget, a templated
    ///   option that rendered to something it does not take); with `lenient`, neither.
    func configured(_ context: TemplateContext, budget: inout RenderBudget, lenient: Bool) throws(CellError) -> JSONValue? {
        switch displayed {
        case "whenEditing" where !context.state.editing: return nil
        case "whenNotEditing" where context.state.editing: return nil
        default: break
        }
        var rendered = try Registration.render(properties, context, budget: &budget, lenient: lenient)
        try RenderedCheck.apply(checks, to: &rendered, lenient: lenient)
        rendered["type"] = .string(kind.rawValue)
        rendered["displayed"] = .string(displayed)
        if kind == .outlineDisclosure { rendered["expanded"] = .bool(context.state.expanded) }
        return .object(rendered)
    }
}
