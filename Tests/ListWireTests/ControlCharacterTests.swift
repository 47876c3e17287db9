import ListWire
import Testing

@Suite("Control characters in identifiers")
struct ControlCharacterTests {
    @Test func findsC0DelAndC1AtTheirByteOffsets() {
        #expect(ControlCharacters.first(in: "plain") == nil)
        #expect(ControlCharacters.first(in: "감기 ✓ é") == nil, "letters outside ASCII are not controls")
        #expect(ControlCharacters.first(in: "a\u{1B}[2J")?.offset == 1)
        #expect(ControlCharacters.first(in: "bell\u{07}")?.scalar == "\u{07}")
        #expect(ControlCharacters.first(in: "x\u{7F}")?.offset == 1)
        let c1 = ControlCharacters.first(in: "é\u{9B}31m")
        #expect(c1?.scalar == "\u{9B}" && c1?.offset == 2, "CSI (U+009B) after a two-byte letter")
        #expect(ControlCharacters.first(in: "\u{A0}") == nil, "U+00A0 (C2 A0) is not a control")
        #expect(ControlCharacters.first(in: "tab\there")?.offset == 3)
    }

    @Test func errorNamesKindCodePointAndEscapesTheIdentifier() throws {
        let error = try #require(ControlCharacters.error("item", "\u{1B}]52;c;aGk=\u{07}"))
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("item identifier"))
        #expect(error.message.contains("U+001B at byte 0"))
        #expect(error.message.contains("\\u001b]52;c;aGk=\\u0007"))
        #expect(!error.message.unicodeScalars.contains { $0.value < 0x20 })
        #expect(ControlCharacters.error("item", "fine") == nil)
    }

    @Test func escapingKeepsEverythingElse() {
        #expect(ControlCharacters.escaped("a\u{1B}b\u{9B}c 감기") == "a\\u001bb\\u009bc 감기")
    }

    /// The word-at-a-time scan finds what the byte-by-byte one finds, wherever the control character
    /// is (in any of the eight lanes, across word boundaries, after multi-byte letters).
    @Test func theFastScanAgreesWithTheByteScan() {
        let pieces = ["a", "Z", " ", "~", "é", "감", "✓", "\u{1B}", "\u{7F}", "\u{85}", "\u{9F}", "\u{A0}", "\n", "\u{0}", "\u{1F}", "\u{C2}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...30, using: &generator) {
                // Mostly printable ASCII, as identifiers are.
                text += Int.random(in: 0..<4, using: &generator) == 0 ? pieces.randomElement(using: &generator)! : "x"
            }
            let expected = ControlCharacters.firstOffset(inUTF8: Array(text.utf8))
            #expect(ControlCharacters.first(in: text)?.offset == expected, "\(Array(text.utf8))")
        }
    }
}
