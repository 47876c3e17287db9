import DiffableCore
import ListViewCore
import ListWire
import Testing

/// Control characters from data never reach a terminal: shown visibly in text, JSON escapes in JSON.
@Suite("Terminal-safe text")
struct TerminalTextTests {
    static let osc52 = "copy\u{1B}]52;c;ZWNobyBwd25lZA==\u{07}me"

    @Test func controlCharactersAreShownVisibly() {
        #expect(TerminalText.visible(Self.osc52) == "copy\\u001b]52;c;ZWNobyBwd25lZA==\\u0007me")
        #expect(TerminalText.visible("a\u{9B}2Jb\u{7F}c\u{0}") == "a\\u009b2Jb\\u007fc\\u0000")
        #expect(TerminalText.visible("two\nlines\tand\r") == "two\\nlines\\tand\\r")
        #expect(TerminalText.visible("two\nlines\t\u{1B}", keepingLineBreaks: true) == "two\nlines\t\\u001b")
        #expect(TerminalText.visible("감기 🐶 é\u{301} \u{A0}¡") == "감기 🐶 é\u{301} \u{A0}¡", "printable text, C1's UTF-8 neighbours included, is unchanged")
        #expect(!TerminalText.needsEscaping("ok \u{A0}\u{100}"))
    }

    @Test func jsonLinesKeepTheirStringsExactly() throws {
        let value: JSONValue = ["id": .string(Self.osc52), "csi": "\u{9B}31m\u{7F}", "n": 1, "keys\u{1B}": ["\u{85}"]]
        let line = TerminalText.jsonLine(value.jsonBytes)
        #expect(!line.contains(0x1B) && !line.contains(0x07) && !line.contains(0x7F))
        #expect(!zip(line, line.dropFirst()).contains { $0 == 0xC2 && (0x80...0x9F).contains($1) }, "no C1 left")
        #expect(try JSONParser.parse(line) == value, "the same value, exactly")
        // A line listd wrote without anything to escape is returned as it is.
        let plain = JSONValue.object(["text": "감기"]).jsonBytes
        #expect(TerminalText.jsonLine(plain) == plain)
        // Raw C0 inside a string (not what listd writes) becomes valid JSON too.
        let raw = Array("{\"a\":\"x\u{1B}y\"}".utf8)
        #expect(try JSONParser.parse(TerminalText.jsonLine(raw)) == ["a": "x\u{1B}y"])
    }

    @Test func aCanvasDrawsControlsVisibly() {
        var canvas = Canvas(width: 40, height: 1)
        canvas.draw("t\u{1B}]52;c;QQ==\u{07}!", x: 0, y: 0)
        #expect(canvas.plainLines == ["t\\u001b]52;c;QQ==\\u0007!"])
        let frame = canvas.terminalFrame
        // The frame's own escapes are cursor moves and SGR; none comes from the text.
        #expect(!frame.contains("\u{07}") && !frame.contains("\u{1B}]"))
        #expect(frame.unicodeScalars.filter { $0 == "\u{1B}" }.count == 3, "cursor move, style, reset")
    }

    /// Names that look alike never print alike: invisible and direction-changing characters, and Cyrillic
    /// or Greek letters among Latin ones, are written as escapes; names in one script, emoji sequences and
    /// plain ASCII are shown as they are.
    @Test func namesThatLookAlikePrintApart() {
        #expect(TerminalText.name("home") == "home")
        #expect(TerminalText.name("h\u{43E}me") == #"h\u{43e}me"#, "a Cyrillic o among Latin letters")
        #expect(TerminalText.name("home\u{200B}") == #"home\u{200b}"#, "a zero-width space")
        #expect(TerminalText.name("\u{202E}emoh") == #"\u{202e}emoh"#, "a right-to-left override")
        #expect(TerminalText.name("x\u{1B}[2J") == #"x\u001b[2J"#, "controls as visible() writes them")
        #expect(TerminalText.name("дом") == "дом" && TerminalText.name("감기-상담") == "감기-상담", "one script")
        #expect(TerminalText.name("family-👨\u{200D}👩\u{200D}👧") == "family-👨\u{200D}👩\u{200D}👧", "a joiner inside an emoji")
        #expect(TerminalText.name("a\u{200D}b") == #"a\u{200d}b"#, "a joiner between letters")
        #expect(TerminalText.name("1\u{200D}👩") == #"1\u{200d}👩"#, "a keycap base is no pictograph")
        #expect(TerminalText.name("alice\u{FE00}") == #"alice\u{fe00}"#, "a variation selector after a letter")
        #expect(TerminalText.name("heart-❤\u{FE0F}") == "heart-❤\u{FE0F}", "emoji presentation after an emoji")
        #expect(TerminalText.name("home") != TerminalText.name("h\u{43E}me"))
    }
}
