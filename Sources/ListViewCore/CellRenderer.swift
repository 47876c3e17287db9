import DiffableCore
import ListLayout

/// Draws configured cells (as `dequeue` returns them) in a terminal: the list styles, headers and
/// footers, accessories, selection, and plugin content (the example plugins' types, and any other
/// through its text fields).
public enum CellRenderer {
    /// The rows a cell needs at `width` columns: two for styles with secondary text below the text
    /// (`cell` too, as UIKit's `.cell()` stacks a secondary text under the text when it has one).
    public static func height(of cell: JSONValue) -> Int {
        let content = cell["content"] ?? .null
        let type = content["type"]?.stringValue ?? ""
        let secondary = secondaryText(of: content)
        if type == "subtitleCell" || type == "sidebarSubtitleCell" || type == "cell" { return secondary.isEmpty ? 1 : 2 }
        if type.hasPrefix("plugin:") && type != "plugin:emoji" && !secondary.isEmpty { return 2 }
        return 1
    }

    /// The accessories a cell shows, as text for its trailing edge (and the outline disclosure for its leading edge).
    static func accessories(of cell: JSONValue) -> (leading: String, trailing: String) {
        var leading = ""
        var trailing: [String] = []
        for accessory in cell["accessories"]?.arrayValue ?? [] {
            switch accessory["type"]?.stringValue {
            case "disclosureIndicator": trailing.append("›")
            case "outlineDisclosure": leading = accessory["expanded"] == true ? "⌄ " : "› "
            case "checkmark": if accessory["hidden"] != true { trailing.append("✓") }
            case "delete": leading = "⊖ " + leading
            case "reorder": trailing.append("≡")
            case "detail": trailing.append("ⓘ")
            case "label": if let text = accessory["text"]?.stringValue, !text.isEmpty { trailing.append(TerminalText.visible(firstLine(text))) }
            default: break
            }
        }
        return (leading, trailing.joined(separator: " "))
    }

    static func text(of content: JSONValue) -> String {
        for key in ["text", "title", "name", "label"] {
            if let value = content[key]?.stringValue, !value.isEmpty { return firstLine(value) }
        }
        return ""
    }

    static func secondaryText(of content: JSONValue) -> String {
        for key in ["secondaryText", "subtitle", "detail"] {
            if let value = content[key]?.stringValue, !value.isEmpty { return firstLine(value) }
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
    public static func draw(_ cell: JSONValue, in frame: Frame, on canvas: inout Canvas, isCursor: Bool = false) {
        let content = cell["content"] ?? .null
        let type = content["type"]?.stringValue ?? ""
        let state = cell["state"] ?? [:]
        let indent = min(max(0, cell["indentationLevel"]?.intValue ?? 0) * indentationWidth, frame.width / 2)
        var x = frame.x + indent
        var available = frame.width - indent
        let isCard = frame.height >= 3 && type != "plugin:emoji"
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
            if !leading.isEmpty { column = canvas.draw(leading, x: column, y: textRow, style: TextStyle(dim: true)) }
            if let image = image(of: content) { column = canvas.draw(image, x: column, y: textRow) + 1 }
            let trailingWidth = trailing.isEmpty ? 0 : TerminalWidth.of(trailing) + 1
            let end = x + available
            let textStyle = TextStyle(bold: type.hasPrefix("plugin:") || type.hasPrefix("sidebar") && type.contains("Header"))
            if type == "valueCell" && !secondary.isEmpty {
                // Text at the leading edge, secondary text right-aligned before the accessories.
                let secondaryWidth = min(TerminalWidth.of(secondary), max(0, end - trailingWidth - column - 2))
                canvas.draw(text, x: column, y: textRow, maxWidth: max(0, end - trailingWidth - column - secondaryWidth - 1), style: textStyle)
                canvas.draw(secondary, x: end - trailingWidth - secondaryWidth, y: textRow, maxWidth: secondaryWidth, style: TextStyle(dim: true))
            } else {
                canvas.draw(text, x: column, y: textRow, maxWidth: max(0, end - trailingWidth - column), style: textStyle)
                if !secondary.isEmpty && textRow + 1 < frame.maxY - (isCard ? 1 : 0) {
                    canvas.draw(secondary, x: column, y: textRow + 1, maxWidth: max(0, end - column), style: TextStyle(dim: true))
                } else if !secondary.isEmpty && type != "cell" && type != "sidebarCell" {
                    // No room below: after the text, as UIKit does when it is wide enough.
                    let after = TerminalWidth.of(text) + column + 2
                    if after < end - trailingWidth - 2 {
                        canvas.draw(secondary, x: after, y: textRow, maxWidth: end - trailingWidth - after, style: TextStyle(dim: true))
                    }
                }
            }
            if !trailing.isEmpty { canvas.draw(trailing, x: end - trailingWidth + 1, y: textRow, style: TextStyle(dim: true)) }
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
