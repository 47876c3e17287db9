import DiffableCore

/// The built-in content configuration types, mirroring `UIListContentConfiguration`'s constructors,
/// with the traits each style has by default.
public enum ListContentStyle: String, CaseIterable, Sendable {
    case cell, subtitleCell, valueCell
    case plainHeader, plainFooter, groupedHeader, groupedFooter
    case prominentInsetGroupedHeader, extraProminentInsetGroupedHeader
    case sidebarCell, sidebarSubtitleCell, sidebarHeader

    /// The properties a registration may set (`ConfigurationSchema.content` says what each takes).
    public static var properties: Set<String> { Set(ConfigurationSchema.content.keys) }

    /// Whether the style is for headers and footers (supplementary views) rather than cells.
    public var isSupplementary: Bool {
        switch self {
        case .plainHeader, .plainFooter, .groupedHeader, .groupedFooter, .prominentInsetGroupedHeader,
            .extraProminentInsetGroupedHeader, .sidebarHeader:
            return true
        default:
            return false
        }
    }

    /// The style's defaults, as UIKit's constructors set them (fonts and colors by their semantic names).
    /// Computed once per style.
    public var defaults: [String: JSONValue] { Self.defaultsByStyle[self]! }

    private static let defaultsByStyle: [ListContentStyle: [String: JSONValue]] = Dictionary(
        uniqueKeysWithValues: allCases.map { ($0, $0.makeDefaults()) })

    private func makeDefaults() -> [String: JSONValue] {
        func text(_ font: String, _ color: String, transform: String = "none", lines: Int = 0) -> JSONValue {
            ["font": .string(font), "color": .string(color), "transform": .string(transform), "numberOfLines": .int(lines), "alignment": "natural"]
        }
        var layout: [String: JSONValue] = [
            "directionalLayoutMargins": ["top": 11, "leading": 16, "bottom": 11, "trailing": 16],
            "imageToTextPadding": 16, "textToSecondaryTextVerticalPadding": 3, "textToSecondaryTextHorizontalPadding": 16,
            "prefersSideBySideTextAndSecondaryText": false,
        ]
        let textProperties: JSONValue
        let secondary: JSONValue
        switch self {
        case .cell:
            textProperties = text("body", "label")
            secondary = text("subheadline", "secondaryLabel")
        case .subtitleCell:
            textProperties = text("body", "label")
            secondary = text("subheadline", "secondaryLabel")
        case .valueCell:
            textProperties = text("body", "label")
            secondary = text("body", "secondaryLabel")
            layout["prefersSideBySideTextAndSecondaryText"] = true
        case .plainHeader, .plainFooter:
            textProperties = text(self == .plainHeader ? "headline" : "footnote", self == .plainHeader ? "label" : "secondaryLabel")
            secondary = text("subheadline", "secondaryLabel")
            layout["directionalLayoutMargins"] = ["top": 6, "leading": 16, "bottom": 6, "trailing": 16]
        case .groupedHeader, .groupedFooter:
            textProperties = text("footnote", "secondaryLabel", transform: self == .groupedHeader ? "uppercase" : "none")
            secondary = text("footnote", "secondaryLabel")
            layout["directionalLayoutMargins"] = ["top": 16, "leading": 20, "bottom": 6, "trailing": 20]
        case .prominentInsetGroupedHeader:
            textProperties = text("title3.bold", "label")
            secondary = text("subheadline", "secondaryLabel")
            layout["directionalLayoutMargins"] = ["top": 16, "leading": 20, "bottom": 8, "trailing": 20]
        case .extraProminentInsetGroupedHeader:
            textProperties = text("title2.bold", "label")
            secondary = text("subheadline", "secondaryLabel")
            layout["directionalLayoutMargins"] = ["top": 16, "leading": 20, "bottom": 8, "trailing": 20]
        case .sidebarCell, .sidebarSubtitleCell:
            textProperties = text("body", "label")
            secondary = text("subheadline", "secondaryLabel")
            layout["directionalLayoutMargins"] = ["top": 8, "leading": 12, "bottom": 8, "trailing": 12]
            layout["imageToTextPadding"] = 10
        case .sidebarHeader:
            textProperties = text("subheadline.bold", "secondaryLabel")
            secondary = text("subheadline", "secondaryLabel")
            layout["directionalLayoutMargins"] = ["top": 12, "leading": 12, "bottom": 6, "trailing": 12]
        }
        var defaults = layout
        defaults["textProperties"] = textProperties
        defaults["secondaryTextProperties"] = secondary
        defaults["imageProperties"] = ["tintColor": self == .sidebarCell || self == .sidebarSubtitleCell ? "accent" : "tint", "reservedLayoutSize": ["width": 0, "height": 0]]
        defaults["secondaryTextPlacement"] = .string(
            self == .valueCell ? "trailing" : (self == .cell || self.isSupplementary ? "none" : "below"))
        return defaults
    }

    /// The configuration updated for a state (`updated(for:)`): a disabled cell's text takes the
    /// secondary text color; a selected sidebar cell's text takes the accent color. Works on partial
    /// content (properties that differ from the defaults): a changed property is added when missing.
    public func updated(_ content: [String: JSONValue], for state: CellState) -> [String: JSONValue] {
        var content = content
        func setColor(_ key: String, _ color: JSONValue) {
            var properties: [String: JSONValue] = [:]
            if case .object(let existing)? = content[key] { properties = existing }
            properties["color"] = color
            content[key] = .object(properties)
        }
        if state.disabled {
            setColor("textProperties", "secondaryLabel")
            setColor("secondaryTextProperties", "tertiaryLabel")
        }
        if state.selected && (self == .sidebarCell || self == .sidebarSubtitleCell) {
            setColor("textProperties", "accent")
        }
        return content
    }

    /// `defaults` overlaid with `content`, object-valued properties merged one level deep: what a view
    /// renders from a cell's (partial) content.
    public func resolved(_ content: [String: JSONValue]) -> [String: JSONValue] {
        overlay(content, on: defaults)
    }
}

/// `UIBackgroundConfiguration`'s list styles.
public enum BackgroundStyle: String, CaseIterable, Sendable {
    case listPlainCell, listGroupedCell, listSidebarCell, clear

    /// The properties a registration may set (`ConfigurationSchema.background` says what each takes).
    public static var properties: Set<String> { Set(ConfigurationSchema.background.keys) }

    public var defaults: [String: JSONValue] {
        switch self {
        case .listPlainCell: return ["backgroundColor": "systemBackground", "cornerRadius": 0, "strokeWidth": 0]
        case .listGroupedCell: return ["backgroundColor": "secondarySystemGroupedBackground", "cornerRadius": 0, "strokeWidth": 0]
        case .listSidebarCell: return ["backgroundColor": "clear", "cornerRadius": 10, "strokeWidth": 0]
        case .clear: return ["backgroundColor": "clear", "cornerRadius": 0, "strokeWidth": 0]
        }
    }

    /// Selected or highlighted cells take the selection color (the accent color in a sidebar).
    public func updated(_ background: [String: JSONValue], for state: CellState) -> [String: JSONValue] {
        guard state.selected || state.highlighted else { return background }
        var background = background
        background["backgroundColor"] = self == .listSidebarCell ? "accent" : "systemGray4"
        return background
    }
}

/// `UICellAccessory`'s kinds, each with when it is displayed by default and its options.
public enum AccessoryKind: String, CaseIterable, Sendable {
    case disclosureIndicator, outlineDisclosure, checkmark, delete, insert, reorder, multiselect, label, detail, popUpMenu, customView

    /// The kind's properties (besides `type`): every kind's `displayed`, `hidden`, `tintColor` and
    /// `reservedLayoutWidth` (`ConfigurationSchema.accessoryCommon`), and its own options.
    public var properties: [String: PropertyType] {
        ConfigurationSchema.accessoryCommon.merging(ownProperties) { common, _ in common }
    }

    /// The options only this kind has (`UICellAccessory`'s per-kind options, and what its view shows).
    public var ownProperties: [String: PropertyType] {
        switch self {
        case .outlineDisclosure: return ["style": .choice(["automatic", "header", "cell"])]
        case .delete, .insert, .multiselect: return ["backgroundColor": .color]
        case .reorder: return ["showsVerticalSeparator": .boolean]
        case .label: return ["text": .text, "font": .font, "adjustsFontForContentSizeCategory": .boolean]
        case .popUpMenu: return ["menu": .list(.text, nonEmpty: true), "selectedElement": .text]
        case .customView: return ["text": .text, "placement": .choice(["leading", "trailing"]), "maintainsFixedSize": .boolean]
        case .disclosureIndicator, .checkmark, .detail: return [:]
        }
    }

    /// The properties the kind cannot do without.
    public var requiredProperties: Set<String> {
        switch self {
        case .label, .customView: return ["text"]
        case .popUpMenu: return ["menu"]
        default: return []
        }
    }

    /// By default, delete, insert, reorder and multiselect show only while editing; the rest always.
    public var defaultDisplayed: String {
        switch self {
        case .delete, .insert, .reorder, .multiselect: return "whenEditing"
        default: return "always"
        }
    }

    /// The options a view assumes when a cell's accessory leaves them out.
    public var defaults: [String: JSONValue] {
        var defaults: [String: JSONValue] = ["displayed": .string(defaultDisplayed), "hidden": false, "reservedLayoutWidth": "standard"]
        switch self {
        case .outlineDisclosure: defaults["style"] = "automatic"
        case .reorder: defaults["showsVerticalSeparator"] = true
        case .customView:
            defaults["placement"] = "trailing"
            defaults["maintainsFixedSize"] = false
        default: break
        }
        return defaults
    }
}

/// `base` with `overrides` laid over it; object-valued members are merged one level deep (so
/// `{"textProperties": {"numberOfLines": 2}}` keeps the font and color already there).
func overlay(_ overrides: [String: JSONValue], on base: [String: JSONValue]) -> [String: JSONValue] {
    var result = base
    for (key, value) in overrides {
        if case .object(let members) = value, case .object(var existing)? = result[key] {
            for (member, override) in members { existing[member] = override }
            result[key] = .object(existing)
        } else {
            result[key] = value
        }
    }
    return result
}
