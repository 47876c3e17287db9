import DiffableCore

/// One request line: `{"id": <optional JSON value>, "cmd": "<command>", <arguments>}`.
public struct Request: Sendable {
    /// The caller's identifier: any JSON value.
    public var id: JSONValue?
    /// `id` exactly as the line had it, echoed byte for byte in the reply (a 30-digit number stays one).
    public var rawID: [UInt8]? {
        get { echoedID?.bytes }
        set { echoedID = newValue.map(EchoedID.init(bytes:)) }
    }
    /// `id` as the reply echoes it: a plain integer without an allocation, any other value as its bytes.
    public var echoedID: EchoedID?
    public var command: String
    public var arguments: Arguments

    public init(id: JSONValue? = nil, command: String, arguments: [String: JSONValue] = [:]) {
        self.id = id
        self.echoedID = id.map { EchoedID(bytes: $0.jsonBytes) }
        self.command = command
        self.arguments = Arguments(arguments)
    }

    /// A request as the one-pass decoder makes it (the id's echo given, the arguments as read).
    init(id: JSONValue?, echoedID: EchoedID?, command: String, arguments: Arguments) {
        self.id = id
        self.echoedID = echoedID
        self.command = command
        self.arguments = arguments
    }

    /// Decodes a parsed line (`rawID` is the id's encoding; `rawID(in:)` finds the line's own bytes).
    ///
    /// - Throws: `invalid-request` when it is not an object with a string `cmd`.
    public init(_ value: JSONValue) throws(WireError) {
        guard case .object(var members) = value else {
            throw WireError(.invalidRequest, "A request is a JSON object with a \"cmd\" member.")
        }
        let id = members.removeValue(forKey: "id")
        guard let command = members.removeValue(forKey: "cmd") else {
            throw WireError(.invalidRequest, "The request has no \"cmd\" member.")
        }
        guard case .string(let name) = command else {
            throw WireError(.invalidRequest, "\"cmd\" must be a string.")
        }
        self.id = id
        self.echoedID = id.map { EchoedID(bytes: $0.jsonBytes) }
        self.command = name
        self.arguments = Arguments(members)
    }

    /// The bytes of the `id` member of a line that is a JSON object, exactly as sent, so that any reply,
    /// an error for a line that is no valid request included, can echo it; `nil` when it has none.
    public static func rawID(in line: UnsafeRawBufferPointer, maximumDepth: Int = JSONParser.defaultMaximumDepth) -> [UInt8]? {
        var parser = JSONParser(bytes: line, maximumDepth: maximumDepth)
        do throws(JSONParseError) {
            return try parser.rawMember("id")
        } catch {
            return nil
        }
    }
}

extension JSONParser {
    /// The bytes of the value of the top-level object's member `wanted` (the first one of that name).
    mutating func rawMember(_ wanted: String) throws(JSONParseError) -> [UInt8]? {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { return nil }
        position += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") { return nil }
        while true {
            let key = try parseMemberName()
            let start = position
            _ = try parseValue(depth: 1)
            if key == wanted { return Array(bytes[start..<position]) }
            guard try continuesAfterElement(closing: UInt8(ascii: "}")) else { return nil }
        }
    }
}

/// A request's arguments, read by name. Every read marks the argument as used; `finish()` rejects any
/// argument nobody read, so unknown (misspelt) arguments are errors rather than silently ignored.
public struct Arguments: Sendable {
    /// The arguments as JSON values, except the ones decoded straight into the model (below).
    public private(set) var members: ArgumentMembers
    /// The present arguments read so far, each once (no hashing, no allocation for the first four).
    private var readNames = ReadNames()
    /// `items`, decoded from the line straight into items (see `Request.decode(line:)`).
    var decodedItems: DecodedItems?
    /// `snapshot`, decoded from the line straight into sections and items.
    var decodedSnapshot: [(section: Section, items: [Item])]?

    public init(_ members: [String: JSONValue]) {
        self.members = ArgumentMembers(members)
    }

    /// Arguments already in a member list (the one-pass decoder's).
    init(members: ArgumentMembers) {
        self.members = members
    }

    /// The raw value of an argument, or `nil` when absent. `null` counts as absent (it is still marked
    /// read, so it is no unknown argument). A decoded argument is given back as the JSON it was decoded from.
    ///
    /// Every typed reader below goes through here, so no command can tell `null` from absence.
    public mutating func value(_ name: String) -> JSONValue? {
        if let decoded = decodedJSON(name) {
            markRead(name)
            return decoded
        }
        guard let value = members[name] else { return nil }
        markRead(name)
        // Not `value.isNull ? nil : value`: JSONValue is ExpressibleByNilLiteral, so that `nil` would be
        // `JSONValue.null` and the null argument would come back as present.
        if value.isNull { return nil }
        return value
    }

    /// Whether the argument is given and not `null`; marks it read when it is there at all (a `null`
    /// argument is absent, not unknown). Decoded members are not turned back into JSON.
    public mutating func isPresent(_ name: String) -> Bool {
        if (name == "items" && decodedItems != nil) || (name == "snapshot" && decodedSnapshot != nil) {
            markRead(name)
            return true
        }
        guard let value = members[name] else { return false }
        markRead(name)
        return !value.isNull
    }

    /// Whether the argument `name` was read.
    func wasRead(_ name: String) -> Bool { readNames.contains(name) }

    private mutating func markRead(_ name: String) {
        if !readNames.contains(name) { readNames.insert(name) }
    }

    /// The JSON of a decoded argument (only commands that read it as JSON need it).
    private func decodedJSON(_ name: String) -> JSONValue? {
        if name == "items", let decodedItems { return decodedItems.json }
        if name == "snapshot", let decodedSnapshot { return DecodedItems.json(snapshot: decodedSnapshot) }
        return nil
    }

    /// An items argument: identifiers, or `{id, data?}` objects.
    public mutating func items(_ name: String) throws(WireError) -> [Item] {
        if name == "items", let decodedItems {
            markRead(name)
            return decodedItems.items
        }
        return try WireDecoding.items(array(name), field: name)
    }

    /// A snapshot argument: `{"sections": [{"id", "data"?, "items"?}]}`.
    public mutating func snapshot(_ name: String) throws(WireError) -> [(section: Section, items: [Item])] {
        if name == "snapshot", let decodedSnapshot {
            markRead(name)
            return decodedSnapshot
        }
        return try WireDecoding.snapshot(required(name), field: name)
    }

    /// A required argument's raw value.
    public mutating func required(_ name: String) throws(WireError) -> JSONValue {
        guard let value = value(name) else { throw missing(name) }
        return value
    }

    public mutating func string(_ name: String) throws(WireError) -> String {
        guard case .string(let text) = try required(name) else { throw Self.wrongType(name, "a string") }
        return text
    }

    public mutating func optionalString(_ name: String) throws(WireError) -> String? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value else { throw Self.wrongType(name, "a string") }
        return text
    }

    public mutating func optionalInt(_ name: String) throws(WireError) -> Int? {
        guard let value = value(name) else { return nil }
        switch value {
        case .int(let number): return number
        case .double(let number) where number == number.rounded() && abs(number) < 9e15: return Int(number)
        default: throw Self.wrongType(name, "an integer")
        }
    }

    public mutating func int(_ name: String) throws(WireError) -> Int {
        guard let number = try optionalInt(name) else { throw missing(name) }
        return number
    }

    /// The integers a request may carry as counts, offsets, indexes and versions: 0 through 2^53 − 1
    /// (what every JSON implementation represents exactly). Sums of two of them cannot overflow `Int`.
    public static let countRange = 0...(1 << 53 - 1)

    /// An optional integer argument within `range`; outside it is `invalid-argument` naming the argument
    /// and the range.
    public mutating func optionalInt(_ name: String, in range: ClosedRange<Int>) throws(WireError) -> Int? {
        guard let number = try optionalInt(name) else { return nil }
        guard range.contains(number) else { throw Self.outOfRange(name, range) }
        return number
    }

    /// A required integer argument within `range`.
    public mutating func int(_ name: String, in range: ClosedRange<Int>) throws(WireError) -> Int {
        guard let number = try optionalInt(name, in: range) else { throw missing(name) }
        return number
    }

    /// The error for an integer argument outside `range`.
    public static func outOfRange(_ name: String, _ range: ClosedRange<Int>) -> WireError {
        WireError(.invalidArgument, "Argument \"\(name)\" must be an integer from \(range.lowerBound) to \(range.upperBound).")
    }

    public mutating func optionalBool(_ name: String) throws(WireError) -> Bool? {
        guard let value = value(name) else { return nil }
        guard case .bool(let flag) = value else { throw Self.wrongType(name, "a boolean") }
        return flag
    }

    public mutating func array(_ name: String) throws(WireError) -> [JSONValue] {
        guard case .array(let elements) = try required(name) else { throw Self.wrongType(name, "an array") }
        return elements
    }

    public mutating func optionalArray(_ name: String) throws(WireError) -> [JSONValue]? {
        guard let value = value(name) else { return nil }
        guard case .array(let elements) = value else { throw Self.wrongType(name, "an array") }
        return elements
    }

    public mutating func strings(_ name: String) throws(WireError) -> [String] {
        try array(name).enumerated().map { (index, element) throws(WireError) -> String in
            guard case .string(let text) = element else { throw Self.wrongType("\(name)[\(index)]", "a string") }
            return text
        }
    }

    /// Exactly one of two alternative arguments (such as `beforeItem` / `afterItem`).
    public mutating func oneOf(_ first: String, _ second: String) throws(WireError) -> (name: String, value: String) {
        let a = try optionalString(first)
        let b = try optionalString(second)
        switch (a, b) {
        case (let value?, nil): return (first, value)
        case (nil, let value?): return (second, value)
        case (nil, nil): throw WireError(.invalidArgument, "Missing argument \"\(first)\" or \"\(second)\".")
        default: throw WireError(.invalidArgument, "Give either \"\(first)\" or \"\(second)\", not both.")
        }
    }

    /// Rejects arguments that were not read, suggesting for each the closest of `declared` (the names the
    /// command or object declares) when one is close: `Unknown argument "tosection"; did you mean
    /// "toSection"?`. `declared` is only evaluated when there is an unknown argument.
    public func finish(declared: @autoclosure () -> [String] = []) throws(WireError) {
        let decoded = (decodedItems == nil ? 0 : 1) + (decodedSnapshot == nil ? 0 : 1)
        guard readNames.count < members.count + decoded else { return }
        let unknown = givenNames.filter { !readNames.contains($0) }.sorted()
        guard !unknown.isEmpty else { return }
        // A name the request already gives is no suggestion for another.
        let candidates = declared().filter { !readNames.contains($0) }
        throw WireError(.invalidArgument, Self.unknownArgumentsMessage(unknown, suggestingFrom: candidates))
    }

    /// Every argument name the request gives, the ones decoded straight into the model too.
    var givenNames: [String] {
        var names = members.keys
        if decodedItems != nil { names.append("items") }
        if decodedSnapshot != nil { names.append("snapshot") }
        return names
    }

    static func wrongType(_ name: String, _ expected: String) -> WireError {
        WireError(.invalidArgument, "Argument \"\(name)\" must be \(expected).")
    }
}

/// A small set of argument names: the first four inline, any more in an array.
struct ReadNames: Sendable {
    private var first: String?
    private var second: String?
    private var third: String?
    private var fourth: String?
    private var more: [String] = []
    private(set) var count = 0

    func contains(_ name: String) -> Bool {
        first == name || second == name || third == name || fourth == name || (!more.isEmpty && more.contains(name))
    }

    /// Adds `name` (not yet in the set).
    mutating func insert(_ name: String) {
        switch count {
        case 0: first = name
        case 1: second = name
        case 2: third = name
        case 3: fourth = name
        default: more.append(name)
        }
        count += 1
    }
}
