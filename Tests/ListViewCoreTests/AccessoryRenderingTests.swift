import DiffableCore
import ListLayout
import ListViewCore
import Testing

/// What a terminal view draws of each accessory kind (UIKit's placement: editing controls and the
/// outline disclosure leading, the rest trailing), and of `hidden`, `displayed`, `tintColor` and
/// `reservedLayoutWidth`.
@Suite("Cell renderer: accessories")
struct AccessoryRenderingTests {
    func line(_ accessories: JSONValue, state: JSONValue = [:], width: Int = 20) -> (plain: String, colored: String) {
        let cell: JSONValue = ["item": "a", "content": ["type": "cell", "text": "Milk"], "accessories": accessories, "state": state]
        var canvas = Canvas(width: width, height: 1)
        CellRenderer.draw(cell, in: Frame(x: 0, y: 0, width: width, height: 1), on: &canvas)
        return (canvas.plainLines[0], canvas.terminalFrame(colors: true))
    }

    /// "Milk" with `glyph` at the trailing edge of 20 columns.
    func trailing(_ glyph: String) -> String {
        "Milk" + String(repeating: " ", count: 20 - 4 - TerminalWidth.of(glyph)) + glyph
    }

    @Test func everyKindDraws() {
        let cases: [(JSONValue, String)] = [
            (["type": "disclosureIndicator", "displayed": "always"], trailing("›")),
            (["type": "outlineDisclosure", "displayed": "always", "expanded": true], "⌄ Milk"),
            (["type": "outlineDisclosure", "displayed": "always"], "› Milk"),
            (["type": "checkmark", "displayed": "always"], trailing("✓")),
            (["type": "delete", "displayed": "always"], "⊖ Milk"),
            (["type": "insert", "displayed": "always"], "⊕ Milk"),
            (["type": "reorder", "displayed": "always"], trailing("≡")),
            (["type": "multiselect", "displayed": "always"], "○ Milk"),
            (["type": "label", "displayed": "always", "text": "12"], trailing("12")),
            (["type": "detail", "displayed": "always"], trailing("ⓘ")),
            (["type": "popUpMenu", "displayed": "always", "menu": ["Low", "High"], "selectedElement": "High"], trailing("High ⌃⌄")),
            (["type": "popUpMenu", "displayed": "always", "menu": ["Low"]], trailing("⌃⌄")),
            (["type": "customView", "displayed": "always", "text": "★"], trailing("★")),
            (["type": "customView", "displayed": "always", "text": "★", "placement": "leading"], "★ Milk"),
        ]
        for (accessory, expected) in cases {
            #expect(line([accessory]).plain == expected, "\(accessory)")
        }
        #expect(line([["type": "multiselect", "displayed": "always"]], state: ["selected": true]).plain == "◉ Milk")
        #expect(line([["type": "delete", "displayed": "always"], ["type": "outlineDisclosure", "displayed": "always"]]).plain == "⊖ › Milk", "editing controls first")
    }

    /// The case: a checkmark shows whether or not the cell is selected; `hidden` keeps its place blank.
    @Test func aCheckmarkShowsUnlessHiddenAndAHiddenOneKeepsItsPlace() {
        #expect(line([["type": "checkmark", "displayed": "always"]]).plain == trailing("✓"))
        let hidden = line([["type": "checkmark", "displayed": "always", "hidden": true], ["type": "disclosureIndicator", "displayed": "always"]])
        #expect(!hidden.plain.contains("✓"))
        let shown = line([["type": "checkmark", "displayed": "always"], ["type": "disclosureIndicator", "displayed": "always"]])
        #expect(shown.plain == trailing("✓ ›"))
        #expect(hidden.plain == trailing("  ›").trimmingSuffixSpaces, "the checkmark's place stays: \(hidden.plain)")
        #expect(line([["type": "delete", "displayed": "always", "hidden": true]]).plain == "  Milk", "a hidden leading accessory keeps its place too")
    }

    @Test func displayedFollowsTheEditingState() {
        let accessories: JSONValue = [
            ["type": "delete", "displayed": "whenEditing"], ["type": "reorder", "displayed": "whenEditing"],
            ["type": "disclosureIndicator", "displayed": "whenNotEditing"],
        ]
        #expect(line(accessories).plain == trailing("›"))
        #expect(line(accessories, state: ["editing": true]).plain == "⊖ Milk" + String(repeating: " ", count: 13) + "≡")
    }

    @Test func tintColourAndReservedWidth() {
        let tinted = line([["type": "checkmark", "displayed": "always", "tintColor": "systemGreen"]])
        #expect(tinted.colored.contains("\u{1B}[0;32m✓"), "green, not dim: \(tinted.colored.debugDescription)")
        let plain = line([["type": "checkmark", "displayed": "always"]])
        #expect(plain.colored.contains("\u{1B}[0;2m✓"), "dim by default")
        // 24 points: three columns, the glyph centred in them.
        #expect(line([["type": "checkmark", "displayed": "always", "reservedLayoutWidth": 24]]).plain == trailing(" ✓ ").trimmingSuffixSpaces)
        #expect(line([["type": "checkmark", "displayed": "always", "reservedLayoutWidth": "standard"]]).plain == trailing("✓"))
    }
}

extension String {
    /// The string without trailing spaces (as `Canvas.plainLines` gives rows).
    var trimmingSuffixSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
