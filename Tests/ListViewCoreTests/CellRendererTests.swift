import DiffableCore
import ListLayout
import ListViewCore
import Testing

/// What a terminal view draws of a cell's text properties: colours, weight and slant, transforms,
/// and `numberOfLines`.
@Suite("Cell renderer: text properties")
struct CellRendererTests {
    func draw(_ cell: JSONValue, width: Int = 30, height: Int = 3) -> Canvas {
        var canvas = Canvas(width: width, height: height)
        CellRenderer.draw(cell, in: Frame(x: 0, y: 0, width: width, height: height), on: &canvas)
        return canvas
    }

    @Test func systemColoursBecomeTheTerminalsAndNoColorDropsThem() {
        let cell: JSONValue = ["item": "a", "content": ["type": "cell", "text": "Alarm", "textProperties": ["color": "systemRed", "font": "headline"]]]
        let canvas = draw(cell, height: 1)
        #expect(canvas.terminalFrame(colors: true).contains("\u{1B}[0;1;31mA"), "bold (headline) and red")
        #expect(!canvas.terminalFrame(colors: false).contains(";31m"), "NO_COLOR: no colour")
        #expect(canvas.terminalFrame(colors: false).contains("\u{1B}[0;1mA"), "the weight stays")
        #expect(CellRenderer.colorCode("systemBlue") == 34 && CellRenderer.colorCode("systemGray3") == 90)
        #expect(CellRenderer.colorCode("systemGreen") == 32, "the README's prices")
        #expect(CellRenderer.colorCode("label") == nil, "the label colour is the terminal's own")
    }

    /// A badge: its text in parentheses over the card's corner, bold and red unless it has a colour;
    /// empty text draws nothing (the README's Garden); too narrow a frame drops the parentheses.
    @Test func badgesDrawTheirTextOverTheItem() {
        var canvas = Canvas(width: 10, height: 1)
        canvas.draw("──────────", x: 0, y: 0)
        CellRenderer.drawBadge(["elementKind": "badge", "item": "a", "content": ["type": "cell", "text": "3"]], in: Frame(x: 6, y: 0, width: 3, height: 1), on: &canvas)
        #expect(canvas.plainLines == ["──────(3)─"])
        #expect(canvas.terminalFrame(colors: true).contains("\u{1B}[0;1;31m(3)"), "bold red")
        CellRenderer.drawBadge(["elementKind": "badge", "item": "a", "content": ["type": "cell", "text": "12", "textProperties": ["color": "systemBlue"]]], in: Frame(x: 0, y: 0, width: 3, height: 1), on: &canvas)
        #expect(canvas.plainLines == ["12────(3)─"] && canvas.terminalFrame(colors: true).contains("\u{1B}[0;1;34m12"))
        var untouched = Canvas(width: 10, height: 1)
        CellRenderer.drawBadge(["elementKind": "badge", "item": "a", "content": ["type": "cell", "text": ""]], in: Frame(x: 0, y: 0, width: 3, height: 1), on: &untouched)
        #expect(untouched.plainLines == [""])
    }

    @Test func italicFontsAndSecondaryLabelColours() {
        let cell: JSONValue = ["item": "a", "content": ["type": "cell", "text": "Note", "textProperties": ["font": "body.italic", "color": "secondaryLabel"]]]
        #expect(draw(cell, height: 1).terminalFrame(colors: true).contains("\u{1B}[0;2;3mN"), "dim and italic")
    }

    @Test func numberOfLinesWrapsAndCountsInTheHeight() {
        let content: JSONValue = [
            "type": "subtitleCell", "text": "Title",
            "secondaryText": "one two three four five six seven eight nine ten eleven",
            "secondaryTextProperties": ["numberOfLines": 2],
        ]
        let cell: JSONValue = ["item": "a", "content": content]
        #expect(CellRenderer.height(of: cell, width: 24) == 3, "the text and two lines of secondary text")
        let lines = draw(cell, width: 24, height: 3).plainLines
        #expect(lines[0] == "Title")
        #expect(lines[1] == "one two three four five")
        #expect(lines[2] == "six seven eight nine te…", "cut short after two lines, within the width: \(lines)")
        let oneLine: JSONValue = ["item": "b", "content": ["type": "subtitleCell", "text": "Title", "secondaryText": "one two"]]
        #expect(CellRenderer.height(of: oneLine, width: 24) == 2, "one line each by default")
    }

    @Test func transformsApply() {
        let cell: JSONValue = ["item": "a", "content": ["type": "cell", "text": "mixed Case", "textProperties": ["transform": "uppercase"]]]
        #expect(draw(cell, height: 1).plainLines[0] == "MIXED CASE")
    }

    /// A cell in a frame taller than its content (a group's absolute height) is drawn as a card; a list
    /// cell whose content fills its frame is not.
    @Test func onlyTallerFramesAreCards() {
        let content: JSONValue = ["type": "subtitleCell", "text": "T", "secondaryText": "a b", "secondaryTextProperties": ["numberOfLines": 2]]
        let filled = draw(["item": "a", "content": content], width: 6, height: 3).plainLines
        #expect(!filled[0].contains("╭"), "\(filled)")
        let card = draw(["item": "a", "content": ["type": "cell", "text": "T"]], width: 10, height: 3).plainLines
        #expect(card[0].contains("╭"), "\(card)")
    }
}
