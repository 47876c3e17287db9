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
    private let content: [String: ValueTemplate]
    private let background: (style: BackgroundStyle, properties: [String: ValueTemplate])?
    private let accessories: [(kind: AccessoryKind, displayed: String, properties: [String: ValueTemplate])]

    /// Validates and compiles a definition.
    ///
    /// - Throws: `CellError` (`invalid-registration`) naming the offending member.
    public init(name: String, definition: JSONValue) throws(CellError) {
        guard case .object(let members) = definition else {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": the definition must be an object.")
        }
        for key in members.keys where !["kind", "elementKind", "contentConfiguration", "background", "accessories"].contains(key) {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": unknown member \"\(key)\".")
        }
        self.name = name
        self.definition = definition
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
            throw CellError(
                .invalidRegistration,
                "Registration \"\(name)\": unknown content configuration type \"\(type)\"; built in: "
                    + ListContentStyle.allCases.map(\.rawValue).joined(separator: ", ") + ", or plugin:NAME.")
        }
        contentType = type
        typeTemplate = try ValueTemplate(.string(type), path: "contentConfiguration.type")
        // A plugin's configuration takes any properties: they go to the plugin, rendered.
        content = try Self.compile(
            configuration, allowed: type.hasPrefix("plugin:") ? nil : ListContentStyle.properties, path: "\(name).contentConfiguration")

        switch members["background"] {
        case nil, .null?:
            background = nil
        case .object(var properties)?:
            guard case .string(let typeName)? = properties.removeValue(forKey: "type"), let style = BackgroundStyle(rawValue: typeName) else {
                throw CellError(
                    .invalidRegistration,
                    "Registration \"\(name)\": \"background.type\" must be one of " + BackgroundStyle.allCases.map(\.rawValue).joined(separator: ", ") + ".")
            }
            background = (style, try Self.compile(properties, allowed: BackgroundStyle.properties, path: "\(name).background"))
        default:
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"background\" must be an object.")
        }

        var accessories: [(AccessoryKind, String, [String: ValueTemplate])] = []
        switch members["accessories"] {
        case nil, .null?:
            break
        case .array(let list)?:
            for (index, entry) in list.enumerated() {
                guard case .object(var properties) = entry, case .string(let typeName)? = properties["type"],
                    let accessory = AccessoryKind(rawValue: typeName)
                else {
                    throw CellError(
                        .invalidRegistration,
                        "Registration \"\(name)\": accessories[\(index)] needs a \"type\": " + AccessoryKind.allCases.map(\.rawValue).joined(separator: ", ") + ".")
                }
                properties["type"] = nil
                var displayed = accessory.defaultDisplayed
                if let value = properties.removeValue(forKey: "displayed") {
                    guard case .string(let text) = value, ["always", "whenEditing", "whenNotEditing"].contains(text) else {
                        throw CellError(.invalidRegistration, "Registration \"\(name)\": accessories[\(index)].displayed must be always, whenEditing or whenNotEditing.")
                    }
                    displayed = text
                }
                accessories.append((accessory, displayed, try Self.compile(properties, allowed: AccessoryKind.properties, path: "\(name).accessories[\(index)]")))
            }
        default:
            throw CellError(.invalidRegistration, "Registration \"\(name)\": \"accessories\" must be an array.")
        }
        self.accessories = accessories
    }

    private static func compile(_ members: [String: JSONValue], allowed: Set<String>?, path: String) throws(CellError) -> [String: ValueTemplate] {
        var compiled: [String: ValueTemplate] = [:]
        for (key, value) in members {
            if let allowed, !allowed.contains(key) {
                throw CellError(.invalidRegistration, "\(path): unknown property \"\(key)\"; known: \(allowed.sorted().joined(separator: ", ")).")
            }
            compiled[key] = try ValueTemplate(value, path: "\(path).\(key)")
        }
        return compiled
    }

    /// Configures a cell for an item: the content (the rendered properties and the style's reaction to
    /// the state, over the style's defaults), the background and the accessories shown in this state.
    ///
    /// - Throws: `CellError` (`invalid-registration`) when a templated type renders to an unknown style.
    /// The plugin type (`emoji` for `plugin:emoji`) when a plugin configures the content, else `nil`.
    public var pluginType: String? {
        contentType.hasPrefix("plugin:") ? String(contentType.dropFirst("plugin:".count)) : nil
    }

    /// Whether the content configuration has properties besides its type.
    public var hasContentProperties: Bool { !content.isEmpty }

    /// For a plugin registration: the registration's content properties, rendered for the item (sent to
    /// the plugin with the cell).
    public func pluginProperties(_ context: TemplateContext) -> JSONValue {
        .object(content.mapValues { $0.render(context) })
    }

    /// For a plugin registration: the cell with the plugin's `content` (an object) of content type `type`
    /// (the registration's own unless the plugin names another it provides) and, unless the plugin gives
    /// its own, the registration's background and accessories.
    public func configured(
        withPluginContent pluginContent: [String: JSONValue], type: String? = nil, background: JSONValue?, accessories: JSONValue?,
        _ context: TemplateContext
    ) -> ConfiguredCell {
        let type = type ?? contentType
        var content = pluginContent
        content["type"] = .string(type)
        let decorations = self.decorations(context)
        return ConfiguredCell(
            type: type, content: .object(content), background: background ?? decorations.background,
            accessories: accessories ?? decorations.accessories)
    }

    public func configure(_ context: TemplateContext) throws(CellError) -> ConfiguredCell {
        if pluginType != nil {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": a plugin configures \(contentType) cells.")
        }
        let typeName = typeTemplate.render(context).stringValue ?? ""
        guard let style = ListContentStyle(rawValue: typeName) else {
            throw CellError(.invalidRegistration, "Registration \"\(name)\": the content type rendered to \"\(typeName)\", which is not a known style.")
        }
        // Only what differs from the style's defaults: the registration's properties and the state's changes.
        var configured = Self.merge([:], rendered: content, context)
        configured = style.updated(configured, for: context.state)
        configured["type"] = .string(style.rawValue)

        let decorations = self.decorations(context)
        return ConfiguredCell(type: style.rawValue, content: .object(configured), background: decorations.background, accessories: decorations.accessories)
    }

    /// The background and the accessories shown in this state.
    private func decorations(_ context: TemplateContext) -> (background: JSONValue, accessories: JSONValue) {
        var backgroundJSON: JSONValue = .null
        if let background {
            var properties = background.style.updated(Self.merge(background.style.defaults, rendered: background.properties, context), for: context.state)
            properties["type"] = .string(background.style.rawValue)
            backgroundJSON = .object(properties)
        }

        var shown: [JSONValue] = []
        for accessory in accessories {
            switch accessory.displayed {
            case "whenEditing" where !context.state.editing: continue
            case "whenNotEditing" where context.state.editing: continue
            default: break
            }
            var properties = accessory.properties.mapValues { $0.render(context) }
            properties["type"] = .string(accessory.kind.rawValue)
            properties["displayed"] = .string(accessory.displayed)
            if accessory.kind == .outlineDisclosure { properties["expanded"] = .bool(context.state.expanded) }
            if accessory.kind == .checkmark && properties["hidden"] == nil { properties["hidden"] = .bool(!context.state.selected) }
            shown.append(.object(properties))
        }
        return (backgroundJSON, .array(shown))
    }

    /// `base` overlaid with the rendered properties (see `overlay`).
    private static func merge(_ base: [String: JSONValue], rendered templates: [String: ValueTemplate], _ context: TemplateContext) -> [String: JSONValue] {
        overlay(templates.mapValues { $0.render(context) }, on: base)
    }
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
