import DiffableCore

/// A cell registration: what kind of view it makes and how to configure it from an item, like
/// `UICollectionView.CellRegistration`. Immutable once created; each registration has its own reuse
/// pool in every view.
///
/// A definition is JSON:
/// ```json
/// {"kind": "cell",
///  "contentConfiguration": {"type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{lastAnswer.content}}",
///                           "secondaryTextProperties": {"numberOfLines": 2}},
///  "background": {"type": "listGroupedCell", "cornerRadius": 12},
///  "accessories": [{"type": "disclosureIndicator"}, {"type": "delete"}]}
/// ```
/// Every string may be a Mustache template over the item (see `TemplateContext`), including the
/// content type itself.
public struct Registration: Sendable {
    public enum Kind: Hashable, Sendable {
        case cell
        case supplementary(elementKind: String)
    }

    public let name: String
    public let kind: Kind
    /// The definition as given (for listing, and to tell an identical re-registration from a different one).
    public let definition: JSONValue
    /// The content configuration type as written (a style name, or a template producing one).
    public let contentType: String
    private let typeTemplate: ValueTemplate
    /// The content properties' templates in key order (the order they render and spend the budget in).
    private let contentInOrder: [(key: String, template: ValueTemplate)]
    /// The style, when the type is not a template (most registrations): no rendering per cell.
    private let constantStyle: ListContentStyle?
    /// The checks the content's templated properties take once rendered (most registrations: none).
    private let contentChecks: [RenderedCheck]
    private let background: (style: BackgroundStyle, properties: [String: ValueTemplate], checks: [RenderedCheck])?
    private let accessories: [CompiledAccessory]
    /// The bounds its templates were compiled within, and that rendering a cell spends from.
    public let limits: TemplateLimits
    /// The uid of the user that registered it (0, root, unless set).
    public var owner: UInt32 = 0
    /// A `secondaryText` that renders empty is left out, an empty `text` becomes the item's identifier
    /// (the default presentation).
    var omitsEmptyText = false

    /// How a definition's configurations are checked.
    public enum Checking: Sendable {
        /// Every key known and every literal value of its kind (`ConfigurationSchema`): what `register` does.
        case strict
        /// Only what was checked before configurations had a schema (types, kinds, templates): for
        /// definitions stored by an earlier listd, which must keep loading.
        case asStored
    }

    /// Validates and compiles a definition.
    ///
    /// - Throws: `CellError`: `invalid-registration` naming the offending member (and the key meant, when
    ///   an unknown one is close to it), `limit-exceeded` naming a template over a size or nesting limit of
    ///   `limits` (all checked before that template compiles).
    public init(name: String, definition: JSONValue, limits: TemplateLimits = .standard, checking: Checking = .strict) throws(CellError) {
        guard case .object(let members) = definition else {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": the definition must be an object.")
        }
        let memberNames = ["kind", "elementKind", "contentConfiguration", "background", "accessories"]
        if let key = members.keys.sorted().first(where: { !memberNames.contains($0) }) {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": unknown member \"\(key)\"" + (PropertyType.suggestion(for: key, in: memberNames) ?? "."))
        }
        self.name = name
        self.definition = definition
        self.limits = limits
        var budget = CompileBudget(limits: limits)
        switch (members["kind"], members["elementKind"]) {
        case (.string("cell")?, nil), (nil, nil):
            kind = .cell
        case (.string("supplementary")?, .string(let elementKind)?) where !elementKind.isEmpty:
            kind = .supplementary(elementKind: elementKind)
        case (.string("supplementary")?, _):
            throw CellError(.invalidRegistration, "Registration \"\(name)\": a supplementary registration needs an \"elementKind\" (e.g. \"header\").")
        case (.string("cell")?, _?):
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"elementKind\" is only for supplementary registrations.")
        default:
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"kind\" must be \"cell\" or \"supplementary\".")
        }

        guard case .object(var configuration)? = members["contentConfiguration"] else {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"contentConfiguration\" must be an object with a \"type\".")
        }
        guard case .string(let type)? = configuration.removeValue(forKey: "type") else {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"contentConfiguration.type\" must be a string.")
        }
        if type.hasPrefix("plugin:") {
            guard type.count > "plugin:".count, !type.contains("{{") else {
                throw CellError(.invalidRegistration, "Registration \"\(name)\": a plugin type is \"plugin:NAME\", without templates.")
            }
        } else if !type.contains("{{") && ListContentStyle(rawValue: type) == nil {
            let styles = ListContentStyle.allCases.map(\.rawValue)
            throw CellError(
                .invalidRegistration,
                "Registration \"\(name)\": unknown content configuration type \"\(type)\""
                    + (PropertyType.suggestion(for: type, in: styles) ?? "; built in: " + styles.joined(separator: ", ") + ", or plugin:NAME."))
        }
        contentType = type
        typeTemplate = try ValueTemplate(.string(type), path: "\(name).contentConfiguration.type", budget: &budget)
        // A plugin's configuration takes any properties: they go to the plugin, rendered.
        // A stored definition that meets today's schema renders as it did when registered (typed values);
        // one that does not still loads, unchecked.
        if type.hasPrefix("plugin:") {
            contentChecks = []
        } else if checking == .strict {
            contentChecks = try ConfigurationSchema.check(configuration, against: ConfigurationSchema.content, path: "\(name).contentConfiguration")
        } else {
            contentChecks = (try? ConfigurationSchema.check(configuration, against: ConfigurationSchema.content, path: "\(name).contentConfiguration")) ?? []
        }
        let compiled = try Self.compile(
            configuration, allowed: type.hasPrefix("plugin:") ? nil : ListContentStyle.properties, path: "\(name).contentConfiguration",
            budget: &budget)
        contentInOrder = compiled.keys.sorted().map { ($0, compiled[$0]!) }
        constantStyle = type.contains("{{") ? nil : ListContentStyle(rawValue: type)

        switch members["background"] {
        case nil, .null?:
            background = nil
        case .object(var properties)?:
            let typeName = properties.removeValue(forKey: "type")
            guard let style = typeName?.stringValue.flatMap(BackgroundStyle.init(rawValue:)) else {
                let styles = BackgroundStyle.allCases.map(\.rawValue)
                throw CellError(
                    .invalidRegistration,
                    "Registration \"\(name)\": \"background.type\" must be one of " + styles.joined(separator: ", ")
                        + (PropertyType.suggestion(for: typeName?.stringValue ?? "", in: styles) ?? "."))
            }
            let path = "\(name).background"
            let checks =
                checking == .strict
                ? try ConfigurationSchema.check(properties, against: ConfigurationSchema.background, path: path)
                : (try? ConfigurationSchema.check(properties, against: ConfigurationSchema.background, path: path)) ?? []
            background = (style, try Self.compile(properties, allowed: BackgroundStyle.properties, path: path, budget: &budget), checks)
        default:
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"background\" must be an object.")
        }

        var accessories: [CompiledAccessory] = []
        switch members["accessories"] {
        case nil, .null?:
            break
        case .array(let list)?:
            for (index, entry) in list.enumerated() {
                accessories.append(try CompiledAccessory(entry, path: "\(name).accessories[\(index)]", checking: checking, budget: &budget))
            }
        default:
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"accessories\" must be an array.")
        }
        self.accessories = accessories
    }

    static func compile(
        _ members: [String: JSONValue], allowed: Set<String>?, path: String, budget: inout CompileBudget
    ) throws(CellError) -> [String: ValueTemplate] {
        if let allowed, let key = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw CellError(.invalidRegistration, "\(path): unknown property \"\(key)\"; known: \(allowed.sorted().joined(separator: ", ")).")
        }
        var compiled: [String: ValueTemplate] = [:]
        // In key order, so that the template named by a registration-wide size error does not depend on hashing.
        for key in members.keys.sorted() {
            compiled[key] = try ValueTemplate(members[key]!, path: "\(path).\(key)", budget: &budget)
        }
        return compiled
    }

    /// The plugin type (`emoji` for `plugin:emoji`) when a plugin configures the content, else `nil`.
    public var pluginType: String? {
        contentType.hasPrefix("plugin:") ? String(contentType.dropFirst("plugin:".count)) : nil
    }

    /// Whether the content configuration has properties besides its type.
    public var hasContentProperties: Bool { !contentInOrder.isEmpty }

    /// For a plugin registration: the registration's content properties, rendered for the item (sent to
    /// the plugin with the cell). Within the cell's `TemplateLimits`; a property over them renders as `""`
    /// (`checkPluginRendering` tells beforehand).
    public func pluginProperties(_ context: TemplateContext) -> JSONValue {
        var budget = RenderBudget(limits: limits)
        // Lenient rendering does not throw.
        return .object((try? Self.render(contentInOrder, context, budget: &budget, lenient: true)) ?? [:])
    }

    /// For a plugin registration: renders what the registration renders for a plugin cell (its content
    /// properties, background and accessories) to see whether it stays within the cell's limits.
    ///
    /// - Throws: `CellError` (`limit-exceeded`) naming the template that goes over them.
    public func checkPluginRendering(_ context: TemplateContext) throws(CellError) {
        var budget = RenderBudget(limits: limits)
        try checkPluginRendering(context, budget: &budget)
    }

    /// `checkPluginRendering(_:)`, spending from `budget` (a fresh one per cell; it tells the steps taken).
    public func checkPluginRendering(_ context: TemplateContext, budget: inout RenderBudget) throws(CellError) {
        _ = try Self.render(contentInOrder, context, budget: &budget)
        _ = try decorations(context, budget: &budget)
    }

    /// For a plugin registration: the cell with the plugin's `content` (an object) of content type `type`
    /// (the registration's own unless the plugin names another it provides) and, unless the plugin gives
    /// its own, the registration's background and accessories (a template over the cell's limits renders
    /// as `""` there).
    public func configured(
        withPluginContent pluginContent: [String: JSONValue], type: String? = nil, background: JSONValue?, accessories: JSONValue?,
        _ context: TemplateContext
    ) -> ConfiguredCell {
        let type = type ?? contentType
        var content = pluginContent
        content["type"] = .string(type)
        var budget = RenderBudget(limits: limits)
        // Lenient rendering does not throw.
        let decorations = (try? self.decorations(context, budget: &budget, lenient: true)) ?? (.null, .array([]))
        return ConfiguredCell(
            type: type, content: .object(content), background: background ?? decorations.background,
            accessories: accessories ?? decorations.accessories)
    }

    /// Configures a cell for an item: the content (the rendered properties and the style's reaction to
    /// the state, over the style's defaults), the background and the accessories shown in this state.
    /// Rendering spends from one `RenderBudget` of the registration's `limits` for the whole cell.
    ///
    /// - Throws: `CellError`: `invalid-registration` when a templated type renders to an unknown style,
    ///   `limit-exceeded` when the cell's templates would take more work or output than its limits.
    public func configure(_ context: TemplateContext) throws(CellError) -> ConfiguredCell {
        var budget = RenderBudget(limits: limits)
        return try configure(context, budget: &budget)
    }

    /// `configure(_:)`, spending from `budget` (a fresh one per cell; afterwards it tells what the cell took).
    public func configure(_ context: TemplateContext, budget: inout RenderBudget) throws(CellError) -> ConfiguredCell {
        if pluginType != nil {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": a plugin configures \(contentType) cells.")
        }
        let style: ListContentStyle
        if let constantStyle {
            style = constantStyle
        } else {
            let typeName = try typeTemplate.render(context, budget: &budget).stringValue ?? ""
            guard let rendered = ListContentStyle(rawValue: typeName) else {
                throw CellError(.invalidRegistration, "Registration \"\(name)\": the content type rendered to \"\(typeName)\", which is not a known style.")
            }
            style = rendered
        }
        // Only what differs from the style's defaults: the registration's properties and the state's changes.
        var configured = try Self.render(contentInOrder, context, budget: &budget)
        try RenderedCheck.apply(contentChecks, to: &configured)
        if omitsEmptyText {
            if configured["secondaryText"] == .string("") { configured["secondaryText"] = nil }
            if configured["text"] == .string("") { configured["text"] = .string(context.item) }
        }
        configured = style.updated(configured, for: context.state)
        configured["type"] = .string(style.rawValue)

        let decorations = try self.decorations(context, budget: &budget)
        return ConfiguredCell(type: style.rawValue, content: .object(configured), background: decorations.background, accessories: decorations.accessories)
    }

    /// The background and the accessories shown in this state. With `lenient`, templates over the budget
    /// render as `""` instead of throwing.
    private func decorations(
        _ context: TemplateContext, budget: inout RenderBudget, lenient: Bool = false
    ) throws(CellError) -> (background: JSONValue, accessories: JSONValue) {
        var backgroundJSON: JSONValue = .null
        if let background {
            var rendered = try Self.render(background.properties, context, budget: &budget, lenient: lenient)
            try RenderedCheck.apply(background.checks, to: &rendered, lenient: lenient)
            var properties = background.style.updated(overlay(rendered, on: background.style.defaults), for: context.state)
            properties["type"] = .string(background.style.rawValue)
            backgroundJSON = .object(properties)
        }

        var shown: [JSONValue] = []
        for accessory in accessories {
            if let configured = try accessory.configured(context, budget: &budget, lenient: lenient) { shown.append(configured) }
        }
        return (backgroundJSON, .array(shown))
    }

    /// Renders the properties from one budget, in key order (so that which one goes over a limit does not
    /// depend on hashing).
    static func render(
        _ templates: [String: ValueTemplate], _ context: TemplateContext, budget: inout RenderBudget, lenient: Bool = false
    ) throws(CellError) -> [String: JSONValue] {
        try render(templates.keys.sorted().map { ($0, templates[$0]!) }, context, budget: &budget, lenient: lenient)
    }

    /// Renders templates in the order given (key order: which one meets a limit first is always the same).
    private static func render(
        _ templates: [(key: String, template: ValueTemplate)], _ context: TemplateContext, budget: inout RenderBudget, lenient: Bool = false
    ) throws(CellError) -> [String: JSONValue] {
        var rendered: [String: JSONValue] = [:]
        // One more for the `type` every caller adds: no growth (and rehashing) per cell.
        rendered.reserveCapacity(templates.count + 1)
        for (key, template) in templates {
            rendered[key] = lenient ? template.renderLeniently(context, budget: &budget) : try template.render(context, budget: &budget)
        }
        return rendered
    }
}

/// Registrations are kept per owner: two users may each have a registration of one name. A
/// registration's key is its owner's uid and its name, `"1000:row"` (the uid has no colon, so the first
/// one ends it); the default presentation's is its name. Stores keep registrations under this key.
extension Registration {
    /// The key of the registration `name` in the namespace of the user `owner`.
    public static func key(owner: UInt32, name: String) -> String { "\(owner):\(name)" }

    /// The registration name in a key made by `key(owner:name:)` (a key without an owner is a name).
    public static func name(ofKey key: String) -> String {
        guard let colon = key.firstIndex(of: ":"), colon != key.startIndex, key[..<colon].allSatisfy(\.isNumber) else { return key }
        return String(key[key.index(after: colon)...])
    }

    /// The key this registration is kept under (and its cells' reuse pools in every view).
    public var key: String { name == DefaultPresentation.name ? name : Self.key(owner: owner, name: name) }
}

/// A configured cell: what a view renders.
public struct ConfiguredCell: Hashable, Sendable {
    /// The content configuration type used.
    public var type: String
    /// `type` and the properties that differ from the style's defaults (`resolvedContent` adds those).
    public var content: JSONValue
    /// `null` when the registration has no background configuration.
    public var background: JSONValue
    public var accessories: JSONValue

    /// The content with the style's defaults filled in: every property a view needs.
    public var resolvedContent: JSONValue {
        guard let style = ListContentStyle(rawValue: type), case .object(let members) = content else { return content }
        return .object(style.resolved(members))
    }
}

/// How an item shows when no cell provider rule maps it to a registration (a data source without a
/// provider, or an item no rule matches and no default catches): a plain `cell` with the payload's
/// `title` (else `text`, else `name`, else the item's identifier) and, when present, its `subtitle`
/// (else `secondaryText`) as the secondary text.
public enum DefaultPresentation {
    /// The name its cells carry (and their reuse pools are keyed by); no registration may take it.
    public static let name = "(default)"

    public static let registration: Registration = {
        let text =
            "{{#title}}{{.}}{{/title}}{{^title}}{{#text}}{{.}}{{/text}}{{^text}}{{#name}}{{.}}{{/name}}{{^name}}{{item}}{{/name}}{{/text}}{{/title}}"
        let secondary = "{{#subtitle}}{{.}}{{/subtitle}}{{^subtitle}}{{#secondaryText}}{{.}}{{/secondaryText}}{{/subtitle}}"
        var registration = try! Registration(
            name: name, definition: ["contentConfiguration": ["type": "cell", "text": .string(text), "secondaryText": .string(secondary)]])
        registration.omitsEmptyText = true
        return registration
    }()
}
