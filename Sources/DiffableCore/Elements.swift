/// An item of a snapshot: its identifier, unique in the whole snapshot, and its payload.
///
/// Identity is `id` alone; `data` is content. Two items with the same `id` and different `data` are the
/// same item in different states, which the diff reports as a reconfigure.
public struct Item: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier, unique among all items of a snapshot.
    public var id: String
    /// The payload; `.null` when the item carries none.
    public var data: JSONValue

    /// Creates an item with an identifier and an optional payload.
    public init(_ id: String, data: JSONValue = .null) {
        self.id = id
        self.data = data
    }

    public init(stringLiteral id: String) { self.init(id) }

    public var description: String { data.isNull ? id : "\(id)=\(data)" }
}

/// A section of a snapshot: its identifier, unique among the sections, and its payload.
public struct Section: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier, unique among the sections of a snapshot.
    public var id: String
    /// The payload; `.null` when the section carries none.
    public var data: JSONValue

    /// Creates a section with an identifier and an optional payload.
    public init(_ id: String, data: JSONValue = .null) {
        self.id = id
        self.data = data
    }

    public init(stringLiteral id: String) { self.init(id) }

    public var description: String { data.isNull ? id : "\(id)=\(data)" }
}

/// The position of an item: its section's index and its index within that section.
public struct IndexPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var section: Int
    public var item: Int

    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    public static func < (lhs: IndexPath, rhs: IndexPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    public var description: String { "[\(section), \(item)]" }
}
