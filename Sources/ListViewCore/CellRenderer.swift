import DiffableCore
import ListLayout

/// Draws configured cells (as `dequeue` returns them) in a terminal: the list styles, headers and
/// footers, accessories, selection, and plugin content (the example plugins' types, and any other
/// through its text fields).
public enum CellRenderer {
    /// The rows a cell needs at `width` columns: the text's lines, then the secondary text's below it
    /// for styles that stack them (`cell` too, as UIKit's `.cell()` stacks a secondary text under the
    /// text when it has one). Each takes one line unless its properties' `numberOfLines` allows more
    /// (0: as many as it needs, at most `maximumLines`): then it wraps at `width`.
    public static func height(of cell: JSONValue, width: Int = 80) -> Int {
        let content = cell["content"] ?? .null
        let type = content["type"]?.stringValue ?? ""
        let columns = max(1, width - 4)
        let textLines = lines(text(of: content, wholly: true), properties: content["textProperties"], width: columns).count
        let secondary = secondaryText(of: content, wholly: true)
        let secondaryLines = secondary.isEmpty ? 0 : lines(secondary, properties: content["secondaryTextProperties"], width: columns).count
        let stacks = type == "subtitleCell" || type == "sidebarSubtitleCell" || type == "cell" || (type.hasPrefix("plugin:") && type != "plugin:emoji")
        return max(1, textLines) + (stacks ? secondaryLines : 0)
    }

    /// The most lines a text with `numberOfLines: 0` takes.
    public static let maximumLines = 6

    /// `text` as it is drawn: transformed (`transform`), cut into lines at `width` columns (at a space
    /// when there is one) and at its line breaks, at most `numberOfLines` of them (1 when unset; 0: up
    /// to `maximumLines`); a text cut short ends with "…".
    static func lines(_ text: String, properties: JSONValue?, width: Int) -> [String] {
        let limit = properties?["numberOfLines"]?.intValue.map { $0 == 0 ? maximumLines : min($0, maximumLines) } ?? 1
        let transformed: String
        switch properties?["transform"]?.stringValue {
        case "uppercase": transformed = text.uppercased()
        case "lowercase": transformed = text.lowercased()
        case "capitalized":
            transformed = String(text.split(separator: " ", omittingEmptySubsequences: false).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " "))
        default: transformed = text
        }
        guard limit > 1 else { return [TerminalText.visible(transformed.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " "))] }
        var result: [String] = []
        for paragraph in transformed.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            var lineWidth = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let wordWidth = TerminalWidth.of(word)
                if lineWidth > 0 && lineWidth + 1 + wordWidth > width {
                    result.append(line)
                    line = ""
                    lineWidth = 0
                }
                if lineWidth > 0 {
                    line += " "
                    lineWidth += 1
                }
                line += word
                lineWidth += wordWidth
            }
            result.append(line)
        }
        if result.count > limit {
            result = Array(result[..<limit])
            var last = result[limit - 1]
            while !last.isEmpty && TerminalWidth.of(last) + 1 > width { last.removeLast() }
            result[limit - 1] = last + "…"
        }
        return result.map { TerminalText.visible($0) }
    }

    /// The terminal style of a text with these properties: its font's weight and slant (`headline`,
    /// the titles and `….bold` are bold, `….italic` italic), its colour (UIKit's system colours as the
    /// terminal's eight, bright ones for the grays), secondary label colours dim.
    static func style(_ properties: JSONValue?, base: TextStyle) -> TextStyle {
        var style = base
        if let font = properties?["font"]?.stringValue {
            if font.hasSuffix(".bold") || ["headline", "largeTitle", "title1", "title2", "title3"].contains(font) { style.bold = true }
            if font.hasSuffix(".italic") { style.italic = true }
        }
        if let color = properties?["color"]?.stringValue {
            if ["secondaryLabel", "tertiaryLabel", "quaternaryLabel", "placeholderText"].contains(color) { style.dim = true }
            if let code = colorCode(color) { style.foreground = code }
        }
        return style
    }

    /// The SGR code of a UIKit colour name (`systemRed` → 31), `nil` for the label colours (the
    /// terminal's own) and names a terminal has no colour for.
    public static func colorCode(_ name: String) -> UInt8? {
        switch name {
        case "systemRed", "red": return 31
        case "systemGreen", "green", "systemMint": return 32
        case "systemYellow", "yellow", "systemOrange", "orange", "systemBrown", "brown": return 33
        case "systemBlue", "blue", "systemIndigo", "tintColor", "accent", "link": return 34
        case "systemPurple", "purple", "systemPink", "magenta": return 35
        case "systemTeal", "systemCyan", "cyan": return 36
        case "systemGray", "systemGray2", "systemGray3", "systemGray4", "systemGray5", "systemGray6", "gray", "darkGray", "lightGray": return 90
        case "white": return 97
        case "black": return 30
        default: return nil
        }
    }

    /// One accessory as a terminal draws it: its glyph or text (a hidden one as blank, keeping its
    /// place) and its style (dim, or its `tintColor`).
    struct AccessoryPart: Equatable {
        var text: String
        var style: TextStyle
    }

    /// The columns of a terminal a point of `reservedLayoutWidth` takes (a terminal cell is about 8 points wide).
    public static let pointsPerColumn = 8.0

    /// The accessories a cell shows, as UIKit places them: the editing controls (`delete`, `insert`,
    /// `multiselect`), the outline disclosure and leading custom views at the leading edge; the others
    /// (`disclosureIndicator`, `checkmark`, `reorder`, `detail`, `label`, `popUpMenu`, trailing custom
    /// views) at the trailing edge, in the registration's order. An accessory whose `displayed` rule the
    /// cell's editing state rules out is left out; a `hidden` one keeps its place, blank. A
    /// `reservedLayoutWidth` in points widens it (centred) to `pointsPerColumn` points a column.
    static func accessories(of cell: JSONValue) -> (leading: [AccessoryPart], trailing: [AccessoryPart]) {
        let editing = cell["state"]?["editing"] == true
        var controls: [AccessoryPart] = []
        var leading: [AccessoryPart] = []
        var trailing: [AccessoryPart] = []
        for accessory in cell["accessories"]?.arrayValue ?? [] {
            switch accessory["displayed"]?.stringValue {
            case "whenEditing" where !editing, "whenNotEditing" where editing: continue
            default: break
            }
            let type = accessory["type"]?.stringValue ?? ""
            guard let glyph = glyph(of: accessory, type: type, selected: cell["state"]?["selected"] == true) else { continue }
            var style = TextStyle(dim: true)
            if let tint = accessory["tintColor"]?.stringValue, let code = colorCode(tint) { style = TextStyle(foreground: code) }
            if type == "label" { style = Self.style(["font": accessory["font"] ?? .null], base: style) }
            var text = glyph
            if let points = points(accessory["reservedLayoutWidth"]), points > 0 {
                let columns = Int((points / pointsPerColumn).rounded(.up))
                let width = TerminalWidth.of(text)
                if columns > width {
                    let before = (columns - width) / 2
                    text = String(repeating: " ", count: before) + text + String(repeating: " ", count: columns - width - before)
                }
            }
            if accessory["hidden"] == true { text = String(repeating: " ", count: TerminalWidth.of(text)) }
            let part = AccessoryPart(text: text, style: style)
            switch type {
            case "delete", "insert", "multiselect": controls.append(part)
            case "outlineDisclosure": leading.append(part)
            case "customView" where accessory["placement"] == "leading": leading.append(part)
            default: trailing.append(part)
            }
        }
        return (controls + leading, trailing)
    }

    /// What an accessory of `type` shows: a glyph, a label's text, a pop-up menu's selected element
    /// with its arrows, a custom view's text; `nil` for nothing (an empty label, an unknown kind).
    private static func glyph(of accessory: JSONValue, type: String, selected: Bool) -> String? {
        switch type {
        case "disclosureIndicator": return "›"
        case "outlineDisclosure": return accessory["expanded"] == true ? "⌄" : "›"
        case "checkmark": return "✓"
        case "delete": return "⊖"
        case "insert": return "⊕"
        case "reorder": return "≡"
        case "multiselect": return selected ? "◉" : "○"
        case "detail": return "ⓘ"
        case "popUpMenu":
            let choice = accessory["selectedElement"]?.stringValue.map { firstLine($0) } ?? ""
            return choice.isEmpty ? "⌃⌄" : choice + " ⌃⌄"
        case "label", "customView":
            guard let text = accessory["text"]?.stringValue, !text.isEmpty else { return nil }
            return firstLine(text)
        default: return nil
        }
    }

    /// A number of points (an integer or not).
    private static func points(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let number)?: return Double(number)
        case .double(let number)?: return number
        default: return nil
        }
    }

    /// The columns `parts` take drawn one after another with a space between them.
    static func width(of parts: [AccessoryPart]) -> Int {
        parts.isEmpty ? 0 : parts.reduce(parts.count - 1) { $0 + TerminalWidth.of($1.text) }
    }

    /// The cell's text: its first line, or `wholly` every line (for `lines`).
    static func text(of content: JSONValue, wholly: Bool = false) -> String {
        for key in ["text", "title", "name", "label"] {
            if let value = content[key]?.stringValue, !value.isEmpty { return wholly ? value : firstLine(value) }
        }
        return ""
    }

    static func secondaryText(of content: JSONValue, wholly: Bool = false) -> String {
        for key in ["secondaryText", "subtitle", "detail"] {
            if let value = content[key]?.stringValue, !value.isEmpty { return wholly ? value : firstLine(value) }
        }
        return ""
    }

    /// An image that is short text (an emoji, a glyph) is drawn; symbol names are not.
    static func image(of content: JSONValue) -> String? {
        guard let image = content["image"]?.stringValue, !image.isEmpty, !TerminalText.needsEscaping(image), TerminalWidth.of(image) <= 2
        else { return nil }
        return image
    }

    /// The text up to its first line break, with any other control character shown visibly
    /// (`TerminalText`): measured as it will be drawn.
    private static func firstLine(_ text: String) -> String {
        TerminalText.visible(String(text.prefix { $0 != "\n" && $0 != "\r" }))
    }

    /// The columns one outline level indents a cell by (UIKit's `indentationWidth`).
    public static let indentationWidth = 2

    /// Draws `cell` into `frame` (viewport coordinates; clipped to the canvas). An outline item's cell
    /// (`indentationLevel`) starts `indentationWidth` columns further per level, at most half the frame
    /// away; `isCursor` marks the view's cursor.
    /// Draws a supplementary view anchored to an item (a badge) over it: its text in parentheses when
    /// they fit, centred in the frame, bold, in its text colour (red when it has none). A badge
    /// configured with empty text is hidden (the seeds' badge with a count of 0); one that failed is "⚠".
    public static func drawBadge(_ cell: JSONValue, in frame: Frame, on canvas: inout Canvas) {
        let content = cell["content"] ?? .null
        let text = cell["error"] != nil && cell["content"] == nil ? "⚠" : lines(Self.text(of: content), properties: content["textProperties"], width: .max).first ?? ""
        guard !text.isEmpty else { return }
        let width = TerminalWidth.of(text)
        let label = width + 2 <= frame.width ? "(\(text))" : text
        let labelWidth = TerminalWidth.of(label)
        var style = style(content["textProperties"], base: TextStyle(bold: true))
        if style.foreground == nil { style.foreground = colorCode("systemRed") }
        canvas.draw(label, x: frame.x + max(0, (frame.width - labelWidth) / 2), y: frame.y + (frame.height - 1) / 2, maxWidth: frame.width, style: style)
    }

    public static func draw(_ cell: JSONValue, in frame: Frame, on canvas: inout Canvas, isCursor: Bool = false) {
        let content = cell["content"] ?? .null
        let type = content["type"]?.stringValue ?? ""
        let state = cell["state"] ?? [:]
        let indent = min(max(0, cell["indentationLevel"]?.intValue ?? 0) * indentationWidth, frame.width / 2)
        var x = frame.x + indent
        var available = frame.width - indent
        // A frame taller than the content needs (a group's absolute height) draws the cell as a card.
        let isCard = frame.height >= 3 && type != "plugin:emoji" && frame.height > height(of: cell, width: frame.width)
        if isCard {
            canvas.box(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
            x += 2
            available -= 4
        }
        let textRow = isCard ? frame.y + 1 : frame.y
        let text = text(of: content)
        let secondary = secondaryText(of: content)
        let (leading, trailing) = accessories(of: cell)

        switch type {
        case "plainHeader", "sidebarHeader", "prominentInsetGroupedHeader", "extraProminentInsetGroupedHeader":
            canvas.draw(text, x: x, y: textRow, maxWidth: available, style: TextStyle(bold: true))
        case "groupedHeader":
            canvas.draw(text.uppercased(), x: x + 1, y: textRow, maxWidth: available - 1, style: TextStyle(dim: true))
        case "plainFooter", "groupedFooter":
            canvas.draw(text, x: x + 1, y: textRow, maxWidth: available - 1, style: TextStyle(dim: true, italic: true))
        case "plugin:emoji":
            let glyph = TerminalText.visible(content["text"]?.stringValue ?? text)
            let width = TerminalWidth.of(glyph)
            let middle = frame.y + (frame.height - 1) / 2
            canvas.draw(glyph, x: frame.x + max(0, (frame.width - width) / 2), y: middle, maxWidth: frame.width)
        default:
            var column = x
            for part in leading { column = canvas.draw(part.text + " ", x: column, y: textRow, style: part.style) }
            if let image = image(of: content) { column = canvas.draw(image, x: column, y: textRow) + 1 }
            let trailingWidth = trailing.isEmpty ? 0 : width(of: trailing) + 1
            let end = x + available
            let textProperties = content["textProperties"]
            let secondaryProperties = content["secondaryTextProperties"]
            let textStyle = style(textProperties, base: TextStyle(bold: type.hasPrefix("plugin:") || type.hasPrefix("sidebar") && type.contains("Header")))
            let secondaryStyle = style(secondaryProperties, base: TextStyle(dim: true))
            let lastRow = frame.maxY - (isCard ? 1 : 0)
            if type == "valueCell" && !secondary.isEmpty {
                // Text at the leading edge, secondary text right-aligned before the accessories.
                let secondaryLine = lines(secondary, properties: nil, width: .max)[0]
                let secondaryWidth = min(TerminalWidth.of(secondaryLine), max(0, end - trailingWidth - column - 2))
                let textLine = lines(text, properties: ["transform": textProperties?["transform"] ?? .null], width: .max)[0]
                canvas.draw(textLine, x: column, y: textRow, maxWidth: max(0, end - trailingWidth - column - secondaryWidth - 1), style: textStyle)
                canvas.draw(secondaryLine, x: end - trailingWidth - secondaryWidth, y: textRow, maxWidth: secondaryWidth, style: secondaryStyle)
            } else {
                let textWidth = max(1, end - trailingWidth - column)
                var row = textRow
                for line in lines(Self.text(of: content, wholly: true), properties: textProperties, width: textWidth) where row < lastRow || row == textRow {
                    canvas.draw(line, x: column, y: row, maxWidth: textWidth, style: textStyle)
                    row += 1
                }
                let secondaryLines = secondary.isEmpty ? [] : lines(Self.secondaryText(of: content, wholly: true), properties: secondaryProperties, width: max(1, end - column))
                if !secondaryLines.isEmpty && row < lastRow {
                    for line in secondaryLines where row < lastRow {
                        canvas.draw(line, x: column, y: row, maxWidth: max(0, end - column), style: secondaryStyle)
                        row += 1
                    }
                } else if !secondary.isEmpty && type != "cell" && type != "sidebarCell" {
                    // No room below: after the text, as UIKit does when it is wide enough.
                    let after = TerminalWidth.of(text) + column + 2
                    if after < end - trailingWidth - 2 {
                        canvas.draw(secondary, x: after, y: textRow, maxWidth: end - trailingWidth - after, style: secondaryStyle)
                    }
                }
            }
            var trailingColumn = end - trailingWidth + 1
            for (index, part) in trailing.enumerated() {
                if index > 0 { trailingColumn = canvas.draw(" ", x: trailingColumn, y: textRow, style: trailing[index - 1].style) }
                trailingColumn = canvas.draw(part.text, x: trailingColumn, y: textRow, style: part.style)
            }
        }
        if state["selected"] == true || state["highlighted"] == true {
            canvas.restyle(x: frame.x, y: frame.y, width: frame.width, height: frame.height) { $0.reverse = true }
        }
        if isCursor {
            canvas.restyle(x: frame.x, y: frame.y, width: frame.width, height: frame.height) {
                $0.bold = true
                $0.underline = true
            }
        }
        if let error = cell["error"]?["code"]?.stringValue {
            canvas.draw("⚠ \(error)", x: x, y: textRow, maxWidth: available, style: TextStyle(dim: true))
        }
    }
}
