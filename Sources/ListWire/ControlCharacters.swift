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
