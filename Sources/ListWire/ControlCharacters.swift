/// Control characters in identifiers: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F).
///
/// Identifiers end up on terminals (`listctl`, `listview`, logs), where these characters are commands:
/// ESC starts escape sequences (cursor moves, OSC 52 clipboard writes), BEL rings. listd refuses them in
/// every identifier it is given (sections, items, data sources, views, registrations).
public enum ControlCharacters {
    /// The first control character of `text` and its byte offset, or `nil` when there is none.
    public static func first(in text: String) -> (scalar: Unicode.Scalar, offset: Int)? {
        var offset = 0
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F { return (Unicode.Scalar(byte), offset) }
            // C1 controls are the two-byte sequences C2 80 … C2 9F.
            if previous == 0xC2, (0x80...0x9F).contains(byte) { return (Unicode.Scalar(byte), offset - 1) }
            previous = byte
            offset += 1
        }
        return nil
    }

    /// `invalid-argument` for an identifier holding a control character, or `nil` when it holds none.
    /// `kind` names what the identifier is ("item", "section", "data source", …).
    public static func error(_ kind: String, _ identifier: String) -> WireError? {
        guard let (scalar, offset) = first(in: identifier) else { return nil }
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return WireError(
            .invalidArgument,
            "The \(kind) identifier \"\(escaped(identifier.prefix(40)))\" holds the control character U+\(String(repeating: "0", count: 4 - hex.count))\(hex) at byte \(offset); identifiers cannot hold control characters.")
    }

    /// `text` with every control character written as `\u001b` (for messages and terminals).
    public static func escaped(_ text: some StringProtocol) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
