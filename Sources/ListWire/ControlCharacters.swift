/// Control characters: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F).
///
/// Identifiers end up on terminals (`listctl`, `listview`, logs), where these characters are commands:
/// ESC starts escape sequences (cursor moves, OSC 52 clipboard writes), BEL rings. listd refuses them in
/// every identifier it is given (sections, items, data sources, views, registrations); the terminal
/// tools write the ones in payloads visibly (`TerminalText` in ListViewCore builds on this type).
public enum ControlCharacters {
    /// Whether `scalar` is a control character.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The byte offset in UTF-8 `bytes` where the first control character starts, or `nil` (a scan of
    /// the bytes, no decoding). With `ignoringLineBreaks`, `\n` and `\t` do not count.
    @inlinable
    public static func firstOffset(inUTF8 bytes: some Sequence<UInt8>, ignoringLineBreaks: Bool = false) -> Int? {
        var offset = 0
        var previous: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 {
                if !(ignoringLineBreaks && (byte == 0x0A || byte == 0x09)) { return offset }
            } else if byte == 0x7F {
                return offset
            } else if previous == 0xC2, (0x80...0x9F).contains(byte) {
                return offset - 1  // C1 controls are the two-byte sequences C2 80 … C2 9F
            }
            previous = byte
            offset += 1
        }
        return nil
    }

    /// `firstOffset(inUTF8:)` for contiguous bytes: eight at a time while they are printable ASCII (no
    /// byte below 0x20, none from 0x7F up), byte by byte from the first word that is not.
    static func firstOffset(inContiguousUTF8 bytes: UnsafeRawBufferPointer) -> Int? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var start = 0
        while start + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            let belowSpace = (word &- ones &* 0x20) & ~word & highBits
            let delOrHigh = (((word & ~highBits) &+ ones) | word) & highBits
            if belowSpace | delOrHigh != 0 { break }
            start += 8
        }
        // The rest (from a word boundary, so a C2 lead byte is never split from what follows it).
        guard let offset = firstOffset(inUTF8: UnsafeRawBufferPointer(rebasing: bytes[start...])) else { return nil }
        return start + offset
    }

    /// The first control character of `text` and its byte offset, or `nil` when there is none.
    public static func first(in text: String) -> (scalar: Unicode.Scalar, offset: Int)? {
        // Most identifiers hold none: a scan of the contiguous bytes, without decoding.
        let found = text.utf8.withContiguousStorageIfAvailable { firstOffset(inContiguousUTF8: UnsafeRawBufferPointer($0)) }
            ?? firstOffset(inUTF8: text.utf8)
        guard let offset = found else { return nil }
        let bytes = text.utf8.dropFirst(offset)
        let lead = bytes.first!
        return (Unicode.Scalar(lead == 0xC2 ? bytes.dropFirst().first! : lead), offset)
    }

    /// `invalid-argument` for an identifier holding a control character, or `nil` when it holds none.
    /// `kind` names what the identifier is ("item", "section", "data source", …).
    public static func error(_ kind: String, _ identifier: String) -> WireError? {
        guard let (scalar, offset) = first(in: identifier) else { return nil }
        return WireError(
            .invalidArgument,
            "The \(kind) identifier \"\(escaped(identifier.prefix(40)))\" holds the control character U+\(hex(scalar.value)) at byte \(offset); identifiers cannot hold control characters.")
    }

    /// `text` with every control character written as `\u001b` (for messages).
    public static func escaped(_ text: some StringProtocol) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                output += "\\u" + hex(scalar.value).lowercased()
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// Four upper-case hex digits.
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Invisible and direction-changing characters: names that hold them can pass for other names
/// (`invoice\u{202E}gnp.exe` reads as "invoiceexe.png"), so the tools that show names (`listctl`'s text
/// and JSON output) write them as escapes.
extension ControlCharacters {
    /// Whether `scalar` shows as nothing or changes the direction of the text after it: zero-width
    /// spaces, joiners and non-joiners, the bidi marks (U+200E, U+200F, U+061C), embeddings and overrides
    /// (U+202A–U+202E), isolates (U+2066–U+2069), the other format characters (U+2060–U+2064,
    /// U+206A–U+206F, the byte order mark, the soft hyphen, tags), fillers and variation selectors.
    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0xFE00...0xFE0F, 0xE0100...0xE01EF, 0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B...0x180E, 0x200B...0x200F, 0x202A...0x202E,
            0x2060...0x2064, 0x2066...0x206F, 0x3164, 0xFEFF, 0xFFA0, 0xE0000...0xE007F:
            return true
        default:
            return false
        }
    }

    /// `text` with every invisible or direction-changing character (`isInvisible`) written visibly as
    /// `\u{202e}`, except what builds an emoji: a zero-width joiner between two emoji, a variation
    /// selector after one. Text of ASCII only is returned as it is.
    public static func escapingInvisible(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        let scalars = Array(text.unicodeScalars)
        guard scalars.contains(where: isInvisible) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for (index, scalar) in scalars.enumerated() {
            if isInvisible(scalar) && !buildsEmoji(at: index, in: scalars) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether the invisible character at `index` builds an emoji with its neighbours: a zero-width
    /// joiner between two emoji, a variation selector after one (it picks the emoji's presentation).
    public static func buildsEmoji(at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
        switch scalars[index].value {
        case 0x200D: return index > 0 && index + 1 < scalars.count && isPictographic(scalars[index - 1]) && isPictographic(scalars[index + 1])
        case 0xFE0E, 0xFE0F: return index > 0 && isPictographic(scalars[index - 1])
        default: return false
        }
    }

    /// An emoji beyond ASCII and Latin-1 (digits, `#` and `*` are emoji too, as keycap bases).
    private static func isPictographic(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0xFF && scalar.properties.isEmoji
    }

    /// A JSON text with every invisible or direction-changing character (`isInvisible`) written as a JSON
    /// escape (`\u202e`; beyond the Basic Multilingual Plane as a surrogate pair), and, in a string that
    /// holds Latin letters, every Cyrillic and Greek letter too (`\u043e`: "hоme" passing for "home").
    /// The same JSON value, whose bytes hold none of them raw. Such characters stand only inside
    /// strings, where an escape means the same; other bytes (malformed UTF-8 included) are copied as
    /// they are.
    public static func escapingInvisibleAndLookalikes(inJSON bytes: [UInt8]) -> [UInt8] {
        // All of them are beyond ASCII: most lines are returned untouched after one scan.
        guard bytes.contains(where: { $0 >= 0x80 }) else { return bytes }
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            output.append(bytes[index])
            guard bytes[index] == quote else {
                index += 1
                continue
            }
            // A string: its contents up to the closing quote (a backslash escapes the byte after it).
            var end = index + 1
            while end < bytes.count && bytes[end] != quote { end += bytes[end] == backslash ? 2 : 1 }
            end = min(end, bytes.count)
            appendEscaping(bytes[(index + 1)..<end], to: &output)
            index = end
            if index < bytes.count {
                output.append(quote)
                index += 1
            }
        }
        return output
    }

    /// The contents of one JSON string with its invisible characters, and its lookalike letters when it
    /// holds Latin ones, as JSON escapes. Two passes over the bytes, no allocation but the output's.
    private static func appendEscaping(_ contents: ArraySlice<UInt8>, to output: inout [UInt8]) {
        guard contents.contains(where: { $0 >= 0x80 }) else { return output += contents }
        var hasLatin = false
        var needsEscaping = false
        forEachScalar(in: contents) { scalar, _ in
            if isLatinLetter(scalar) { hasLatin = true }
            if isInvisible(scalar) || isLatinLookalike(scalar) { needsEscaping = true }
        }
        guard needsEscaping else { return output += contents }
        var copied = contents.startIndex
        forEachScalar(in: contents) { scalar, range in
            guard isInvisible(scalar) || (hasLatin && isLatinLookalike(scalar)) else { return }
            output += contents[copied..<range.lowerBound]
            appendJSONEscape(of: scalar, to: &output)
            copied = range.upperBound
        }
        output += contents[copied...]
    }

    /// Calls `body` with each well-formed scalar of a JSON string's contents and its bytes' range; escape
    /// sequences (`\n`, `\u00e9`: their letters are not text) and malformed bytes are skipped.
    private static func forEachScalar(in contents: ArraySlice<UInt8>, _ body: (Unicode.Scalar, Range<Int>) -> Void) {
        var index = contents.startIndex
        while index < contents.endIndex {
            let lead = contents[index]
            if lead == UInt8(ascii: "\\") {
                index += index + 1 < contents.endIndex && contents[index + 1] == UInt8(ascii: "u") ? 6 : 2
            } else if lead < 0x80 {
                body(Unicode.Scalar(lead), index..<(index + 1))
                index += 1
            } else {
                let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
                let range = index..<min(index + length, contents.endIndex)
                if length > 1, let scalar = decodedScalar(contents[range]) {
                    body(scalar, range)
                    index = range.upperBound
                } else {
                    index += 1
                }
            }
        }
    }

    /// A Latin letter (ASCII, Latin-1 and the Latin Extended blocks).
    public static func isLatinLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A: return true
        case 0xC0...0x24F: return scalar.properties.isAlphabetic
        default: return false
        }
    }

    /// Cyrillic and Greek letters (many look like Latin ones).
    public static func isLatinLookalike(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0370...0x03FF, 0x0400...0x052F, 0x1D2B, 0x1F00...0x1FFF: return true
        default: return false
        }
    }

    /// The scalar a well-formed UTF-8 sequence of two to four bytes encodes, else `nil` (a stray or
    /// missing continuation byte, an overlong form, a surrogate, beyond U+10FFFF).
    private static func decodedScalar(_ sequence: ArraySlice<UInt8>) -> Unicode.Scalar? {
        var value = UInt32(sequence.first!)
        let length = sequence.count
        value &= length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07
        for byte in sequence.dropFirst() {
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        let smallest: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= smallest else { return nil }
        return Unicode.Scalar(value)
    }

    /// `\u` escapes of `scalar` (a surrogate pair beyond the Basic Multilingual Plane), as UTF-8.
    private static func appendJSONEscape(of scalar: Unicode.Scalar, to output: inout [UInt8]) {
        func append(_ unit: UInt32) {
            output.append(UInt8(ascii: "\\"))
            output.append(UInt8(ascii: "u"))
            output += hexDigits(unit)
        }
        guard scalar.value > 0xFFFF else { return append(scalar.value) }
        let offset = scalar.value - 0x10000
        append(0xD800 + (offset >> 10))
        append(0xDC00 + (offset & 0x3FF))
    }

    /// Four lower-case hex digits of a value below 0x10000, as UTF-8.
    private static func hexDigits(_ value: UInt32) -> [UInt8] {
        [12, 8, 4, 0].map { lowerHexDigits[Int(value >> $0 & 0xF)] }
    }

    private static let lowerHexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
