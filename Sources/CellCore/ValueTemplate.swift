import DiffableCore

/// A JSON value whose strings may be Mustache templates, rendered against a cell's item:
/// `{"text": "{{title}}", "textProperties": {"numberOfLines": 2}}` with the payload `{"title": "감기"}`
/// renders `{"text": "감기", "textProperties": {"numberOfLines": 2}}`.
///
/// Templates see the item's payload members at the top level (`{{title}}`, `{{lastAnswer.content}}`),
/// and `item` (the identifier), `section`, `index` and `state` (see `CellState`). Output is plain text
/// (no HTML escaping). `Template` lists the Mustache supported; `TemplateLimits` bounds compiling and
/// rendering.
public indirect enum ValueTemplate: Sendable {
    case literal(JSONValue)
    /// A string containing `{{`, compiled.
    case text(Template)
    case array([ValueTemplate])
    case object([String: ValueTemplate])

    /// Compiles the strings of `value` that contain `{{` as templates, with a budget of its own.
    ///
    /// - Throws: `CellError`: `invalid-registration` naming the path of a template that does not parse,
    ///   `limit-exceeded` naming the path of one over a size or nesting limit.
    public init(_ value: JSONValue, path: String, limits: TemplateLimits = .standard) throws(CellError) {
        var budget = CompileBudget(limits: limits)
        try self.init(value, path: path, budget: &budget)
    }

    /// Compiles the strings of `value` that contain `{{` as templates, taking their bytes from `budget`
    /// (one budget for all the templates of a registration). Sizes are checked before anything compiles.
    ///
    /// - Throws: as `init(_:path:limits:)`.
    public init(_ value: JSONValue, path: String, budget: inout CompileBudget) throws(CellError) {
        switch value {
        case .string(let text) where text.contains("{{"):
            try budget.take(text.utf8.count, path: path)
            self = .text(try Template(text, path: path, limits: budget.limits))
        case .array(let elements):
            var compiled: [ValueTemplate] = []
            compiled.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                compiled.append(try ValueTemplate(element, path: "\(path)[\(index)]", budget: &budget))
            }
            self = .array(compiled)
        case .object(let members):
            var compiled: [String: ValueTemplate] = [:]
            for (key, member) in members { compiled[key] = try ValueTemplate(member, path: "\(path).\(key)", budget: &budget) }
            self = .object(compiled)
        default:
            self = .literal(value)
        }
    }

    /// The value with every template rendered, spending from the cell's `budget`.
    ///
    /// - Throws: `CellError` (`limit-exceeded`, naming the template's path) when rendering would go over
    ///   the budget's limits.
    public func render(_ context: TemplateContext, budget: inout RenderBudget) throws(CellError) -> JSONValue {
        switch self {
        case .literal(let value): return value
        case .text(let template): return .string(try template.render(context, budget: &budget))
        case .array(let elements):
            var rendered: [JSONValue] = []
            rendered.reserveCapacity(elements.count)
            for element in elements { rendered.append(try element.render(context, budget: &budget)) }
            return .array(rendered)
        case .object(let members):
            var rendered: [String: JSONValue] = [:]
            rendered.reserveCapacity(members.count)
            for (key, member) in members { rendered[key] = try member.render(context, budget: &budget) }
            return .object(rendered)
        }
    }

    /// The value with every template rendered, within the standard limits: a template that would go
    /// over them renders as `""` (use `render(_:budget:)` to learn about it).
    public func render(_ context: TemplateContext) -> JSONValue {
        var budget = RenderBudget()
        return renderLeniently(context, budget: &budget)
    }

    /// The value with every template rendered from `budget`; a template that would go over it renders as `""`.
    public func renderLeniently(_ context: TemplateContext, budget: inout RenderBudget) -> JSONValue {
        switch self {
        case .literal(let value): return value
        case .text(let template):
            do throws(CellError) {
                return .string(try template.render(context, budget: &budget))
            } catch {
                return .string("")
            }
        case .array(let elements): return .array(elements.map { $0.renderLeniently(context, budget: &budget) })
        case .object(let members):
            var rendered: [String: JSONValue] = [:]
            for (key, member) in members { rendered[key] = member.renderLeniently(context, budget: &budget) }
            return .object(rendered)
        }
    }
}

/// What templates can read for one cell.
public struct TemplateContext: Sendable {
    /// The item's payload: a value, or packed as a snapshot keeps it (then a template's names rebuild
    /// only the members they read).
    enum Payload: Sendable {
        case value(JSONValue)
        case packed(PackedPayload)
    }

    public var item: String
    var payload: Payload
    public var section: String
    public var indexPath: IndexPath
    public var state: CellState

    /// The item's payload as a value (rebuilt from its packed form when the context was made with one).
    public var data: JSONValue {
        get {
            switch payload {
            case .value(let value): return value
            case .packed(let packed): return packed.value
            }
        }
        set { payload = .value(newValue) }
    }

    public init(item: String, data: JSONValue, section: String, indexPath: IndexPath, state: CellState) {
        self.item = item
        self.payload = .value(data)
        self.section = section
        self.indexPath = indexPath
        self.state = state
    }

    /// A context whose payload stays packed: what a cell's templates read of it is rebuilt alone.
    public init(item: String, packedData: PackedPayload, section: String, indexPath: IndexPath, state: CellState) {
        self.item = item
        self.payload = .packed(packedData)
        self.section = section
        self.indexPath = indexPath
        self.state = state
    }

    /// A name at the top level: `state`, `item` (or `id`), `section`, `index`, else the payload's member.
    func rootValue(named name: String) -> JSONValue? {
        switch name {
        case "state": return state.json
        case "item", "id": return .string(item)
        case "section": return .string(section)
        case "index": return .int(indexPath.item)
        default:
            switch payload {
            case .value(let value): return value[name]
            case .packed(let packed): return packed.member(name)
            }
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
