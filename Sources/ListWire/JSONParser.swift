import DiffableCore

/// Why a text is not acceptable JSON, with the byte offset where the parser gave up.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String

    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict JSON parser over UTF-8 bytes (RFC 8259), producing `JSONValue`.
///
/// Strict means: exactly one value with optional surrounding whitespace; strings must be valid UTF-8
/// with no raw control characters and no lone surrogate escapes; numbers follow the JSON grammar and
/// must be finite; an object may not repeat a key; nesting deeper than `maximumDepth` is refused (so
/// no input can exhaust the stack).
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"cmd":"ping","id":1}"#.utf8))
/// ```
public struct JSONParser {
    /// The deepest nesting of arrays and objects accepted by default.
    public static let defaultMaximumDepth = 512

    let bytes: UnsafeRawBufferPointer
    var position = 0
    let maximumDepth: Int
    private var scratch: [UInt8] = []

    init(bytes: UnsafeRawBufferPointer, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Parses one JSON text.
    ///
    /// - Complexity: O(n) for n bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.position != bytes.count { throw parser.error("unexpected data after the JSON value") }
        return value
    }

    /// Parses one JSON text from a byte array.
    public static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { buffer in
            do throws(JSONParseError) { return .success(try parse(buffer, maximumDepth: maximumDepth)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses one JSON text from a string.
    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    // MARK: Values

    func error(_ reason: String) -> JSONParseError { JSONParseError(offset: position, reason: reason) }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Unicode.Scalar(byte))'")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw error("invalid literal") }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] {
            throw error("invalid literal")
        }
        position += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maximumDepth { throw error("nesting deeper than \(maximumDepth) levels") }
        position += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            let keyOffset = position
            let key = try parseMemberName()
            let value = try parseValue(depth: depth)
            if members.updateValue(value, forKey: key) != nil {
                throw JSONParseError(offset: keyOffset, reason: "duplicate key \"\(key)\"")
            }
            guard try continuesAfterElement(closing: UInt8(ascii: "}")) else { return .object(members) }
        }
    }

    /// A member's name and its colon (whitespace after both skipped): the value is next.
    mutating func parseMemberName() throws(JSONParseError) -> String {
        guard current == UInt8(ascii: "\"") else { throw error("expected a string key") }
        let key = try parseString()
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
        position += 1
        skipWhitespace()
        return key
    }

    /// After a member or an element: `true` past a comma (another follows), `false` past `closing`.
    mutating func continuesAfterElement(closing: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        switch current {
        case UInt8(ascii: ","):
            position += 1
            skipWhitespace()
            return true
        case closing:
            position += 1
            return false
        default:
            throw error("expected ',' or '\(Unicode.Scalar(closing))'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maximumDepth { throw error("nesting deeper than \(maximumDepth) levels") }
        position += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue(depth: depth))
            guard try continuesAfterElement(closing: UInt8(ascii: "]")) else { return .array(elements) }
        }
    }

    // MARK: Strings

    mutating func parseString() throws(JSONParseError) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes. Eight bytes at a time while none is a quote, a backslash, a control
        // character or non-ASCII; then byte by byte (the word with the closing quote, and the rest of a
        // string with escapes or non-ASCII bytes).
        position = start + Self.plainASCIIPrefixLength(of: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        var ascii = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = try makeString(UnsafeRawBufferPointer(rebasing: bytes[start..<position]), offset: start, knownASCII: ascii)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string") }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        guard position < bytes.count else { throw error("unterminated string") }
        // Slow path: copy, decoding escapes.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                let result: Result<String, JSONParseError> = scratch.withUnsafeBytes { buffer in
                    do throws(JSONParseError) { return .success(try makeString(buffer, offset: start)) } catch { return .failure(error) }
                }
                return try result.get()
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0..<0x20:
                throw error("control character in a string")
            default:
                scratch.append(byte)
                position += 1
            }
        }
        throw error("unterminated string")
    }

    /// The number of leading bytes of `bytes`, in whole words of eight, that are printable ASCII other
    /// than a quote or a backslash (a string's content that needs neither decoding nor validation).
    static func plainASCIIPrefixLength(of bytes: UnsafeRawBufferPointer) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var length = 0
        while length + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: length, as: UInt64.self)
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            // A byte is zero in `quote` (`backslash`) where the word holds a quote (backslash).
            let found = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word) | word
            if found & highBits != 0 { break }
            length += 8
        }
        return length
    }

    private func makeString(_ buffer: UnsafeRawBufferPointer, offset: Int, knownASCII: Bool = false) throws(JSONParseError) -> String {
        // ASCII needs no validation (most identifiers and keys).
        var ascii = knownASCII
        if !ascii {
            ascii = true
            for byte in buffer where byte >= 0x80 {
                ascii = false
                break
            }
        }
        if ascii { return String(decoding: buffer, as: UTF8.self) }
        guard let text = String(validating: buffer.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw JSONParseError(offset: offset, reason: "invalid UTF-8 in a string")
        }
        return text
    }

    private mutating func parseEscape() throws(JSONParseError) {
        position += 1  // backslash
        guard let byte = current else { throw error("unterminated escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else {
                    throw error("lone surrogate in a \\u escape")
                }
                position += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("invalid surrogate pair") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("lone surrogate in a \\u escape")
            }
            scratch.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
        default:
            throw error("invalid escape")
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        var isIntegral = true
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("invalid number")
        }
        if first == UInt8(ascii: "0") {
            position += 1
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            isIntegral = false
            position += 1
            guard try skipRequiredDigits() else { throw error("invalid number") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isIntegral = false
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard try skipRequiredDigits() else { throw error("invalid number") }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isIntegral, let value = Int(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(offset: start, reason: "number out of range")
        }
        return .double(value)
    }

    private mutating func skipDigits() {
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
    }

    private mutating func skipRequiredDigits() throws(JSONParseError) -> Bool {
        let start = position
        skipDigits()
        return position > start
    }
}
