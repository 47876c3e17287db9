import DiffableCore
import ListWire
import Testing

/// Invisible, direction-changing and lookalike characters written as escapes: visibly for people, as
/// JSON escapes in JSON (the same value, none of them raw).
@Suite("Invisible and lookalike characters escaped")
struct InvisibleCharacterEscapeTests {
    @Test func textShowsInvisibleCharactersButKeepsEmoji() {
        #expect(ControlCharacters.escapingInvisible("invoice\u{202E}gnp.exe") == #"invoice\u{202e}gnp.exe"#)
        #expect(ControlCharacters.escapingInvisible("a\u{200B}\u{2066}\u{061C}\u{FEFF}") == #"a\u{200b}\u{2066}\u{61c}\u{feff}"#)
        let family = "\u{1F469}\u{200D}\u{1F4BB} \u{2764}\u{FE0F}"
        #expect(ControlCharacters.escapingInvisible(family) == family)
        #expect(ControlCharacters.escapingInvisible("plain ascii") == "plain ascii")
        #expect(ControlCharacters.escapingInvisible("h\u{43E}me") == "h\u{43E}me", "lookalikes are for names (TerminalText.name)")
    }

    @Test func jsonGetsEscapesThatDecodeToTheSameValue() throws {
        let value: JSONValue = [
            "name": "invoice\u{202E}gnp.exe", "home": "h\u{43E}me", "city": "\u{41C}\u{43E}\u{441}\u{43A}\u{432}\u{430}",
            "tag": "x\u{E0001}y", "emoji": "\u{1F469}\u{200D}\u{1F4BB}", "escaped": "\u{43E}\n\u{43E}\"\u{43E}",
            "h\u{43E}st": "key",
        ]
        let escaped = ControlCharacters.escapingInvisibleAndLookalikes(inJSON: value.jsonBytes)
        let text = String(decoding: escaped, as: UTF8.self)
        #expect(try JSONParser.parse(escaped) == value)
        for expected in [#""invoice\u202egnp.exe""#, #""h\u043eme""#, #""x\udb40\udc01y""#, #"\u200d"#, #""h\u043est""#] {
            #expect(text.contains(expected), "\(expected): \(text)")
        }
        // A word wholly in Cyrillic stays, and so does one whose only Latin letters are escapes (`\n`).
        #expect(text.contains("\"\u{41C}\u{43E}\u{441}\u{43A}\u{432}\u{430}\"") && text.contains("\u{43E}\\n\u{43E}"), "\(text)")
        #expect(!text.unicodeScalars.contains { ControlCharacters.isInvisible($0) })
    }

    @Test func jsonOfASCIIOrMalformedUTF8IsCopied() {
        let ascii = Array(#"{"a":"b"}"#.utf8)
        #expect(ControlCharacters.escapingInvisibleAndLookalikes(inJSON: ascii) == ascii)
        let malformed: [UInt8] = Array(#"{"a":""#.utf8) + [0xE2, 0x80] + Array(#"","b":""#.utf8) + [0xFF, 0xE2, 0x80, 0xAE] + Array(#""}"#.utf8)
        let expected: [UInt8] = Array(#"{"a":""#.utf8) + [0xE2, 0x80] + Array(#"","b":""#.utf8) + [0xFF] + Array(#"\u202e"}"#.utf8)
        #expect(ControlCharacters.escapingInvisibleAndLookalikes(inJSON: malformed) == expected)
    }
}
