import ListWire

/// Text from listd (identifiers, payloads, server messages) made safe to write to a terminal.
///
/// Data may hold control characters: ESC starting a CSI or OSC sequence (OSC 52 writes the clipboard,
/// others retitle the window or move the cursor), BEL, or the C1 controls (U+0080…U+009F, which some
/// terminals obey as 8-bit CSI and OSC). listctl and listview write none of them from data: in human
/// output each is shown visibly as `\u001b`; in JSON output each stays a JSON escape, so the line still
/// parses back to the exact string.
public enum TerminalText {
    /// Whether a scalar is a control character a terminal could act on: C0 (U+0000…U+001F), DEL
    /// (U+007F) and C1 (U+0080…U+009F).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        ControlCharacters.isControl(scalar)
    }

    /// `text` with every control character written visibly, as `\n`, `\t`, `\r`, or `\u001b` (four hex
    /// digits). With `keepingLineBreaks`, newlines and tabs stay as they are (for multi-line output the
    /// tool itself lays out).
    public static func visible(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard needsEscaping(text, keepingLineBreaks: keepingLineBreaks) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n" where keepingLineBreaks, "\t" where keepingLineBreaks: result.unicodeScalars.append(scalar)
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default: result += escape(scalar.value)
            }
        }
        return result
    }

    /// A name (a data source's, a registration's, a view's, a section or item identifier) as a terminal
    /// may show it without one name passing for another: as `visible` does, and also
    /// - every invisible or direction-changing character (zero-width spaces and joiners, bidi embeddings,
    ///   overrides and isolates, the byte order mark, soft hyphens, fillers) written as `\u{202e}`; a
    ///   zero-width joiner between two emoji stays (it builds one emoji);
    /// - in a name that has Latin letters, its Cyrillic and Greek letters written as `\u{043e}` (a
    ///   Cyrillic "о" in "hоme"), since those look like Latin ones.
    /// A name of plain ASCII, or wholly in one other script (Korean, Cyrillic), is shown as it is.
    public static func name(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        let scalars = Array(text.unicodeScalars)
        let hasLatin = scalars.contains { ControlCharacters.isLatinLetter($0) }
        var result = ""
        for (index, scalar) in scalars.enumerated() {
            if isControl(scalar) {
                result += visible(String(scalar))
            } else if ControlCharacters.buildsEmoji(at: index, in: scalars) {
                result.unicodeScalars.append(scalar)  // a joiner inside an emoji, or its presentation
            } else if ControlCharacters.isInvisible(scalar) || (hasLatin && ControlCharacters.isLatinLookalike(scalar)) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `visible` would change `text` (scans its UTF-8 bytes; no allocation).
    public static func needsEscaping(_ text: String, keepingLineBreaks: Bool = false) -> Bool {
        ControlCharacters.firstOffset(inUTF8: text.utf8, ignoringLineBreaks: keepingLineBreaks) != nil
    }

    /// A JSON line to print as is, with any control character inside its strings written as a JSON
    /// escape (`\u001b`, `\u007f`, `\u009b`): listd escapes C0 itself but writes DEL and C1 raw, as JSON
    /// allows. The result is the same JSON text (it parses to the same value). Bytes outside strings are
    /// left alone.
    public static func jsonLine(_ bytes: [UInt8]) -> [UInt8] {
        if ControlCharacters.firstOffset(inUTF8: bytes) == nil { return bytes }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 32)
        var inString = false
        var escaped = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard inString else {
                if byte == UInt8(ascii: "\"") { inString = true }
                output.append(byte)
                continue
            }
            if escaped {
                escaped = false
                output.append(byte)
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
                output.append(byte)
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                output.append(byte)
            } else if byte < 0x20 || byte == 0x7F {
                output += escape(UInt32(byte)).utf8
            } else if byte == 0xC2, index < bytes.count, (0x80...0x9F).contains(bytes[index]) {
                output += escape(UInt32(bytes[index])).utf8
                index += 1
            } else {
                output.append(byte)
            }
        }
        return output
    }

    private static let hexDigits = Array("0123456789abcdef")

    /// `\u` and four lowercase hex digits (the scalars escaped here are all below U+0100).
    private static func escape(_ value: UInt32) -> String {
        "\\u00" + String(hexDigits[Int(value >> 4 & 0xF)]) + String(hexDigits[Int(value & 0xF)])
    }
}
