/// Decodes a declaration (a type whose stored properties are `@Arg`s, or groups of them) from a
/// request's already parsed arguments, in one pass, in the order the properties are declared: what a
/// type declares is what it reads, so an argument nobody declared is left unread and
/// `Arguments.finish()` calls it unknown. Nested `Decodable` properties without a wrapper are groups
/// (such as every mutation's target) and read their arguments from the same object.
public final class ArgumentDecoder: Decoder {
    /// The arguments being read (marked read as they are).
    var arguments: Arguments
    /// The name of the argument being decoded.
    var currentName = ""

    private init(_ arguments: Arguments) { self.arguments = arguments }

    /// Decodes `type` from `arguments`, marking what it reads.
    ///
    /// - Throws: the first argument's error (`invalid-argument`), in declaration order.
    public static func decode<T: Decodable>(_ type: T.Type, from arguments: inout Arguments) throws(WireError) -> T {
        let decoder = ArgumentDecoder(Arguments([:]))
        swap(&decoder.arguments, &arguments)
        defer { swap(&decoder.arguments, &arguments) }
        do {
            return try T(from: decoder)
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.internal, "\(error)")
        }
    }

    public var codingPath: [any CodingKey] { [] }
    public var userInfo: [CodingUserInfoKey: Any] { [:] }

    public func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ArgumentContainer<Key>(decoder: self))
    }

    public func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Self.notAnArgument }
    public func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Self.notAnArgument }

    static let notAnArgument = WireError(.internal, "A declaration's properties are arguments (@Arg) or groups of them.")
}

/// The request object as a keyed container: every `decode` reads one argument (or a group, flat).
struct ArgumentContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ArgumentDecoder

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }
    func contains(_ key: Key) -> Bool { true }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        decoder.currentName = key.stringValue
        return try T(from: decoder)
    }

    func decodeNil(forKey key: Key) throws -> Bool { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { throw ArgumentDecoder.notAnArgument }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { throw ArgumentDecoder.notAnArgument }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw ArgumentDecoder.notAnArgument
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw ArgumentDecoder.notAnArgument }
    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
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
public protocol ArgumentGroup: Decodable, Sendable {}

/// A value a declaration works out from its arguments once they are decoded (in `validate`), kept for
/// `run`: no argument, nothing decoded.
@propertyWrapper
public struct Prepared<Value: Sendable>: Sendable, Decodable {
    public var wrappedValue: Value?

    public init() { wrappedValue = nil }

    public init(from decoder: any Decoder) throws { wrappedValue = nil }
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
