/// A declaration (a command, a group of arguments, an edit): a type whose stored properties are its
/// arguments (`@Arg`s) and groups of them. The build writes its `init(arguments:)`
/// (scripts/generate-argument-decoding), which reads them in one pass, in declaration order, each under
/// its property's name: what a type declares is what it reads, so an argument nobody declared is left
/// unread and `Arguments.finish()` calls it unknown.
public protocol ArgumentDecodable: Sendable {
    /// Reads the declared arguments from a request's (marking what it reads).
    ///
    /// - Throws: the first bad argument's error (`invalid-argument`), in declaration order.
    init(arguments: inout Arguments) throws(WireError)
}

/// One argument as `describe` documents it.
public struct ArgumentDocumentation: Sendable, Equatable {
    public let name: String
    public let type: String
    public let required: Bool
    public let summary: String

    public init(name: String, type: String, required: Bool, summary: String) {
        self.name = name
        self.type = type
        self.required = required
        self.summary = summary
    }

    /// The arguments `declaration` (a documentation instance: its `@Arg`s carry their summaries)
    /// declares, in declaration order, groups flattened in their place.
    public static func of(_ declaration: Any) -> [ArgumentDocumentation] {
        Mirror(reflecting: declaration).children.flatMap { child -> [ArgumentDocumentation] in
            guard let argument = child.value as? any DocumentedArgument else {
                return child.value is any ArgumentGroup ? of(child.value) : []
            }
            var name = child.label ?? ""
            if name.hasPrefix("_") { name.removeFirst() }
            return [ArgumentDocumentation(name: name, type: argument.documentedType, required: argument.isRequired, summary: argument.summary)]
        }
    }
}

/// Arguments declared together and decoded flat, from the same request object as the declaration
/// that holds them (such as every mutation's target, or a placement's two alternatives).
public protocol ArgumentGroup: ArgumentDecodable {}

/// A value a declaration works out from its arguments once they are decoded (in `validate`), kept for
/// `run`: no argument, nothing decoded.
@propertyWrapper
public struct Prepared<Value: Sendable>: Sendable {
    public var wrappedValue: Value?

    public init() { wrappedValue = nil }
}

/// What `ArgumentDocumentation` reads of an `Arg` whatever its value type.
protocol DocumentedArgument {
    var documentedType: String { get }
    var isRequired: Bool { get }
    var summary: String { get }
}

extension Arg: DocumentedArgument {
    var documentedType: String { type ?? Value.wireType }
    var isRequired: Bool { Value.isRequired || documentedAsRequired }
}
