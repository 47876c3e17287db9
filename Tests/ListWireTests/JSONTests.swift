import DiffableCore
import ListWire
import TestSupport
import Testing

@Suite("JSON parser and writer")
struct JSONTests {
    static let valid: [(String, JSONValue)] = [
        ("null", .null), ("true", true), (" false ", false), ("0", 0), ("-12", -12), ("1.5", 1.5), ("-0.25e2", -25.0),
        ("1E3", 1000.0), ("9223372036854775807", .int(Int.max)), ("9223372036854775808", 9_223_372_036_854_775_808.0),
        (#""""#, ""), (#""a\"b\\c\/d\b\f\n\r\t""#, "a\"b\\c/d\u{8}\u{c}\n\r\t"), (#""\u00e9\u4e2d""#, "é中"),
        (#""\ud83d\ude00""#, "😀"), ("\"😀 감기\"", "😀 감기"), ("[]", []), ("{}", [:]), ("[1,[2,[3]]]", [1, [2, [3]]]),
        (#"{"a":{"b":[true,null]},"c":"d"}"#, ["a": ["b": [true, nil]], "c": "d"]), ("\r\n\t [ 1 , 2 ] \n", [1, 2]),
    ]

    static let invalid: [(String, String)] = [
        ("", "unexpected end"), ("nul", "literal"), ("tru", "literal"), ("[1,]", "unexpected"), ("{\"a\":1,}", "string key"),
        ("{\"a\" 1}", "':'"), ("{\"a\":1 \"b\":2}", "','"), ("[1 2]", "','"), ("01", "after the JSON value"),
        ("1.", "number"), ("-", "number"), (".5", "unexpected"), ("1e", "number"), ("+1", "unexpected"),
        ("1e999", "out of range"), ("\"abc", "unterminated"), ("\"a\u{01}b\"", "control"), (#""\x""#, "escape"),
        (#""\u12""#, "\\u"), (#""\ud800""#, "surrogate"), (#""\udc00x""#, "surrogate"), (#""\ud800\u0041""#, "surrogate"),
        ("{\"a\":1,\"a\":2}", "duplicate key \"a\""), ("[1] x", "after the JSON value"), ("{1:2}", "string key"),
        ("'a'", "unexpected"),
    ]

    @Test func acceptsValidJSON() throws {
        for (text, expected) in Self.valid {
            #expect(try JSONParser.parse(text) == expected, "\(text)")
        }
    }

    @Test func rejectsInvalidJSONWithAReason() {
        for (text, reason) in Self.invalid {
            do {
                let value = try JSONParser.parse(text)
                Issue.record("accepted \(text) as \(value)")
            } catch {
                #expect(error.reason.contains(reason), "\(text): \(error)")
            }
        }
    }

    /// Strings are scanned eight bytes at a time: a quote, a backslash, a control character or a
    /// non-ASCII byte at every position of the first words must be found where it is.
    @Test func stringsWithASpecialByteAnywhere() throws {
        for length in 0..<20 {
            for position in 0..<max(length, 1) {
                var plain = Array(repeating: UInt8(ascii: "a"), count: length)
                func parsed(_ inner: [UInt8]) throws -> JSONValue { try JSONParser.parse([0x22] + inner + [0x22]) }
                #expect(try parsed(plain) == .string(String(repeating: "a", count: length)))
                guard position < length else { continue }
                plain[position] = UInt8(ascii: "\\")
                var escaped = plain
                escaped.insert(UInt8(ascii: "n"), at: position + 1)
                var expected = Array(repeating: UInt8(ascii: "a"), count: length)
                expected[position] = 0x0A
                #expect(try parsed(escaped) == .string(String(decoding: expected, as: UTF8.self)))
                plain[position] = 0x1F
                #expect(throws: JSONParseError.self) { try parsed(plain) }
                plain[position] = 0xFF
                #expect { try parsed(plain) } throws: { ($0 as? JSONParseError)?.reason.contains("UTF-8") == true }
                var accented = Array(repeating: UInt8(ascii: "a"), count: length)
                accented.replaceSubrange(position..<position + 1, with: Array("é".utf8))
                #expect(try parsed(accented) == .string(String(decoding: accented, as: UTF8.self)))
                var quoted = Array(repeating: UInt8(ascii: "a"), count: length)
                quoted[position] = 0x22
                #expect(throws: JSONParseError.self) { try parsed(quoted) }
            }
        }
    }

    @Test func rejectsInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0x5C, 0x6E, 0xFE, 0x22]] {
            #expect { try JSONParser.parse(bytes) } throws: { ($0 as? JSONParseError)?.reason.contains("UTF-8") == true }
        }
    }

    @Test func boundsNesting() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect { try JSONParser.parse(deep) } throws: { ($0 as? JSONParseError)?.reason.contains("nesting") == true }
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        _ = try JSONParser.parse(fine)
        // Far deeper than any stack would take: refused, not crashed.
        let abusive = String(repeating: "{\"a\":", count: 200_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(abusive) }
    }

    @Test func writerOutputParsesBack() throws {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            let value = randomValue(&random, depth: 0)
            let bytes = value.jsonBytes
            #expect(try JSONParser.parse(bytes) == value)
            #expect(!bytes.contains(0x0A), "compact output never contains a newline")
        }
    }

    /// Commas stay right past the 64 levels the writer tracks in one word: every level holds two
    /// elements, and the second follows the deeper first one.
    @Test func writerNestsDeeply() throws {
        for depth in [63, 64, 65, 130] {
            var value: JSONValue = [1, 2]
            for level in 0..<depth { value = [value, .int(level)] }
            #expect(try JSONParser.parse(value.jsonBytes) == value)
            var object: JSONValue = ["a": 1, "b": 2]
            for level in 0..<depth { object = ["x": object, "y": .int(level)] }
            #expect(try JSONParser.parse(object.jsonBytes) == object)
        }
    }

    /// Members come out sorted by key, for small objects (sorted on the stack) and large ones alike.
    @Test func writerSortsMembers() throws {
        var random = SeededGenerator(seed: 11)
        for count in [0, 1, 2, 3, 15, 16, 17, 40] {
            var members: [String: JSONValue] = [:]
            while members.count < count {
                let key = String((0..<Int.random(in: 1...6, using: &random)).map { _ in "abcé😀\"".randomElement(using: &random)! })
                members[key] = .int(Int.random(in: 0...9, using: &random))
            }
            var writer = JSONWriter()
            writer.value(.object(members))
            var expected = JSONWriter()
            expected.beginObject()
            for key in members.keys.sorted() {
                expected.key(key)
                expected.value(members[key]!)
            }
            expected.endObject()
            #expect(writer.bytes == expected.bytes, "\(count) members")
            #expect(try JSONParser.parse(writer.bytes) == .object(members))
        }
    }

    @Test func writerEnvelopes() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("id")
        writer.int(7)
        writer.key("ok")
        writer.bool(true)
        writer.key("result")
        writer.beginObject()
        writer.key("list")
        writer.beginArray()
        writer.string("a\n")
        writer.beginObject()
        writer.endObject()
        writer.double(0.5)
        writer.null()
        writer.endArray()
        writer.endObject()
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"id":7,"ok":true,"result":{"list":["a\n",{},0.5,null]}}"#)
    }

    /// The writer stores in place: it grows past its capacity, its bytes can be read mid-line and the
    /// writing goes on (what was read stays as it was), and a reused buffer (short or long) starts empty.
    @Test func writerGrowsAndIsReadMidLine() {
        var writer = JSONWriter(capacity: 1)
        writer.beginArray()
        let long = String(repeating: "x", count: 5_000)
        writer.string(long)
        writer.key(literal: "ignored-in-arrays-but-written")
        let middle = writer.bytes
        #expect(middle.count == writer.count)
        #expect(middle.count == 1 + 5_002 + 33)
        writer.int(-1234567890)
        writer.endArray()
        #expect(Array(writer.bytes.prefix(middle.count)) == middle, "the bytes read before are kept")
        #expect(middle.last == UInt8(ascii: ":"), "what was read is not changed by later writes")
        #expect(writer.bytes.suffix(12) == Array(",-1234567890]".utf8).suffix(12))
        for previous in [[UInt8](), Array(repeating: 7, count: 10), [UInt8](repeating: 9, count: 100_000)] {
            var reused = JSONWriter(reusing: previous)
            #expect(reused.count == 0)
            reused.beginObject()
            reused.key(literal: "a")
            reused.string("q\"\u{01}")
            reused.endObject()
            #expect(String(decoding: reused.bytes, as: UTF8.self) == #"{"a":"q\"\u0001"}"#)
        }
    }

    private func randomValue(_ random: inout SeededGenerator, depth: Int) -> JSONValue {
        let strings = ["", "a", "감기", "😀", "quote\"back\\slash", "ctl\u{01}\u{1F}\n", "é"]
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(Int.random(in: Int.min...Int.max, using: &random))
        case 3: return .double(Double.random(in: -1e12...1e12, using: &random))
        case 4: return .string(strings.randomElement(using: &random)! + String(Int.random(in: 0..<9, using: &random)))
        case 5: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                members[strings.randomElement(using: &random)! + String(Int.random(in: 0..<9, using: &random))] = randomValue(&random, depth: depth + 1)
            }
            return .object(members)
        }
    }
}
