import ListViewCore
import Testing

@Suite("Terminal widths")
struct TerminalWidthTests {
    @Test(arguments: [
        ("a", 1), ("한", 2), ("감기", 4), ("😀", 2), ("❤️", 2), ("👩‍⚕️", 2), ("😶‍🌫️", 2), ("🇰🇷", 2), ("e\u{301}", 1),
        ("ｱ", 1), ("Ａ", 2), ("中文", 4), ("›", 1), ("✓", 1), ("✅", 2), ("\u{200B}", 0), ("1️⃣", 2),
    ])
    func columns(text: String, expected: Int) {
        #expect(TerminalWidth.of(text) == expected, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func truncationCountsColumnsNotCharacters() {
        #expect(TerminalWidth.truncate("감기에 걸렸을때", to: 7) == "감기에…")
        #expect(TerminalWidth.truncate("hello", to: 5) == "hello")
        #expect(TerminalWidth.truncate("hello!", to: 5) == "hell…")
        #expect(TerminalWidth.of(TerminalWidth.truncate("😀😀😀", to: 4)) <= 4)
    }

    @Test func theCanvasPlacesWideCharactersAndClips() {
        var canvas = Canvas(width: 6, height: 2)
        canvas.draw("한글ab", x: 0, y: 0)
        canvas.draw("😀x", x: 5, y: 1)  // the emoji does not fit: its visible half is blank
        #expect(canvas.plainLines == ["한글ab", ""])
        canvas.draw("xy", x: 0, y: 1, clip: 1..<6)
        #expect(canvas.plainLines[1] == " y")
    }
}
