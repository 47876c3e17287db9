import DiffableCore

/// The keys a registration's configurations take, as UIKit names them, and their checks: `register`
/// refuses an unknown key (suggesting the one meant) and a literal value of the wrong kind; a templated
/// value is checked once rendered (`RenderedCheck`).
public enum ConfigurationSchema {
    /// `UIListContentConfiguration.TextProperties` (`textProperties`, `secondaryTextProperties`).
    public static let textProperties: [String: PropertyType] = [
        "font": .font, "color": .color, "colorTransformer": colorTransformer,
        "alignment": .choice(["natural", "center", "justified"]),
        "lineBreakMode": .choice(["byWordWrapping", "byCharWrapping", "byClipping", "byTruncatingHead", "byTruncatingTail", "byTruncatingMiddle"]),
        "numberOfLines": .integer(minimum: 0), "transform": .choice(["none", "capitalized", "lowercase", "uppercase"]),
        "adjustsFontSizeToFitWidth": .boolean, "minimumScaleFactor": .number(minimum: 0, maximum: 1),
        "allowsDefaultTighteningForTruncation": .boolean, "adjustsFontForContentSizeCategory": .boolean,
        "showsExpansionTextWhenTruncated": .boolean,
    ]

    /// `UIListContentConfiguration.ImageProperties`.
    public static let imageProperties: [String: PropertyType] = [
        "tintColor": .color, "tintColorTransformer": colorTransformer, "cornerRadius": .points,
        "maximumSize": .size, "reservedLayoutSize": .size, "accessibilityIgnoresInvertColors": .boolean,
        "preferredSymbolConfiguration": .object(members: [
            "pointSize": .points, "textStyle": .font,
            "weight": .choice(["ultraLight", "thin", "light", "regular", "medium", "semibold", "bold", "heavy", "black"]),
            "scale": .choice(["default", "small", "medium", "large"]),
        ]),
    ]

    /// A list content configuration's properties (besides `type`).
    public static let content: [String: PropertyType] = [
        "text": .text, "secondaryText": .text, "image": .text,
        "textProperties": .object(members: textProperties), "secondaryTextProperties": .object(members: textProperties),
        "imageProperties": .object(members: imageProperties),
        "prefersSideBySideTextAndSecondaryText": .boolean, "directionalLayoutMargins": .insets,
        "axesPreservingSuperviewLayoutMargins": .choice(["none", "horizontal", "vertical", "both"]),
        "imageToTextPadding": .points, "textToSecondaryTextVerticalPadding": .points, "textToSecondaryTextHorizontalPadding": .points,
    ]

    /// A background configuration's properties (besides `type`), as `UIBackgroundConfiguration`'s.
    public static let background: [String: PropertyType] = [
        "backgroundColor": .color, "backgroundColorTransformer": colorTransformer, "cornerRadius": .points,
        "strokeColor": .color, "strokeColorTransformer": colorTransformer, "strokeWidth": .points, "strokeOutset": .anyNumber,
        "backgroundInsets": .insets, "edgesAddingLayoutMarginsToBackgroundInsets": .list(.choice(["top", "leading", "bottom", "trailing", "all"])),
        "image": .text,
        "imageContentMode": .choice([
            "scaleToFill", "scaleAspectFit", "scaleAspectFill", "center", "top", "bottom", "left", "right", "topLeft", "topRight",
            "bottomLeft", "bottomRight",
        ]),
    ]

    /// Every accessory's options (`UICellAccessory`'s `isHidden`, `reservedLayoutWidth`, `tintColor`, and
    /// its `displayed` state); `AccessoryKind.properties` adds each kind's own.
    public static let accessoryCommon: [String: PropertyType] = [
        "displayed": .choice(["always", "whenEditing", "whenNotEditing"]), "hidden": .boolean, "tintColor": .color,
        "reservedLayoutWidth": .reservedWidth,
    ]

    /// `UIConfigurationColorTransformer`'s.
    static let colorTransformer = PropertyType.choice(["grayscale", "preferredTint", "monochromeTint"])

    /// UIKit's names that listd spells otherwise, for "did you mean".
    static let aliases = ["isHidden": "hidden", "textTransform": "transform", "textAlignment": "alignment", "textColor": "color"]

    /// Checks the members of a configuration against `schema`: unknown keys (with the key meant, when one
    /// is close), required ones missing, literal values of the wrong kind. Templated values are left for
    /// after rendering: the checks they need come back, with their key paths within `members`.
    ///
    /// - Throws: `CellError` (`invalid-registration`) naming the path (`path` is that of `members`).
    static func check(
        _ members: [String: JSONValue], against schema: [String: PropertyType], required: Set<String> = [], path: String
    ) throws(CellError) -> [RenderedCheck] {
        var checks: [RenderedCheck] = []
        try check(members, schema, required: required, path: path, keyPath: [], into: &checks)
        return checks
    }

    private static func check(
        _ members: [String: JSONValue], _ schema: [String: PropertyType], required: Set<String>, path: String, keyPath: [String],
        into checks: inout [RenderedCheck]
    ) throws(CellError) {
        // In key order: the key a message names does not depend on hashing.
        for key in members.keys.sorted() {
            guard let type = schema[key] else {
                let meant = aliases[key].flatMap { schema[$0] != nil ? $0 : nil } ?? Spelling.closest(to: key, in: schema.keys)
                let hint = meant.map { "; did you mean \"\($0)\"?" } ?? "; known: \(schema.keys.sorted().joined(separator: ", "))."
                throw CellError(.invalidRegistration, "\(path): unknown property \"\(key)\"\(hint)")
            }
            try check(members[key]!, type, path: "\(path).\(key)", keyPath: keyPath + [key], into: &checks)
        }
        if let missing = required.sorted().first(where: { members[$0] == nil }) {
            throw CellError(.invalidRegistration, "\(path): \"\(missing)\" is required.")
        }
    }

    private static func check(_ value: JSONValue, _ type: PropertyType, path: String, keyPath: [String], into checks: inout [RenderedCheck]) throws(CellError) {
        switch (type, value) {
        case (_, .null):
            return
        case (.text, _):
            break
        case (_, .string(let text)) where text.contains("{{"):
            guard type.isScalar else {
                throw CellError(.invalidRegistration, "\(path): must be \(type.summary), not a template.")
            }
            checks.append(RenderedCheck(keyPath: keyPath, type: type, path: path))
            return
        case (.object(let members, let required), .object(let given)):
            try check(given, members, required: required, path: path, keyPath: keyPath, into: &checks)
            return
        case (.list(let element, let nonEmpty), .array(let elements)):
            if nonEmpty && elements.isEmpty { throw CellError(.invalidRegistration, "\(path): must not be empty.") }
            for (index, item) in elements.enumerated() {
                let itemPath = "\(path)[\(index)]"
                if case .string(let text) = item, text.contains("{{"), element.isTemplatable == false {
                    throw CellError(.invalidRegistration, "\(itemPath): must be \(element.summary), not a template.")
                }
                let problem = element.isScalar ? element.problem(with: item) : "is not \(element.summary)"
                if let problem { throw CellError(.invalidRegistration, PropertyType.sentence("\(itemPath): \(item) \(problem)")) }
            }
            return
        case (.object, _), (.list, _):
            throw CellError(.invalidRegistration, "\(path): \(value) is not \(type.summary).")
        default:
            break
        }
        if let problem = type.problem(with: value) { throw CellError(.invalidRegistration, PropertyType.sentence("\(path): \(value) \(problem)")) }
    }

}

/// A templated property's check after rendering: its value parsed as the property's type (`"2"` for a
/// number is 2), an empty rendering leaving the property unset (the style's default stays), anything
/// else a per-cell `invalid-registration` error naming the property.
struct RenderedCheck: Sendable {
    /// Where the property is within the rendered configuration (`["textProperties", "font"]`).
    var keyPath: [String]
    var type: PropertyType
    /// The property's path for messages (`todo.contentConfiguration.textProperties.font`).
    var path: String

    /// Applies `checks` to a rendered configuration. `lenient`: an invalid value is left out instead.
    ///
    /// - Throws: `CellError` (`invalid-registration`) naming the property and what it rendered to.
    static func apply(_ checks: [RenderedCheck], to rendered: inout [String: JSONValue], lenient: Bool = false) throws(CellError) {
        for check in checks {
            guard case .string(let text)? = value(in: rendered, at: check.keyPath[...]) else { continue }
            switch check.type.coerce(rendered: text) {
            case .value(let value):
                set(value, in: &rendered, at: check.keyPath[...])
            case .unset:
                set(nil, in: &rendered, at: check.keyPath[...])
            case .invalid(let problem):
                if lenient {
                    set(nil, in: &rendered, at: check.keyPath[...])
                } else {
                    throw CellError(.invalidRegistration, PropertyType.sentence("\(check.path): its template rendered \(JSONValue.string(text)), which \(problem)"))
                }
            }
        }
    }

    private static func value(in members: [String: JSONValue], at keyPath: ArraySlice<String>) -> JSONValue? {
        guard let first = keyPath.first, let member = members[first] else { return nil }
        if keyPath.count == 1 { return member }
        guard case .object(let nested) = member else { return nil }
        return value(in: nested, at: keyPath.dropFirst())
    }

    private static func set(_ value: JSONValue?, in members: inout [String: JSONValue], at keyPath: ArraySlice<String>) {
        guard let first = keyPath.first else { return }
        if keyPath.count == 1 {
            members[first] = value
        } else if case .object(var nested)? = members[first] {
            set(value, in: &nested, at: keyPath.dropFirst())
            // An object left empty by an unset property differs from the defaults in nothing.
            members[first] = nested.isEmpty && value == nil ? nil : .object(nested)
        }
    }
}
