import DiffableCore

/// A request's arguments by name, in the order the line gave them: a short list searched from the front.
///
/// A request names a handful of arguments, so a list beats a hash table: one allocation, no hashing, no
/// buckets to reserve. The decoder (`Request.decode(line:)`) gives up on lines with more than
/// `decodedLimit` members, and the reference path that takes them over builds this from a dictionary,
/// where each name is already unique; a command reads a fixed number of names, so a request with many
/// (unknown) members costs linear time, never quadratic.
public struct ArgumentMembers: Sendable, Sequence {
    private var entries: [(name: String, value: JSONValue)] = []

    /// The most members the one-pass decoder keeps (it checks each new name against the earlier ones).
    static let decodedLimit = 16

    public init() {}

    /// An empty list that fills `storage` (an empty array, see `RequestBuffers`).
    init(reusing storage: [(name: String, value: JSONValue)]) {
        entries = storage
    }

    /// The list's array (kept by `RequestBuffers` for the next request).
    var storage: [(name: String, value: JSONValue)] { entries }

    public init(_ members: [String: JSONValue]) {
        entries.reserveCapacity(members.count)
        for (name, value) in members { entries.append((name, value)) }
    }

    /// The value of `name`, or `nil` when the request has no such member. Setting `nil` removes it.
    public subscript(name: String) -> JSONValue? {
        get {
            guard let index = index(of: name) else { return nil }
            return entries[index].value
        }
        set {
            if let index = index(of: name) {
                if let newValue {
                    entries[index].value = newValue
                } else {
                    entries.remove(at: index)
                }
            } else if let newValue {
                // Room for a request's usual arguments at once.
                if entries.isEmpty { entries.reserveCapacity(4) }
                entries.append((name, newValue))
            }
        }
    }

    /// The members, in the order given.
    public func makeIterator() -> IndexingIterator<[(name: String, value: JSONValue)]> { entries.makeIterator() }

    /// The members' names, in the order given.
    public var keys: [String] { entries.map(\.name) }
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    private func index(of name: String) -> Int? {
        for index in entries.indices where entries[index].name == name { return index }
        return nil
    }
}
