/// A compiled Mustache template: the subset cells use, parsed in one pass over the bytes, without
/// recursion, at most `TemplateLimits.maxDepth` sections deep.
///
/// Supported: text; variables `{{name}}`, `{{a.b}}` (a dotted path; a decimal component indexes an
/// array), `{{.}}` (the current context) and `{{.name}}` (only in the current context), also written
/// `{{{name}}}` or `{{& name}}` (output is plain text, never HTML-escaped); sections `{{#name}}…{{/name}}`
/// (skipped for a missing value, `null`, `false` and `[]`; repeated for each element of an array, with the
/// element as the context; with an object or another scalar as the context; once for `true`); inverted
/// sections `{{^name}}…{{/name}}` (shown exactly when the section would be skipped); comments `{{! … }}`.
/// Section and comment tags alone on a line take the line with them, as Mustache specifies. Partials,
/// blocks, set delimiters, pragmas and transforms (`{{upper(x)}}`) are not supported: they do not compile.
public struct Template: Sendable {
    /// How a name is looked up.
    enum Scope: Sendable {
        /// `{{.}}`: the current context itself.
        case current
        /// `{{.a.b}}`: only in the current context.
        case top
        /// `{{a.b}}`: the first context, from the innermost out, that has `a`.
        case stack
    }

    /// A variable's or a section's name, split at the dots.
    struct Name: Sendable {
        var scope: Scope
        var components: [String]
        /// The steps one lookup of one component costs (longer names cost more to hash).
        var cost: Int
    }

    enum Node: Sendable {
        case text(String, bytes: Int)
        case variable(Name)
        /// A section whose body is the nodes after it, up to `end` (exclusive).
        case section(Name, inverted: Bool, end: Int)
    }

    let nodes: [Node]
    /// Bytes the parser looked at while compiling (each at most a few times: compiling is linear).
    let compileWork: Int
    /// Where the template sits in its registration, for error messages (`consult.contentConfiguration.text`).
    public let path: String

    /// Compiles `text`, which is at most `limits.maxTemplateBytes` long (see `CompileBudget`).
    ///
    /// - Throws: `CellError`: `invalid-registration` when the template does not parse, `limit-exceeded`
    ///   when sections nest deeper than `limits.maxDepth`; both name `path`.
    public init(_ text: String, path: String, limits: TemplateLimits = .standard) throws(CellError) {
        var parser = TemplateParser(bytes: Array(text.utf8), path: path, maxDepth: limits.maxDepth)
        nodes = try parser.parse()
        compileWork = parser.work
        self.path = path
    }
}

/// The parser behind `Template`: one pass, an explicit stack of open sections.
///
/// It follows the rules of the engine listd used before (hummingbird's swift-mustache) so that templates
/// render as they did, including where whitespace around standalone tags goes, with two exceptions that
/// make every template follow the rules that templates of plain variables always did: a template's first
/// line is not dropped, and spaces at the end of a template stay.
struct TemplateParser {
    private struct OpenSection {
        var node: Int
        var name: ArraySlice<UInt8>
        var whitespace: Range<Int>
        var standalone: Bool
    }

    let bytes: [UInt8]
    let path: String
    let maxDepth: Int
    private var position = 0 {
        didSet { work += max(1, position - oldValue) }
    }
    /// Bytes moved over, plus one per look at a position (for the test that compiling is linear).
    private(set) var work = 0
    private var nodes: [Template.Node] = []
    private var pendingText: [UInt8] = []

    init(bytes: [UInt8], path: String, maxDepth: Int) {
        self.bytes = bytes
        self.path = path
        self.maxDepth = maxDepth
    }

    mutating func parse() throws(CellError) -> [Template.Node] {
        var open: [OpenSection] = []
        var newLine = true
        var whitespace = 0..<0
        while position < bytes.count {
            if newLine {
                let start = position
                while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 { position += 1 }
                whitespace = start..<position
            }
            let textStart = position
            var textEnd = bytes.count
            while position < bytes.count {
                let byte = bytes[position]
                if byte == 0x0A {
                    textEnd = position
                    break
                }
                if byte == 0x7B, position + 1 < bytes.count, bytes[position + 1] == 0x7B {
                    textEnd = position
                    position += 2
                    break
                }
                position += 1
            }
            let newline = newlineLength(at: position)
            if newline > 0 {
                pendingText += bytes[whitespace]
                pendingText += bytes[textStart..<textEnd]
                pendingText += bytes[position..<position + newline]
                position += newline
                newLine = true
                continue
            }
            if textEnd > textStart {
                pendingText += bytes[whitespace]
                pendingText += bytes[textStart..<textEnd]
                whitespace = 0..<0
                newLine = false
            }
            if position >= bytes.count {
                // Spaces ending the template stay (the old engine dropped them when alone on the last line).
                pendingText += bytes[whitespace]
                break
            }
            var standalone = false
            switch bytes[position] {
            case 0x23, 0x5E:  // # ^
                let inverted = bytes[position] == 0x5E
                position += 1
                let (raw, name) = try readName()
                if newLine && lineFinished() {
                    standalone = true
                } else {
                    pendingText += bytes[whitespace]
                    whitespace = 0..<0
                }
                if open.count >= maxDepth {
                    throw CellError(.limitExceeded, "The template at \(path) nests sections more than \(maxDepth) deep.")
                }
                flushText()
                open.append(OpenSection(node: nodes.count, name: raw, whitespace: whitespace, standalone: standalone))
                nodes.append(.section(name, inverted: inverted, end: -1))
                whitespace = 0..<0
                newLine = standalone
                continue
            case 0x2F:  // /
                position += 1
                let (raw, _) = try readName()
                guard let section = open.last, section.name == raw else {
                    let closed = String(decoding: raw, as: UTF8.self)
                    let expected = open.last.map { " (\"\(String(decoding: $0.name, as: UTF8.self))\" is open)" } ?? ""
                    throw CellError(.invalidRegistration, "The template at \(path) does not parse: {{/\(closed)}} closes no open section\(expected).")
                }
                if !(newLine && lineFinished()) { pendingText += bytes[whitespace] }
                flushText()
                if case .section(let name, let inverted, _) = nodes[section.node] {
                    nodes[section.node] = .section(name, inverted: inverted, end: nodes.count)
                }
                open.removeLast()
                whitespace = section.whitespace
                newLine = section.standalone
                continue
            case 0x21:  // !
                position += 1
                guard let close = find(0x7D, 0x7D, from: position) else {
                    throw CellError(.invalidRegistration, "The template at \(path) does not parse: a comment is never closed with }}.")
                }
                position = close + 2
                standalone = newLine && lineFinished()
            case 0x7B, 0x26:  // { &
                let triple = bytes[position] == 0x7B
                pendingText += bytes[whitespace]
                whitespace = 0..<0
                position += 1
                let (_, name) = try readName()
                if triple {
                    guard position < bytes.count, bytes[position] == 0x7D else {
                        throw CellError(.invalidRegistration, "The template at \(path) does not parse: {{{ is not closed with }}}.")
                    }
                    position += 1
                }
                flushText()
                nodes.append(.variable(name))
            case 0x3E, 0x3C, 0x24, 0x3D, 0x25:  // > < $ = %
                let tag = String(UnicodeScalar(bytes[position]))
                throw CellError(
                    .invalidRegistration,
                    "The template at \(path) does not parse: {{\(tag)…}} tags (partials, blocks, set delimiters, pragmas) are not supported.")
            default:
                pendingText += bytes[whitespace]
                whitespace = 0..<0
                let (_, name) = try readName()
                flushText()
                nodes.append(.variable(name))
            }
            newLine = standalone
        }
        if let section = open.last {
            throw CellError(
                .invalidRegistration,
                "The template at \(path) does not parse: section \"\(String(decoding: section.name, as: UTF8.self))\" is never closed.")
        }
        flushText()
        return nodes
    }

    /// Ends the text run being collected, as one node.
    private mutating func flushText() {
        guard !pendingText.isEmpty else { return }
        nodes.append(.text(String(decoding: pendingText, as: UTF8.self), bytes: pendingText.count))
        pendingText.removeAll(keepingCapacity: true)
    }

    /// Reads `name }}` after a tag's sigil: the name as written, and as looked up.
    private mutating func readName() throws(CellError) -> (ArraySlice<UInt8>, Template.Name) {
        skipWhitespace()
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte < 0x80 {
                guard Self.nameBytes[Int(byte)] else { break }
                position += 1
            } else {
                if whitespaceLength(at: position) > 0 { break }
                position += scalarLength(at: position)
            }
        }
        let raw = bytes[start..<position]
        skipWhitespace()
        guard position + 1 < bytes.count, bytes[position] == 0x7D, bytes[position + 1] == 0x7D else {
            throw CellError(.invalidRegistration, "The template at \(path) does not parse: a tag is not closed with }} after its name.")
        }
        position += 2
        if raw.isEmpty {
            throw CellError(.invalidRegistration, "The template at \(path) does not parse: a tag has no name.")
        }
        if raw.contains(0x28) || raw.contains(0x29) {
            throw CellError(
                .invalidRegistration, "The template at \(path) does not parse: transforms such as {{upper(x)}} are not supported.")
        }
        let components = raw.split(separator: 0x2E).map { String(decoding: $0, as: UTF8.self) }
        let scope: Template.Scope = raw.count == 1 && raw.first == 0x2E ? .current : raw.first == 0x2E ? .top : .stack
        return (raw, Template.Name(scope: scope, components: components, cost: 1 + raw.count / 64))
    }

    /// ASCII letters, digits and `.-_?*()`; other scripts' letters are accepted as well.
    private static let nameBytes: [Bool] = {
        var table = [Bool](repeating: false, count: 128)
        for byte in "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_?*()".utf8 { table[Int(byte)] = true }
        return table
    }()

    /// Whether only spaces and tabs remain on the line; if so, moves past them and the line's end.
    private mutating func lineFinished() -> Bool {
        if position >= bytes.count { return true }
        var end = position
        while end < bytes.count, bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
        let newline = newlineLength(at: end)
        guard newline > 0 else { return false }
        position = end + newline
        return true
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            let length = whitespaceLength(at: position)
            if length == 0 { return }
            position += length
        }
    }

    /// The first index at or after `from` where `first` is followed by `second`.
    private func find(_ first: UInt8, _ second: UInt8, from: Int) -> Int? {
        var index = from
        while index + 1 < bytes.count {
            if bytes[index] == first && bytes[index + 1] == second { return index }
            index += 1
        }
        return nil
    }

    /// The bytes of the line break at `index` (`\n`, `\r\n`, `\r`, VT, FF, NEL, LS, PS), else 0.
    private func newlineLength(at index: Int) -> Int {
        guard index < bytes.count else { return 0 }
        switch bytes[index] {
        case 0x0A, 0x0B, 0x0C: return 1
        case 0x0D: return index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
        case 0xC2: return index + 1 < bytes.count && bytes[index + 1] == 0x85 ? 2 : 0
        case 0xE2:
            return index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9) ? 3 : 0
        default: return 0
        }
    }

    /// The bytes of the whitespace character (Unicode's, line breaks included) at `index`, else 0.
    private func whitespaceLength(at index: Int) -> Int {
        let byte = bytes[index]
        if byte < 0x80 { return byte == 0x20 || (0x09...0x0D).contains(byte) ? 1 : 0 }
        let length = scalarLength(at: index)
        var value = UInt32(byte) & (0xFF >> UInt32(length + 1))
        for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
        guard let scalar = Unicode.Scalar(value) else { return 0 }
        return scalar.properties.isWhitespace ? length : 0
    }

    /// The length of the UTF-8 sequence starting at `index` (the text came from a `String`, so it is valid).
    private func scalarLength(at index: Int) -> Int {
        let byte = bytes[index]
        let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
        return min(length, bytes.count - index)
    }
}
