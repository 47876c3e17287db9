import DiffableCore

/// Writes compact JSON as UTF-8 bytes. Object members of `JSONValue`s come out sorted by key, so the
/// same value always gives the same bytes; envelopes written with `key(_:)` keep the order written.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.key("ok"); writer.bool(true)
/// writer.endObject()
/// writer.bytes   // {"ok":true}
/// ```
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Whether the next member or element needs a comma before it, per open container: one bit per
    /// level for the innermost 64 (no allocation), the levels beyond in `deeperNeedsComma`.
    private var commaBits: UInt64 = 0
    private var depth = 0
    private var deeperNeedsComma: [Bool] = []

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// A writer into `buffer`'s storage (emptied, its capacity kept; without a copy when nothing else
    /// holds it): a caller that writes line after line hands each one's bytes back as the next buffer
    /// and allocates nothing per line.
    public init(reusing buffer: consuming [UInt8]) {
        bytes = consume buffer
        bytes.removeAll(keepingCapacity: true)
        if bytes.capacity == 0 { bytes.reserveCapacity(128) }
    }

    // MARK: Containers

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        open()
    }

    public mutating func endObject() {
        close()
        bytes.append(UInt8(ascii: "}"))
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        open()
    }

    public mutating func endArray() {
        close()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Enters a container (that needs no comma before its first member).
    private mutating func open() {
        if depth >= 64 {
            deeperNeedsComma.append(commaBits >> 63 != 0)
        }
        commaBits <<= 1
        depth += 1
    }

    /// Leaves a container, back to the enclosing one's comma state.
    private mutating func close() {
        depth -= 1
        commaBits >>= 1
        if depth >= 64, deeperNeedsComma.removeLast() { commaBits |= 1 << 63 }
    }

    /// Writes a member name; the value written next belongs to it.
    public mutating func key(_ name: String) {
        separate()
        writeQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes a member name known when the program is built: its bytes as they are (a name that needs
    /// escaping must go through `key(_:)`). The value written next belongs to it.
    public mutating func key(literal name: StaticString) {
        let comma = needsComma()
        // `,"name":` in one append (each append checks the buffer's uniqueness and capacity).
        let count = name.utf8CodeUnitCount
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count + 4) { member in
            var end = 0
            if comma {
                member[0] = UInt8(ascii: ",")
                end = 1
            }
            member[end] = UInt8(ascii: "\"")
            (member.baseAddress! + end + 1).update(from: name.utf8Start, count: count)
            member[end + 1 + count] = UInt8(ascii: "\"")
            member[end + 2 + count] = UInt8(ascii: ":")
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: member[..<(end + 3 + count)]))
        }
        afterKey = true
    }

    /// Whether a member name was just written (its value takes no comma).
    private var afterKey = false

    /// Adds the comma between members or elements, and marks the container as non-empty.
    private mutating func separate() {
        if needsComma() { bytes.append(UInt8(ascii: ",")) }
    }

    /// Whether the next member or element takes a comma before it (the caller writes it); marks the
    /// container as non-empty.
    private mutating func needsComma() -> Bool {
        if afterKey {
            afterKey = false
            return false
        }
        guard depth > 0 else { return false }
        defer { commaBits |= 1 }
        return commaBits & 1 != 0
    }

    // MARK: Scalars

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func int(_ value: Int) {
        separate()
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // The digits backwards into a fixed buffer, then appended in order (no String made).
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    public mutating func double(_ value: Double) {
        separate()
        if value.isFinite {
            bytes.append(contentsOf: value.description.utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)  // JSON has no infinities or NaN
        }
    }

    public mutating func string(_ value: String) {
        separate()
        writeQuoted(value)
    }

    /// Writes any JSON value (object members sorted by key).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .int(let number): int(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            if members.count <= 16 {
                // A small object (a cell's content, a state, an event's parts): its members' positions
                // sorted in place on the stack, no array per object.
                withUnsafeTemporaryAllocation(of: Dictionary<String, JSONValue>.Index.self, capacity: members.count) { order in
                    var count = 0
                    var position = members.startIndex
                    while position != members.endIndex {
                        // Insertion sort by key: at most 16 members.
                        let name = members[position].key
                        var slot = count
                        while slot > 0 && name < members[order[slot - 1]].key {
                            order[slot] = order[slot - 1]
                            slot -= 1
                        }
                        order[slot] = position
                        count += 1
                        position = members.index(after: position)
                    }
                    for slot in 0..<count {
                        let member = members[order[slot]]
                        key(member.key)
                        self.value(member.value)
                    }
                }
            } else {
                // Sorted pairs: one pass, no look-up per key.
                for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                    key(name)
                    self.value(member)
                }
            }
            endObject()
        }
    }

    /// Appends bytes that are already a JSON value (for example a cached encoding).
    /// An array of strings.
    public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    public mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    public mutating func raw(_ json: ArraySlice<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
    }

    // MARK: Strings

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func writeQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// Compact JSON bytes (object members sorted by key).
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }
}
