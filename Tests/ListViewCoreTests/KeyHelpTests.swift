import Foundation
import ListViewCore
import Testing

@Suite("listview's keys: the status line's hints and the ? list")
struct KeyHelpTests {
    static let longInfo = "home · v12 · view listview-123456 · 20 items · 5 visible · cells 5 created, 0 reused"

    /// At 80 and 100 columns every hint is on the status line, whole (the info before them is cut).
    @Test(arguments: [80, 100, 160])
    func everyHintFits(width: Int) {
        let line = KeyHelp.statusLine(Self.longInfo, width: width)
        #expect(TerminalWidth.of(line) == width, "\(line)")
        #expect(line.hasSuffix(KeyHelp.fullHints + " "), "\(line)")
        for hint in ["j/k", "h/l", "␣", " o ", "J/K", " r ", "? keys", "q quit"] {
            #expect(line.contains(hint), "\(hint) in \(line)")
        }
        #expect(line.hasPrefix(" home · v12 · view"))
        #expect(width < 120 ? line.contains("…") : !line.contains("…"), "\(line)")
    }

    /// Narrower, the short hints (? shows the rest); a message of the moment keeps its room with them.
    @Test func narrowLinesAndMessagesKeepTheShortHints() {
        for width in [36, 50, 69] {
            let line = KeyHelp.statusLine(Self.longInfo, width: width)
            #expect(TerminalWidth.of(line) == width && line.hasSuffix(" ? keys · q quit "), "\(line)")
        }
        let line = KeyHelp.statusLine("home · " + KeyHelp.escapeMessage, width: 80, brief: true)
        #expect(line.contains("home · Esc does not quit: q quits, ? shows the keys") && line.hasSuffix(" ? keys · q quit "), "\(line)")
        #expect(KeyHelp.statusLine("home · v0", width: 30).hasPrefix(" home · v0"))
    }

    /// `?` lists every key and what it does, at 80 columns and at 100; the last message is shown whole.
    @Test(arguments: [80, 100])
    func theOverlayListsEveryKey(width: Int) {
        var canvas = Canvas(width: width, height: 24)
        canvas.draw(String(repeating: "감기", count: width / 4), x: 0, y: 3)
        let message = "the layout asks for header views but no supplementary provider gives them: listctl cell-provider g --element-kind header FILE"
        KeyHelp.drawOverlay(on: &canvas, rows: 23, message: message)
        let text = canvas.plainLines.joined(separator: "\n")
        #expect(text.contains("listview keys"))
        for key in KeyHelp.keys {
            #expect(text.contains(key.keys) && text.contains(key.action), "\(key) in\n\(text)")
        }
        #expect(text.replacingOccurrences(of: "│", with: "").split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
            .contains("listctl cell-provider g --element-kind header FILE"), "\(text)")
        // Wide characters the box covers in part leave spaces: no row is wider than the canvas.
        for line in canvas.plainLines { #expect(TerminalWidth.of(line) <= width, "\(line)") }
    }

    @Test func drawingOverHalfAWideCharacterLeavesASpace() {
        var canvas = Canvas(width: 6, height: 1)
        canvas.draw("한글한", x: 0, y: 0)
        canvas.draw("|", x: 1, y: 0)  // over the second half of 한
        canvas.draw("x", x: 4, y: 0)  // over the first half of the last 한
        #expect(canvas.plainLines == [" |글x"])
        #expect(TerminalWidth.of(canvas.plainLines[0]) == 5)
    }
}
