import DiffableCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// Human-readable rendering for listctl.
enum Output {
    static func error(_ message: String) {
        var bytes = Array((message + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Writes a line to standard output at once (no buffering), for `watch`.
    static func line(_ text: String) {
        line(bytes: Array(text.utf8))
    }

    /// Writes bytes and a newline to standard output at once, whatever their size (a short write is
    /// continued).
    static func line(bytes: [UInt8]) {
        let all = bytes + [0x0A]
        var offset = 0
        while offset < all.count {
            let written = all[offset...].withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// A compact, readable form of a value: strings bare, everything else as JSON.
    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: return "-"
        case .string(let text)?: return text.replacingNewlines()
        case .array(let elements)? where elements.allSatisfy({ if case .int = $0 { return true } else { return false } }):
            return "[" + elements.map { cell($0) }.joined(separator: ", ") + "]"
        case let value?: return String(decoding: value.jsonBytes, as: UTF8.self)
        }
    }

    static func describe(_ value: JSONValue) -> String {
        if case .object(let members) = value, members.isEmpty { return "ok" }
        return cell(value)
    }

    /// Columns padded to their widest cell (by Unicode scalar count; East Asian width is listview's job).
    static func table(_ header: [String], _ rows: [[String]]) {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }
            print(cells.joined(separator: "  "))
        }
    }

    static func snapshot(_ sections: JSONValue, firstItem: Int) {
        for section in sections.arrayValue {
            let id = section["id"]?.stringValue ?? ""
            let data = section["data"].map { "  " + cell($0) } ?? ""
            let count = section["count"].map { " (\(cell($0)) items)" } ?? ""
            print("\(id)\(count)\(data)")
            for (offset, item) in section["items"]!.arrayValue.enumerated() {
                let itemID = item.stringValue ?? item["id"]?.stringValue ?? ""
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
            print(String(repeating: "  ", count: depth) + "\(marker) \(item["id"]?.stringValue ?? "")\(payload)")
            outline(item["children"] ?? [], depth: depth + 1)
        }
    }

    /// One line per stage, like `DiffableCore`'s stage description.
    static func changes(_ changes: JSONValue, indent: String, output: (String) -> Void = { print($0) }) {
        if changes["reloadData"] == true { output(indent + "reload everything") }
        if let decoded = try? WireDecoding.changes(changes) {
            for (index, stage) in decoded.stages.enumerated() { output(indent + "stage \(index + 1): \(stage)") }
            if decoded.stages.isEmpty && changes["reloadData"] != true { output(indent + "no changes") }
        }
    }
}

extension String {
    /// Newlines and tabs shown as `\n` and `\t`, so a value stays on its table row.
    func replacingNewlines() -> String {
        var result = ""
        for character in self {
            switch character {
            case "\n", "\r\n": result += "\\n"
            case "\t": result += "\\t"
            default: result.append(character)
            }
        }
        return result
    }
}
