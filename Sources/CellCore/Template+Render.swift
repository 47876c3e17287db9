import DiffableCore

extension Template {
    /// Renders the template for a cell, spending from the cell's `budget`.
    ///
    /// Recursion follows section nesting only, so it is at most `TemplateLimits.maxDepth` deep.
    ///
    /// - Throws: `CellError` (`limit-exceeded`, naming `path`) when the output or the work would go over
    ///   the budget's limits; nothing is rendered then.
    public func render(_ context: TemplateContext, budget: inout RenderBudget) throws(CellError) -> String {
        var renderer = TemplateRenderer(nodes: nodes, path: path, context: context)
        try renderer.run(0..<nodes.count, budget: &budget)
        return renderer.output
    }
}

/// One rendering of one template: the context stack and the output so far.
struct TemplateRenderer {
    /// A context on the stack: the cell itself (its payload's members, `item`, `section`, `index`, `state`),
    /// or a value a section entered.
    enum Scope {
        case root
        case value(JSONValue)
    }

    let nodes: [Template.Node]
    let path: String
    let context: TemplateContext
    /// The scopes sections entered, innermost last; the cell itself (`.root`) is below them all and not
    /// stored, so that a template without sections renders without allocating a stack.
    var stack: [Scope] = []
    var output = ""
    var outputBytes = 0

    init(nodes: [Template.Node], path: String, context: TemplateContext) {
        self.nodes = nodes
        self.path = path
        self.context = context
    }

    mutating func run(_ range: Range<Int>, budget: inout RenderBudget) throws(CellError) {
        var index = range.lowerBound
        while index < range.upperBound {
            try budget.step(path: path)
            switch nodes[index] {
            case .text(let text, let bytes):
                try append(text, bytes: bytes, budget: &budget)
                index += 1
            case .variable(let name):
                if let value = try resolve(name, budget: &budget) { try write(value, budget: &budget) }
                index += 1
            case .section(let name, let inverted, let end):
                let body = (index + 1)..<end
                let value = try resolve(name, budget: &budget)
                if inverted {
                    try runInverted(body, over: value, budget: &budget)
                } else {
                    try runSection(body, over: value, budget: &budget)
                }
                index = end
            }
        }
    }

    private mutating func runSection(_ body: Range<Int>, over value: Scope?, budget: inout RenderBudget) throws(CellError) {
        switch value {
        case nil, .value(.null)?, .value(.bool(false))?:
            return
        case .value(.bool(true))?:
            try run(body, budget: &budget)
        case .value(.array(let elements))?:
            for element in elements {
                try budget.step(path: path)
                stack.append(.value(element))
                try run(body, budget: &budget)
                stack.removeLast()
            }
        case let scope?:
            stack.append(scope)
            try run(body, budget: &budget)
            stack.removeLast()
        }
    }

    private mutating func runInverted(_ body: Range<Int>, over value: Scope?, budget: inout RenderBudget) throws(CellError) {
        switch value {
        case nil, .value(.null)?, .value(.bool(false))?:
            try run(body, budget: &budget)
        case .value(.array(let elements))? where elements.isEmpty:
            stack.append(.value(.array([])))
            try run(body, budget: &budget)
            stack.removeLast()
        default:
            return
        }
    }

    /// The value a name refers to, else `nil`.
    private func resolve(_ name: Template.Name, budget: inout RenderBudget) throws(CellError) -> Scope? {
        switch name.scope {
        case .current:
            return innermost
        case .top:
            var found = innermost
            for component in name.components {
                try budget.step(name.cost, path: path)
                guard let next = child(of: found, named: component) else { return nil }
                found = .value(next)
            }
            return found
        case .stack:
            guard let first = name.components.first else { return innermost }
            // From the innermost scope out to the cell itself.
            var depth = stack.count
            while depth >= 0 {
                let scope = depth == 0 ? Scope.root : stack[depth - 1]
                depth -= 1
                try budget.step(name.cost, path: path)
                guard var found = child(of: scope, named: first) else { continue }
                for component in name.components.dropFirst() {
                    try budget.step(name.cost, path: path)
                    guard let next = child(of: found, named: component) else { return nil }
                    found = next
                }
                return .value(found)
            }
            return nil
        }
    }

    /// The innermost scope: the last one a section entered, else the cell.
    private var innermost: Scope { stack.last ?? .root }

    private func child(of scope: Scope, named name: String) -> JSONValue? {
        switch scope {
        case .root: return context.rootValue(named: name)
        case .value(let value): return child(of: value, named: name)
        }
    }

    private func child(of value: JSONValue, named name: String) -> JSONValue? {
        switch value {
        case .object(let members): return members[name]
        case .array(let elements): return Int(name).flatMap { elements.indices.contains($0) ? elements[$0] : nil }
        default: return nil
        }
    }

    /// Writes a variable's value: strings as they are, numbers and booleans as text, `null` as nothing,
    /// arrays and objects as compact JSON (and the cell itself as its payload).
    private mutating func write(_ scope: Scope, budget: inout RenderBudget) throws(CellError) {
        let value: JSONValue
        switch scope {
        case .root: value = context.data
        case .value(let scoped): value = scoped
        }
        switch value {
        case .null: return
        case .string(let text): try append(text, bytes: text.utf8.count, budget: &budget)
        case .bool, .int, .double:
            let text = value.templateText
            try append(text, bytes: text.utf8.count, budget: &budget)
        case .array, .object: try writeJSON(value, budget: &budget)
        }
    }

    /// `JSONValue.write(to:)`, one step per value and stopping at the budget instead of after the fact.
    private mutating func writeJSON(_ value: JSONValue, budget: inout RenderBudget) throws(CellError) {
        try budget.step(path: path)
        switch value {
        case .array(let elements):
            try append("[", bytes: 1, budget: &budget)
            for (index, element) in elements.enumerated() {
                if index > 0 { try append(",", bytes: 1, budget: &budget) }
                try writeJSON(element, budget: &budget)
            }
            try append("]", bytes: 1, budget: &budget)
        case .object(let members):
            try budget.step(members.count, path: path)
            try append("{", bytes: 1, budget: &budget)
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { try append(",", bytes: 1, budget: &budget) }
                try writeQuoted(key, budget: &budget)
                try append(":", bytes: 1, budget: &budget)
                try writeJSON(members[key]!, budget: &budget)
            }
            try append("}", bytes: 1, budget: &budget)
        case .string(let text):
            try writeQuoted(text, budget: &budget)
        default:
            var text = ""
            value.write(to: &text)
            try append(text, bytes: text.utf8.count, budget: &budget)
        }
    }

    private mutating func writeQuoted(_ text: String, budget: inout RenderBudget) throws(CellError) {
        // Quoted, a string is at least two bytes longer: check before escaping a long one.
        try budget.check(text.utf8.count + 2, fieldBytes: outputBytes, path: path)
        var quoted = ""
        JSONValue.writeQuoted(text, to: &quoted)
        try append(quoted, bytes: quoted.utf8.count, budget: &budget)
    }

    private mutating func append(_ text: String, bytes: Int, budget: inout RenderBudget) throws(CellError) {
        try budget.output(bytes, fieldBytes: outputBytes, path: path)
        outputBytes += bytes
        output += text
    }
}
