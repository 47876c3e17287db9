import DiffableCore

/// An `items` argument decoded straight from the line: no JSON array, no JSON object per item.
struct DecodedItems: Sendable {
    var items: [Item]
    /// Which elements were `{id, data?}` objects rather than identifier strings (`nil`: none were).
    var objectForm: [Bool]?

    /// The argument as JSON again, for a command that reads it as JSON (e.g. as identifiers only).
    var json: JSONValue {
        .array(items.indices.map { index in
            Self.json(items[index], asObject: objectForm?[index] ?? false)
        })
    }

    static func json(_ item: Item, asObject: Bool) -> JSONValue {
        guard asObject else { return .string(item.id) }
        return item.data.isNull ? .object(["id": .string(item.id)]) : .object(["id": .string(item.id), "data": item.data])
    }

    /// A decoded snapshot as the JSON it was decoded from (items as objects where they carry data).
    static func json(snapshot: [(section: Section, items: [Item])]) -> JSONValue {
        .object([
            "sections": .array(snapshot.map { entry in
                var members: [String: JSONValue] = ["id": .string(entry.section.id), "items": .array(entry.items.map { json($0, asObject: !$0.data.isNull) })]
                if !entry.section.data.isNull { members["data"] = entry.section.data }
                return .object(members)
            })
        ])
    }
}

extension Request {
    /// Decodes a request line in one pass. The members that carry most of a line, `items` and an
    /// `apply`'s `snapshot`, go straight into items and sections when they have the usual shapes; the
    /// other members are JSON values as `init(_:)` makes them.
    ///
    /// Returns `nil` for a line that is not exactly a well-formed request of those shapes: not JSON, not
    /// an object, a duplicate key, a non-string `cmd`, and so on. The caller then parses the line the
    /// reference way (`JSONParser.parse`, `init(_:)`), which says what is wrong. So a line decoded here
    /// means exactly what it means there.
    public static func decode(line: UnsafeRawBufferPointer, maximumDepth: Int = JSONParser.defaultMaximumDepth) -> Request? {
        var buffers = RequestBuffers()
        return decode(line: line, maximumDepth: maximumDepth, reusing: &buffers)
    }

    /// `decode(line:maximumDepth:)` into `buffers`, lent request after request (a connection's): once the
    /// request before is done with them, its argument list and items array are filled again in place.
    public static func decode(line: UnsafeRawBufferPointer, maximumDepth: Int = JSONParser.defaultMaximumDepth, reusing buffers: inout RequestBuffers) -> Request? {
        var parser = JSONParser(bytes: line, maximumDepth: maximumDepth)
        do throws(JSONParseError) {
            return try parser.decodeRequest(reusing: &buffers)
        } catch {
            return nil
        }
    }
}

/// The arrays the one-pass decoder fills for a request, kept between requests so that a request does
/// not allocate them: each is taken empty (in place when nothing else holds it any more) and, filled,
/// both handed to the request and kept. Only a short line's are kept: what they hold until the next
/// request (its values) stays small, and a large request's arrays are freed with it.
public struct RequestBuffers {
    var members: [(name: String, value: JSONValue)] = []
    var items: [Item] = []
    /// The most elements an array may have room for to be kept.
    static let keptCapacity = 64
    /// The longest line whose arrays are kept.
    static let keptLineBytes = 4_096

    public init() {}

    /// The argument list's array, empty, for the next request.
    mutating func takeMembers() -> [(name: String, value: JSONValue)] { Self.take(&members) }

    /// The items array, empty, for the next request.
    mutating func takeItems() -> [Item] { Self.take(&items) }

    /// `array` emptied (in place when nothing else holds it any more); `array` itself is left empty.
    private static func take<Element>(_ array: inout [Element]) -> [Element] {
        var taken: [Element] = []
        swap(&taken, &array)
        taken.removeAll(keepingCapacity: true)
        return taken
    }

    /// Keeps what a request was given, when small enough.
    mutating func keep(members: [(name: String, value: JSONValue)], items: [Item]?) {
        if members.capacity <= Self.keptCapacity { self.members = members }
        if let items, items.capacity <= Self.keptCapacity { self.items = items }
    }
}

extension JSONParser {
    /// Thrown inside the decoder when the line is not one it decodes (the caller falls back).
    private static let notDecoded = JSONParseError(offset: 0, reason: "not decoded here")

    /// `{"id"?: scalar, "cmd": string, …}` with `items`/`snapshot` decoded into the model.
    mutating func decodeRequest(reusing buffers: inout RequestBuffers) throws(JSONParseError) -> Request {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { throw Self.notDecoded }
        position += 1
        var members = ArgumentMembers(reusing: buffers.takeMembers())
        var id: JSONValue?
        var echoedID: EchoedID?
        var command: String?
        var items: DecodedItems?
        var snapshot: [(section: Section, items: [Item])]?
        // Every key once: the envelope and the decoded members count too.
        var seenID = false
        skipWhitespace()
        if current != UInt8(ascii: "}") {
            while true {
                // The envelope's and the decoded members' names are told from their bytes (no String made).
                let envelope = try envelopeMember()
                switch envelope {
                case .id:
                    guard !seenID else { throw Self.notDecoded }
                    let start = position
                    id = try parseValue(depth: 1)
                    echoedID = EchoedID(raw: bytes[start..<position])
                    seenID = true
                case .cmd:
                    guard command == nil, case .string(let name) = try parseValue(depth: 1) else { throw Self.notDecoded }
                    command = name
                case .items where current == UInt8(ascii: "["):
                    guard items == nil, members["items"] == nil else { throw Self.notDecoded }
                    let start = position
                    if let decoded = try decodeItems(depth: 2, into: buffers.takeItems()) {
                        items = decoded
                    } else {
                        position = start
                        members["items"] = try parseValue(depth: 1)
                    }
                case .snapshot where current == UInt8(ascii: "{"):
                    guard snapshot == nil, members["snapshot"] == nil else { throw Self.notDecoded }
                    let start = position
                    if let decoded = try decodeSnapshot() {
                        snapshot = decoded
                    } else {
                        position = start
                        members["snapshot"] = try parseValue(depth: 1)
                    }
                case .items, .snapshot, .other:
                    let key: String
                    if let name = envelope.name { key = name } else { key = try parseMemberName() }
                    guard members[key] == nil, members.count < ArgumentMembers.decodedLimit,
                        !(key == "items" && items != nil), !(key == "snapshot" && snapshot != nil)
                    else { throw Self.notDecoded }
                    members[key] = try parseValue(depth: 1)
                }
                guard try continuesAfterElement(closing: UInt8(ascii: "}")) else { break }
            }
        } else {
            position += 1
        }
        skipWhitespace()
        guard position == bytes.count, let command else { throw Self.notDecoded }
        if bytes.count <= RequestBuffers.keptLineBytes { buffers.keep(members: members.storage, items: items?.items) }
        var arguments = Arguments(members: members)
        arguments.decodedItems = items
        arguments.decodedSnapshot = snapshot
        return Request(id: id, echoedID: echoedID, command: command, arguments: arguments)
    }

    /// Whether the line holds `literal`'s bytes at `offset` (the caller checked there is room).
    private func spells(_ literal: StaticString, at offset: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        for index in 0..<count where bytes[offset + index] != expected[index] { return false }
        return true
    }

    /// A member name the decoder reads from its bytes.
    private enum EnvelopeMember {
        case id, cmd, items, snapshot
        /// Any other name: not yet read (the parser is still at its opening quote).
        case other

        /// The name as a string (`nil` for `other`, which the caller reads itself).
        var name: String? {
            switch self {
            case .id: return "id"
            case .cmd: return "cmd"
            case .items: return "items"
            case .snapshot: return "snapshot"
            case .other: return nil
            }
        }
    }

    /// At a member name: when it is `"id"`, `"cmd"`, `"items"` or `"snapshot"`, moves past it and its colon
    /// and says which; else stays put (`other`). A name with an escape is thrown out (`notDecoded`): it may
    /// spell one of those, which the reference path then reads as it reads any name.
    private mutating func envelopeMember() throws(JSONParseError) -> EnvelopeMember {
        let start = position
        guard current == UInt8(ascii: "\"") else { return .other }
        var end = start + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
            if bytes[end] == UInt8(ascii: "\\") { throw Self.notDecoded }
            end += 1
        }
        guard end < bytes.count else { return .other }
        let member: EnvelopeMember
        switch end - start - 1 {
        case 2 where spells("id", at: start + 1): member = .id
        case 3 where spells("cmd", at: start + 1): member = .cmd
        case 5 where spells("items", at: start + 1): member = .items
        case 8 where spells("snapshot", at: start + 1): member = .snapshot
        default: return .other
        }
        position = end + 1
        skipWhitespace()
        guard current == UInt8(ascii: ":") else {
            position = start
            return .other
        }
        position += 1
        skipWhitespace()
        return member
    }

    /// An array at `depth` of identifier strings and `{"id": string, "data"?: any}` objects; `nil` (the
    /// position then undefined) for any other element, so the caller parses the member as JSON.
    /// `storage`: an empty array to fill (see `RequestBuffers`).
    mutating func decodeItems(depth: Int, into storage: consuming [Item] = []) throws(JSONParseError) -> DecodedItems? {
        position += 1  // [
        var decoded = DecodedItems(items: storage, objectForm: nil)
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return decoded
        }
        while true {
            switch current {
            case UInt8(ascii: "\""):
                decoded.items.append(Item(try parseString()))
                decoded.objectForm?.append(false)
            case UInt8(ascii: "{"):
                guard let item = try decodeIdentified(depth: depth + 1, allowingItems: false)?.0 else { return nil }
                if decoded.objectForm == nil { decoded.objectForm = Array(repeating: false, count: decoded.items.count) }
                decoded.items.append(item)
                decoded.objectForm!.append(true)
            default:
                return nil
            }
            guard try continuesAfterElement(closing: UInt8(ascii: "]")) else { return decoded }
        }
    }

    /// `{"id": string, "data"?: any}` (and `"items"?: [...]` for a section) at `depth`; `nil` for any
    /// other member or type. The items come back as the second value.
    private mutating func decodeIdentified(depth: Int, allowingItems: Bool) throws(JSONParseError) -> (Item, [Item]?)? {
        position += 1  // {
        var id: String?
        var data: JSONValue?
        var items: [Item]?
        var sawItems = false
        skipWhitespace()
        guard current != UInt8(ascii: "}") else { return nil }
        while true {
            switch try parseMemberName() {
            case "id":
                guard id == nil, current == UInt8(ascii: "\"") else { return nil }
                id = try parseString()
            case "data":
                guard data == nil else { return nil }
                data = try parseValue(depth: depth)
            case "items" where allowingItems:
                guard !sawItems else { return nil }
                sawItems = true
                if current == UInt8(ascii: "n") {
                    // null: no items, as WireDecoding.snapshot reads it.
                    _ = try parseValue(depth: depth)
                    items = []
                } else {
                    guard current == UInt8(ascii: "["), let decoded = try decodeItems(depth: depth + 1) else { return nil }
                    items = decoded.items
                }
            default:
                return nil
            }
            guard try continuesAfterElement(closing: UInt8(ascii: "}")) else {
                guard let id else { return nil }
                return (Item(id, data: data ?? .null), allowingItems ? (items ?? []) : nil)
            }
        }
    }

    /// `{"sections": [{"id", "data"?, "items"?}, …]}` (an `apply`'s snapshot, at depth 2); `nil` for any
    /// other shape.
    mutating func decodeSnapshot() throws(JSONParseError) -> [(section: Section, items: [Item])]? {
        position += 1  // {
        skipWhitespace()
        guard try parseMemberName() == "sections", current == UInt8(ascii: "[") else { return nil }
        position += 1
        var sections: [(section: Section, items: [Item])] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                guard current == UInt8(ascii: "{"), let (section, items) = try decodeIdentified(depth: 4, allowingItems: true) else { return nil }
                sections.append((Section(section.id, data: section.data), items ?? []))
                guard try continuesAfterElement(closing: UInt8(ascii: "]")) else { break }
            }
        }
        skipWhitespace()
        guard current == UInt8(ascii: "}") else { return nil }
        position += 1
        return sections
    }
}
