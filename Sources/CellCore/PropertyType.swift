import DiffableCore

/// What a configuration property holds: what `register` checks a literal value against, and a templated
/// value once it is rendered (see `RenderedCheck`).
public indirect enum PropertyType: Sendable {
    /// Any string (a text, an image name): templates render into it freely.
    case text
    /// A number (integer or not) within the bounds.
    case number(minimum: Double, maximum: Double)
    /// An integer at least `minimum`.
    case integer(minimum: Int)
    case boolean
    /// One of these strings.
    case choice([String])
    /// A colour: one of `ConfigurationVocabulary.colors`, or `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`.
    case color
    /// A font: one of `ConfigurationVocabulary.textStyles`, optionally followed by `.bold` or `.italic`.
    case font
    /// An accessory's reserved width (`UICellAccessory.LayoutDimension`): `"actual"`, `"standard"` or a
    /// number of points (`.custom(w)`).
    case reservedWidth
    /// An object with these members (any subset, but `required` ones).
    case object(members: [String: PropertyType], required: Set<String> = [])
    /// An array of elements of one type (at least one when `nonEmpty`).
    case list(PropertyType, nonEmpty: Bool = false)

    /// A number of points, at least 0.
    public static let points = PropertyType.number(minimum: 0, maximum: .infinity)
    /// `{width, height}` in points (a `CGSize`).
    public static let size = PropertyType.object(members: ["width": .points, "height": .points], required: ["width", "height"])
    /// `{top, leading, bottom, trailing}` in points, any of them (`NSDirectionalEdgeInsets`).
    public static let insets = PropertyType.object(
        members: ["top": .anyNumber, "leading": .anyNumber, "bottom": .anyNumber, "trailing": .anyNumber])
    static let anyNumber = PropertyType.number(minimum: -.infinity, maximum: .infinity)

    /// What the type takes, in words (for messages and the protocol's tables).
    public var summary: String {
        switch self {
        case .text: return "a string"
        case .number(let minimum, let maximum):
            switch (minimum.isFinite, maximum.isFinite) {
            case (true, true): return "a number from \(Self.format(minimum)) to \(Self.format(maximum))"
            case (true, false): return "a number ≥ \(Self.format(minimum))"
            default: return "a number"
            }
        case .integer(let minimum): return "an integer ≥ \(minimum)"
        case .boolean: return "a boolean"
        case .choice(let names): return "one of " + names.joined(separator: ", ")
        case .color: return "a colour (a UIKit colour name such as systemRed or secondaryLabel, or #rrggbb)"
        case .font: return "a font (a text style such as body or headline, optionally .bold or .italic)"
        case .reservedWidth: return "\"actual\", \"standard\" or a number of points"
        case .object(let members, let required):
            if members.keys.sorted() == ["height", "width"] { return "a size {width, height} in points" }
            let names = members.keys.sorted().map { required.contains($0) ? $0 : "\($0)?" }
            return "an object {" + names.joined(separator: ", ") + "}"
        case .list(let element, _): return "an array, each element \(element.summary)"
        }
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() ? String(Int(number)) : String(number)
    }

    /// Whether a templated value can stand for this type (a template renders a string: an object or an
    /// array cannot come from one).
    var isScalar: Bool {
        switch self {
        case .object, .list: return false
        default: return true
        }
    }

    /// Whether an array element of this type may be a template (only a text: elements are not checked
    /// after rendering).
    var isTemplatable: Bool {
        if case .text = self { return true }
        return false
    }

    /// The value a rendered template gives this property: `.value` (a number or boolean parsed from its
    /// text, else the string), `.unset` for an empty rendering (the style's default stays), or `.invalid`
    /// saying what was wrong.
    func coerce(rendered text: String) -> Coerced {
        if case .text = self { return .value(.string(text)) }
        if text.isEmpty { return .unset }
        let value: JSONValue
        switch self {
        case .number, .reservedWidth:  // ("actual" and "standard" stay text)
            if let integer = Int(text) {
                value = .int(integer)
            } else if let number = Double(text), number.isFinite {
                value = .double(number)
            } else {
                value = .string(text)
            }
        case .integer:
            value = Int(text).map(JSONValue.int) ?? .string(text)
        case .boolean:
            value = text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
        default:
            value = .string(text)
        }
        if let problem = problem(with: value) { return .invalid(problem) }
        return .value(value)
    }

    enum Coerced {
        case value(JSONValue)
        case unset
        case invalid(String)
    }

    /// What is wrong with a literal scalar `value` for this type (`nil`: nothing), as the rest of a
    /// sentence about the value ("is not a font (…); did you mean "body"?"). Objects and lists are checked
    /// member by member by `ConfigurationSchema`.
    func problem(with value: JSONValue) -> String? {
        if value.isNull { return nil }
        let valid: Bool
        switch (self, value) {
        case (.text, .string): valid = true
        case (.number(let minimum, let maximum), _):
            guard let number = value.numberValue else { return "is not \(summary)" }
            valid = number.isFinite && number >= minimum && number <= maximum
        case (.integer(let minimum), .int(let integer)): valid = integer >= minimum
        case (.boolean, .bool): valid = true
        case (.choice(let names), .string(let name)):
            guard names.contains(name) else { return "is not \(summary)" + (Self.suggestion(for: name, in: names) ?? "") }
            valid = true
        case (.color, .string(let name)):
            guard ConfigurationVocabulary.isColor(name) else {
                return "is not \(summary)" + (Self.suggestion(for: name, in: ConfigurationVocabulary.colors) ?? "")
            }
            valid = true
        case (.font, .string(let name)):
            guard ConfigurationVocabulary.isFont(name) else {
                let style = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name
                return "is not \(summary)" + (Self.suggestion(for: style, in: ConfigurationVocabulary.textStyles) ?? "")
            }
            valid = true
        case (.reservedWidth, .string(let name)): valid = name == "actual" || name == "standard"
        case (.reservedWidth, _): valid = (value.numberValue ?? -1) >= 0
        default: valid = false
        }
        return valid ? nil : "is not \(summary)"
    }

    /// `text` ending as a sentence does (a full stop unless it ends with a question already).
    static func sentence(_ text: String) -> String {
        text.hasSuffix("?") || text.hasSuffix(".") ? text : text + "."
    }

    /// `; did you mean "x"?` when one of `candidates` is close to `word`, else `nil`.
    static func suggestion(for word: String, in candidates: some Sequence<String>) -> String? {
        Spelling.closest(to: word, in: candidates).map { "; did you mean \"\($0)\"?" }
    }
}

extension JSONValue {
    /// The value as a number when it is one (an integer or not).
    var numberValue: Double? {
        switch self {
        case .int(let integer): return Double(integer)
        case .double(let number): return number
        default: return nil
        }
    }
}

/// The names configurations take: UIKit's colours and text styles.
public enum ConfigurationVocabulary {
    /// UIKit's colour names (`UIColor`'s semantic, system and fixed colours), and listd's `accent` and
    /// `tint` (the app's tint colour).
    public static let colors: [String] = [
        "label", "secondaryLabel", "tertiaryLabel", "quaternaryLabel", "placeholderText", "link", "separator", "opaqueSeparator",
        "systemBackground", "secondarySystemBackground", "tertiarySystemBackground",
        "systemGroupedBackground", "secondarySystemGroupedBackground", "tertiarySystemGroupedBackground",
        "systemFill", "secondarySystemFill", "tertiarySystemFill", "quaternarySystemFill", "lightText", "darkText",
        "tintColor", "tint", "accent",
        "systemRed", "systemOrange", "systemYellow", "systemGreen", "systemMint", "systemTeal", "systemCyan", "systemBlue",
        "systemIndigo", "systemPurple", "systemPink", "systemBrown",
        "systemGray", "systemGray2", "systemGray3", "systemGray4", "systemGray5", "systemGray6",
        "black", "darkGray", "lightGray", "white", "gray", "red", "green", "blue", "cyan", "yellow", "magenta", "orange",
        "purple", "brown", "clear",
    ]
    private static let colorSet = Set(colors)

    /// `UIFont.TextStyle`'s names; a font is one of them, optionally with `.bold` or `.italic`.
    public static let textStyles: [String] = [
        "largeTitle", "extraLargeTitle", "extraLargeTitle2", "title1", "title2", "title3", "headline", "subheadline", "body",
        "callout", "footnote", "caption1", "caption2",
    ]
    private static let textStyleSet = Set(textStyles)

    static func isColor(_ name: String) -> Bool {
        if colorSet.contains(name) { return true }
        guard name.first == "#", [4, 5, 7, 9].contains(name.count) else { return false }
        return name.dropFirst().allSatisfy(\.isHexDigit)
    }

    static func isFont(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard let style = parts.first, textStyleSet.contains(String(style)) else { return false }
        return parts.count == 1 || (parts.count == 2 && (parts[1] == "bold" || parts[1] == "italic"))
    }
}
