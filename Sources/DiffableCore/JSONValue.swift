/// A JSON value: the payload a section or an item may carry.
///
/// Identity in a snapshot is the identifier; the payload is content. Two payloads are equal when they
/// are structurally equal: objects compare as unordered maps, arrays element by element, and numbers by
/// their kind and value (`1` and `1.0` are different payloads, because they are different JSON texts).
///
/// Comparing two payloads that share storage (an unchanged item copied from one snapshot into the next)
/// takes constant time, because `Array`, `Dictionary` and `String` compare identical buffers without
/// looking at their contents.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// An integral number that fits in 64 bits.
    case int(Int)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    /// Whether this is `null`, the payload of an item that carries none.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key` when this is an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The value at a dotted path such as `lastAnswer.content` or `items.0.title`, else `nil`.
    ///
    /// Each path component selects an object member, or an array element when it is a decimal index.
    public func value(atPath path: some StringProtocol) -> JSONValue? {
        var current = self
        for component in path.split(separator: ".", omittingEmptySubsequences: false) {
            switch current {
            case .object(let members):
                guard let next = members[String(component)] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(component), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// The string when this is a string, else `nil`.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The integer when this is an integral number, else `nil`.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The elements when this is an array, else an empty array.
    public var arrayValue: [JSONValue] {
        if case .array(let values) = self { return values }
        return []
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text, with object members in key order so the text is deterministic.
    public var description: String {
        var output = ""
        write(to: &output)
        return output
    }

    /// Appends compact JSON text to `output` (object members sorted by key).
    public func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value):
            if value.isFinite {
                output += String(value)
            } else {
                output += "null"  // JSON has no infinities or NaN.
            }
        case .string(let value): Self.writeQuoted(value, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                Self.writeQuoted(key, to: &output)
                output += ":"
                members[key]!.write(to: &output)
            }
            output += "}"
        }
    }

    /// Appends `string` as a JSON string literal, escaping what JSON requires.
    public static func writeQuoted(_ string: String, to output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
