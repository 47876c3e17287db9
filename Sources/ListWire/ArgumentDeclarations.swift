import DiffableCore

/// A command's argument, declared once as a stored property of the command's type:
/// `@Arg("The data source.") var dataSource: String` (an optional type: the argument may be left
/// out). The property's name is the argument's name, for decoding (the `init(arguments:)` scripts/generate-argument-decoding writes) and for
/// `describe` (`ArgumentDocumentation.of(_:)`, through `Mirror`).
@propertyWrapper
public struct Arg<Value: ArgumentValue>: Sendable {
    /// The decoded value (`nil` only in the documentation instance).
    private var value: Value?
    /// What the argument means, for `describe` (empty in a decoded instance).
    public let summary: String
    /// The type as `describe` names it, when `Value.wireType` does not say enough.
    public let type: String?
    /// Documented as required although decoded as optional: the command checks it with its own error.
    public let documentedAsRequired: Bool

    /// The documentation instance: no value, only what `describe` says of it.
    public init(_ summary: String, type: String? = nil, documentedAsRequired: Bool = false) {
        self.summary = summary
        self.type = type
        self.documentedAsRequired = documentedAsRequired
    }

    public var wrappedValue: Value {
        get { value! }
        set { value = newValue }
    }

    /// An argument declared as `@Arg var name: T`, whose summary the documentation initializer of the
    /// type that declares it gives (a summary made from parts, such as a placement's verb).
    public init() {
        summary = ""
        type = nil
        documentedAsRequired = false
    }
}

extension Arguments {
    /// Reads the argument `name` as the type it is declared with (what the generated
    /// `init(arguments:)` does for each `@Arg`).
    @inlinable
    public mutating func read<Value: ArgumentValue>(_ name: String) throws(WireError) -> Value {
        try Value.read(name, from: &self)
    }
}

/// A type an argument can have: how a request spells it, and how it is read.
public protocol ArgumentValue: Sendable {
    /// The type as `describe` names it ("string", "[item]", "integer").
    static var wireType: String { get }
    /// Whether a request must give the argument (an optional one need not).
    static var isRequired: Bool { get }
    /// Reads the argument `name` (a missing one is `invalid-argument` unless the type is optional;
    /// `null` counts as absent).
    static func read(_ name: String, from arguments: inout Arguments) throws(WireError) -> Self
}

/// An argument type read from the argument's JSON value.
public protocol JSONArgumentValue: ArgumentValue {
    /// The value of the present argument `name`.
    static func decode(_ value: JSONValue, name: String) throws(WireError) -> Self
}

extension JSONArgumentValue {
    public static var isRequired: Bool { true }

    public static func read(_ name: String, from arguments: inout Arguments) throws(WireError) -> Self {
        try decode(arguments.required(name), name: name)
    }
}

extension Optional: ArgumentValue where Wrapped: ArgumentValue {
    public static var wireType: String { Wrapped.wireType }
    public static var isRequired: Bool { false }

    public static func read(_ name: String, from arguments: inout Arguments) throws(WireError) -> Self {
        guard arguments.isPresent(name) else { return nil }
        return try Wrapped.read(name, from: &arguments)
    }
}

extension String: JSONArgumentValue {
    public static var wireType: String { "string" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> String {
        guard case .string(let text) = value else { throw Arguments.wrongType(name, "a string") }
        return text
    }
}

extension Bool: JSONArgumentValue {
    public static var wireType: String { "boolean" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> Bool {
        guard case .bool(let flag) = value else { throw Arguments.wrongType(name, "a boolean") }
        return flag
    }
}

extension Int: JSONArgumentValue {
    public static var wireType: String { "integer" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> Int {
        switch value {
        case .int(let number): return number
        case .double(let number) where number == number.rounded() && abs(number) < 9e15: return Int(number)
        default: throw Arguments.wrongType(name, "an integer")
        }
    }
}

/// A count, offset, index or version: an integer in `Arguments.countRange`.
public struct Count: JSONArgumentValue, Hashable {
    public var value: Int

    public init(_ value: Int) { self.value = value }

    public static var wireType: String { "integer" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> Count {
        let number = try Int.decode(value, name: name)
        guard Arguments.countRange.contains(number) else { throw Arguments.outOfRange(name, Arguments.countRange) }
        return Count(number)
    }
}

extension JSONValue: JSONArgumentValue {
    /// Any JSON: its declaration names the type (`@Arg("…", type: "{type, …}")`).
    public static var wireType: String { "any" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> JSONValue { value }
}

extension Array: ArgumentValue where Element: ArrayArgumentElement {}

extension Array: JSONArgumentValue where Element: ArrayArgumentElement {
    public static var wireType: String { "[" + Element.elementWireType + "]" }

    public static func read(_ name: String, from arguments: inout Arguments) throws(WireError) -> [Element] {
        try Element.readArray(name, from: &arguments)
    }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> [Element] {
        guard case .array(let elements) = value else { throw Arguments.wrongType(name, "an array") }
        return try Element.decodeArray(elements, name: name)
    }
}

/// What an array argument can hold: identifiers, items, sections, index paths, any JSON.
public protocol ArrayArgumentElement: Sendable {
    /// The element's type as `describe` names it inside brackets ("string" for "[string]").
    static var elementWireType: String { get }
    /// The elements of the array argument `name`, errors naming `name[index]`.
    static func decodeArray(_ elements: [JSONValue], name: String) throws(WireError) -> [Self]
    /// Reads the array argument `name` (items decoded straight from the line come back as they are).
    static func readArray(_ name: String, from arguments: inout Arguments) throws(WireError) -> [Self]
}

extension ArrayArgumentElement {
    public static func readArray(_ name: String, from arguments: inout Arguments) throws(WireError) -> [Self] {
        try decodeArray(arguments.array(name), name: name)
    }
}

extension String: ArrayArgumentElement {
    public static var elementWireType: String { "string" }

    public static func decodeArray(_ elements: [JSONValue], name: String) throws(WireError) -> [String] {
        try elements.enumerated().map { (index, element) throws(WireError) -> String in
            guard case .string(let text) = element else { throw Arguments.wrongType("\(name)[\(index)]", "a string") }
            return text
        }
    }
}

extension Item: ArrayArgumentElement {
    public static var elementWireType: String { "item" }

    public static func decodeArray(_ elements: [JSONValue], name: String) throws(WireError) -> [Item] {
        try WireDecoding.items(elements, field: name)
    }

    public static func readArray(_ name: String, from arguments: inout Arguments) throws(WireError) -> [Item] {
        try arguments.items(name)
    }
}

extension Section: ArrayArgumentElement {
    public static var elementWireType: String { "section" }

    public static func decodeArray(_ elements: [JSONValue], name: String) throws(WireError) -> [Section] {
        try WireDecoding.sections(elements, field: name)
    }
}

extension JSONValue: ArrayArgumentElement {
    public static var elementWireType: String { "any" }

    public static func decodeArray(_ elements: [JSONValue], name: String) throws(WireError) -> [JSONValue] { elements }
}

extension IndexPath: JSONArgumentValue, ArrayArgumentElement {
    public static var wireType: String { "[section, item]" }
    public static var elementWireType: String { wireType }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> IndexPath {
        try WireDecoding.indexPath(value, field: name)
    }

    public static func decodeArray(_ elements: [JSONValue], name: String) throws(WireError) -> [IndexPath] {
        try elements.enumerated().map { (index, element) throws(WireError) in try decode(element, name: "\(name)[\(index)]") }
    }
}

/// An `apply`'s snapshot: `{"sections": [{"id", "data"?, "items"}]}` (decoded straight from the line
/// when it has the usual shape).
public struct SnapshotArgument: ArgumentValue {
    public var sections: [(section: Section, items: [Item])]

    public static var wireType: String { "{sections: [{id, data?, items}]}" }
    public static var isRequired: Bool { true }

    public static func read(_ name: String, from arguments: inout Arguments) throws(WireError) -> SnapshotArgument {
        SnapshotArgument(sections: try arguments.snapshot(name))
    }
}

extension SectionSnapshot: JSONArgumentValue {
    /// An outline: `{"items": [{"id", "data"?, "children"?, "expanded"?}]}`.
    public static var wireType: String { "{items: [{id, data?, children?, expanded?}]}" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> SectionSnapshot {
        try WireDecoding.sectionSnapshot(value, field: name)
    }
}

extension Dictionary: ArgumentValue, JSONArgumentValue where Key == String, Value == JSONValue {
    /// A JSON object: its declaration names the members (`@Arg("…", type: "{selected?, …}")`).
    public static var wireType: String { "object" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> [String: JSONValue] {
        guard case .object(let members) = value else { throw WireError(.invalidArgument, "Argument \"\(name)\" must be an object.") }
        return members
    }
}
