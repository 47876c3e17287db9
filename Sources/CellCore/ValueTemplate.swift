import DiffableCore
import Mustache

/// A JSON value whose strings may be Mustache templates, rendered against a cell's item:
/// `{"text": "{{title}}", "textProperties": {"numberOfLines": 2}}` with the payload `{"title": "감기"}`
/// renders `{"text": "감기", "textProperties": {"numberOfLines": 2}}`.
///
/// Templates see the item's payload members at the top level (`{{title}}`, `{{lastAnswer.content}}`),
/// and `item` (the identifier), `section`, `index` and `state` (see `CellState`). Output is plain text
/// (no HTML escaping).
public indirect enum ValueTemplate: Sendable {
    case literal(JSONValue)
    /// Text with plain `{{path}}` variables only, rendered natively (no reflection).
    case simple([SimplePart])
    case text(MustacheTemplate)
    case array([ValueTemplate])
    case object([String: ValueTemplate])

    /// A piece of a simple template.
    public enum SimplePart: Sendable {
        case text(String)
        case variable([String])
    }

    /// The parts of `text` when it is only literal text and `{{name}}` / `{{a.b}}` variables; else `nil`.
    static func simpleParts(_ text: String) -> [SimplePart]? {
        var parts: [SimplePart] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else { return nil }
            let name = rest[open.upperBound..<close.lowerBound].trimmingSpaces()
            guard !name.isEmpty, name != ".", name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-" }),
                !name.hasPrefix("."), !name.hasSuffix(".")
            else { return nil }
            parts.append(.variable(name.split(separator: ".").map(String.init)))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        return parts
    }

    /// Compiles the strings of `value` that contain `{{` as templates.
    ///
    /// - Throws: `CellError` (`invalid-registration`) naming the path of a template that does not parse.
    public init(_ value: JSONValue, path: String) throws(CellError) {
        switch value {
        case .string(let text) where text.contains("{{"):
            if let parts = Self.simpleParts(text) {
                self = .simple(parts)
                return
            }
            do {
                self = .text(try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + text))
            } catch {
                throw CellError(.invalidRegistration, "The template at \(path) does not parse: \(error).")
            }
        case .array(let elements):
            var compiled: [ValueTemplate] = []
            for (index, element) in elements.enumerated() { compiled.append(try ValueTemplate(element, path: "\(path)[\(index)]")) }
            self = .array(compiled)
        case .object(let members):
            var compiled: [String: ValueTemplate] = [:]
            for (key, member) in members { compiled[key] = try ValueTemplate(member, path: "\(path).\(key)") }
            self = .object(compiled)
        default:
            self = .literal(value)
        }
    }

    /// The value with every template rendered.
    public func render(_ context: TemplateContext) -> JSONValue {
        switch self {
        case .literal(let value): return value
        case .simple(let parts):
            var output = ""
            for part in parts {
                switch part {
                case .text(let text): output += text
                case .variable(let path): context.lookup(path).map { output += $0.templateText }
                }
            }
            return .string(output)
        case .text(let template): return .string(template.render(context))
        case .array(let elements): return .array(elements.map { $0.render(context) })
        case .object(let members): return .object(members.mapValues { $0.render(context) })
        }
    }
}

/// What templates can read for one cell.
public struct TemplateContext: MustacheParent {
    public var item: String
    public var data: JSONValue
    public var section: String
    public var indexPath: IndexPath
    public var state: CellState

    public init(item: String, data: JSONValue, section: String, indexPath: IndexPath, state: CellState) {
        self.item = item
        self.data = data
        self.section = section
        self.indexPath = indexPath
        self.state = state
    }

    /// The value at a variable's path, as Mustache would find it (`nil` when absent).
    func lookup(_ path: [String]) -> JSONValue? {
        guard let first = path.first else { return nil }
        var value: JSONValue
        switch first {
        case "state": value = state.json
        case "item", "id": value = .string(item)
        case "section": value = .string(section)
        case "index": value = .int(indexPath.item)
        default:
            guard let member = data[first] else { return nil }
            value = member
        }
        for component in path.dropFirst() {
            switch value {
            case .object(let members):
                guard let next = members[component] else { return nil }
                value = next
            case .array(let elements):
                guard let index = Int(component), elements.indices.contains(index) else { return nil }
                value = elements[index]
            default:
                return nil
            }
        }
        return value
    }

    public func child(named name: String) -> Any? {
        switch name {
        case "state": return MustacheJSON(state.json)
        case "item", "id": return item
        case "section": return section
        case "index": return indexPath.item
        default: return data[name].map(MustacheJSON.init)
        }
    }
}

/// A JSON value as Mustache sees it: objects have children, arrays are sequences, `null` and `false`
/// are false, scalars render as text.
struct MustacheJSON: MustacheParent, MustacheCustomRepresentation {
    let value: JSONValue

    init(_ value: JSONValue) { self.value = value }

    func child(named name: String) -> Any? {
        switch value {
        case .object(let members): return members[name].map(MustacheJSON.init)
        case .array(let elements): return Int(name).flatMap { elements.indices.contains($0) ? MustacheJSON(elements[$0]) : nil }
        default: return nil
        }
    }

    var representation: Any? {
        switch value {
        case .null: return nil
        case .bool(let flag): return flag
        case .int(let number): return number
        case .double(let number): return number
        case .string(let text): return text
        case .array(let elements): return elements.map(MustacheJSON.init)
        case .object: return self
        }
    }
}

extension JSONValue {
    /// How a variable renders: strings as they are, numbers and booleans as text, `null` as nothing,
    /// arrays and objects as compact JSON.
    var templateText: String {
        switch self {
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .string(let text): return text
        case .array, .object: return description
        }
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while result.first == " " { result = result.dropFirst() }
        while result.last == " " { result = result.dropLast() }
        return result
    }
}
