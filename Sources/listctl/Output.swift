import DiffableCore
import ListViewCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// Every `print` in listctl comes here: the text (which holds identifiers, payloads and messages
/// from listd) is written with its control characters shown visibly (`\u001b` for ESC; newlines and
/// tabs listctl lays out itself stay), so data never reaches the terminal as an escape sequence, and
/// its invisible and direction-changing characters too (`\u{202e}`), so no text passes for other text.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Swift.print(Output.shown(items.map { "\($0)" }.joined(separator: separator), keepingLineBreaks: true), terminator: terminator)
}

/// Human-readable rendering for listctl. Nothing here writes a control character, an invisible or a
/// direction-changing character from data to the terminal (`shown`); JSON lines keep every string
/// exact, as JSON escapes.
enum Output {
    /// `text` as listctl writes it for people: control characters shown visibly (`TerminalText.visible`:
    /// `\u001b`), and invisible and direction-changing characters too (`\u{202e}`: zero-width ones,
    /// bidi marks, embeddings, overrides and isolates), so that `invoice\u{202e}gnp.exe` does not read
    /// as "invoiceexe.png". Names also get `TerminalText.name` (lookalike letters).
    static func shown(_ text: String, keepingLineBreaks: Bool = false) -> String {
        ControlCharacters.escapingInvisible(TerminalText.visible(text, keepingLineBreaks: keepingLineBreaks))
    }

    /// Writes a message (which may echo listd's text) and a newline to stderr, control characters shown visibly.
    static func error(_ message: String) {
        var bytes = Array((shown(message, keepingLineBreaks: true) + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Writes a line to standard output at once (no buffering), for `watch`; control, invisible and
    /// direction-changing characters in it are shown visibly (`shown`).
    static func line(_ text: String) {
        write(Array(shown(text).utf8))
    }

    /// Writes a JSON line (a reply or an event as listd sent it) and a newline to standard output at
    /// once, with the control, invisible and direction-changing characters in its strings as JSON
    /// escapes (`\u001b`, `\u202e`), and the Cyrillic and Greek letters of strings holding Latin ones
    /// (`\u043e`): the same JSON value, none of them raw in its bytes.
    static func line(bytes: [UInt8]) {
        write(ControlCharacters.escapingInvisibleAndLookalikes(inJSON: TerminalText.jsonLine(bytes)))
    }

    /// Writes bytes and a newline to standard output, whatever their size (a short write is continued).
    private static func write(_ bytes: [UInt8]) {
        let all = bytes + [0x0A]
        var offset = 0
        while offset < all.count {
            let written = all[offset...].withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// A size for people: `16777216 bytes (16.0 MiB)`, `900 bytes`.
    static func bytes(_ count: Int) -> String {
        guard count >= 1 << 10 else { return "\(count) bytes" }
        let (unit, scale) = count >= 1 << 20 ? ("MiB", Double(1 << 20)) : ("KiB", Double(1 << 10))
        let tenths = (Double(count) / scale * 10).rounded()
        return "\(count) bytes (\(Int(tenths) / 10).\(Int(tenths) % 10) \(unit))"
    }

    /// A compact, readable form of a value: strings bare, everything else as JSON.
    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: return "-"
        case .string(let text)?: return shown(text)
        case .array(let elements)? where elements.allSatisfy({ if case .int = $0 { return true } else { return false } }):
            return "[" + elements.map { cell($0) }.joined(separator: ", ") + "]"
        case let value?: return shown(String(decoding: value.jsonBytes, as: UTF8.self))
        }
    }

    static func describe(_ value: JSONValue) -> String {
        if case .object(let members) = value, members.isEmpty { return "ok" }
        return cell(value)
    }

    /// Columns padded to their widest cell (by Unicode scalar count; East Asian width is listview's job).
    static func table(_ header: [String], _ rows: [[String]]) {
        // Padded by display width: a Korean title or an emoji takes two columns, a combining mark none.
        let all = ([header] + rows).map { $0.map { shown($0) } }
        let cellWidths = all.map { $0.map { TerminalWidth.of($0) } }
        let widths = header.indices.map { column in cellWidths.map { $0[column] }.max() ?? 0 }
        for (rowIndex, row) in all.enumerated() {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cellWidths[rowIndex][index])
            }
            print(cells.joined(separator: "  "))
        }
    }

    static func snapshot(_ sections: JSONValue, firstItem: Int) {
        for section in sections.arrayValue {
            let id = TerminalText.name(section["id"]?.stringValue ?? "")
            let data = section["data"].map { "  " + cell($0) } ?? ""
            let count = section["count"].map { " (\(cell($0)) items)" } ?? ""
            print("\(id)\(count)\(data)")
            for (offset, item) in section["items"]!.arrayValue.enumerated() {
                let itemID = TerminalText.name(item.stringValue ?? item["id"]?.stringValue ?? "")
                let payload = item["data"].map { "  " + cell($0) } ?? ""
                print("  \(firstItem + offset)  \(itemID)\(payload)")
            }
        }
    }

    static func outline(_ items: JSONValue, depth: Int) {
        for item in items.arrayValue {
            let children = item["children"]?.arrayValue ?? []
            let marker = children.isEmpty ? "·" : (item["expanded"] == true ? "⌄" : "›")
            let payload = item["data"].map { "  " + cell($0) } ?? ""
            print(String(repeating: "  ", count: depth) + "\(marker) \(TerminalText.name(item["id"]?.stringValue ?? ""))\(payload)")
            outline(item["children"] ?? [], depth: depth + 1)
        }
    }
}
