import DiffableCore

/// A request's arguments by name, in the order the line gave them: a short list searched from the front.
///
/// A request names a handful of arguments, so a list beats a hash table: one allocation, no hashing, no
/// buckets to reserve. The decoder (`Request.decode(line:)`) gives up on lines with more than
/// `decodedLimit` members, and the reference path that takes them over builds this from a dictionary,
/// where each name is already unique; a command reads a fixed number of names, so a request with many
/// (unknown) members costs linear time, never quadratic.
public struct ArgumentMembers: Sendable, ExpressibleByDictionaryLiteral {
    private var names: [String] = []
    private var values: [JSONValue] = []

    /// The most members the one-pass decoder keeps (it checks each new name against the earlier ones).
    static let decodedLimit = 16

    public init() {}

    public init(_ members: [String: JSONValue]) {
        names.reserveCapacity(members.count)
        values.reserveCapacity(members.count)
        for (name, value) in members {
            names.append(name)
            values.append(value)
        }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The value of `name`, or `nil` when the request has no such member. Setting `nil` removes it.
    public subscript(name: String) -> JSONValue? {
        get {
            guard let index = index(of: name) else { return nil }
            return values[index]
        }
        set {
            if let index = index(of: name) {
                if let newValue {
                    values[index] = newValue
                } else {
                    names.remove(at: index)
                    values.remove(at: index)
                }
            } else if let newValue {
                if names.isEmpty {
                    // Room for a request's usual arguments at once.
                    names.reserveCapacity(4)
                    values.reserveCapacity(4)
                }
                names.append(name)
                values.append(newValue)
            }
        }
    }

    /// The members' names, in the order given.
    public var keys: [String] { names }
    public var count: Int { names.count }
    public var isEmpty: Bool { names.isEmpty }

    /// The members as a dictionary (for code that hands them on as a JSON object).
    public var dictionary: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: zip(names, values))
    }

    private func index(of name: String) -> Int? {
        for index in names.indices where names[index] == name { return index }
        return nil
    }
}
