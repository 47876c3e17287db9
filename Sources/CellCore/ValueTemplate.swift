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
    case text(MustacheTemplate)
    case array([ValueTemplate])
    case object([String: ValueTemplate])

    /// Compiles the strings of `value` that contain `{{` as templates.
    ///
    /// - Throws: `CellError` (`invalid-registration`) naming the path of a template that does not parse.
    public init(_ value: JSONValue, path: String) throws(CellError) {
        switch value {
        case .string(let text) where text.contains("{{"):
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
