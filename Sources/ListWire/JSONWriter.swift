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
    /// The bytes written, then zeros to the end of the storage: a write stores into place (one
    /// uniqueness check, no append of each piece); `bytes` trims the zeros.
    private var storage: [UInt8]
    /// The number of bytes written.
    public private(set) var count = 0
    /// Whether the next member or element needs a comma before it, per open container: one bit per
    /// level for the innermost 64 (no allocation), the levels beyond in `deeperNeedsComma`.
    private var commaBits: UInt64 = 0
    private var depth = 0
    private var deeperNeedsComma: [Bool] = []

    public init(capacity: Int = 256) {
        storage = [UInt8](repeating: 0, count: max(capacity, 16))
    }

    /// A writer into `buffer`'s storage (emptied, its capacity kept; without a copy when nothing else
    /// holds it): a caller that writes line after line hands each one's bytes back as the next buffer
    /// and allocates nothing per line.
    public init(reusing buffer: consuming [UInt8]) {
        storage = consume buffer
        storage.removeAll(keepingCapacity: true)
        // Zeros up to the capacity (at most 4 KiB of them: a buffer that once held a long line is not
        // cleared whole for every short one; it is zeroed further as the line grows).
        storage.append(contentsOf: repeatElement(0, count: max(128, min(storage.capacity, 4_096))))
    }

    /// The bytes written (the writer may go on writing after it: the next write copies them first
    /// when the caller still holds them).
    public var bytes: [UInt8] {
        mutating get {
            if storage.count != count { storage.removeLast(storage.count - count) }
            return storage
        }
    }

    // MARK: Writing in place

    /// Makes room for `more` bytes after the written ones.
    @inline(__always)
    private mutating func reserve(_ more: Int) {
        if count + more > storage.count { grow(to: count + more) }
    }

    /// Extends the zeros to at least `size` bytes, doubling the storage (so a long line costs linear time).
    @inline(never)
    private mutating func grow(to size: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(size, 2 * storage.count, 64) - storage.count))
    }

    /// Writes `length` bytes in place: `body` stores them from the pointer it is given (room reserved).
    @inline(__always)
    private mutating func write(_ length: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Void) {
        reserve(length)
        let start = count
        storage.withUnsafeMutableBufferPointer { buffer in body(buffer.baseAddress! + start) }
        count += length
    }

    /// Writes one byte.
    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        write(1) { $0.pointee = byte }
    }

    /// Writes the bytes of `source`.
    @inline(__always)
    private mutating func put(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        write(source.count) { UnsafeMutableRawPointer($0).copyMemory(from: base, byteCount: source.count) }
    }

    /// Writes the bytes of a literal.
    @inline(__always)
    private mutating func put(_ literal: StaticString) {
        put(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    // MARK: Containers

    public mutating func beginObject() {
        separate()
        put(UInt8(ascii: "{"))
        open()
    }

    public mutating func endObject() {
        close()
        put(UInt8(ascii: "}"))
    }

    public mutating func beginArray() {
        separate()
        put(UInt8(ascii: "["))
        open()
    }

    public mutating func endArray() {
        close()
        put(UInt8(ascii: "]"))
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
        put(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes a member name known when the program is built: its bytes as they are (a name that needs
    /// escaping must go through `key(_:)`). The value written next belongs to it.
    public mutating func key(literal name: StaticString) {
        let comma = needsComma() ? 1 : 0
        // `,"name":` in one write.
        let length = name.utf8CodeUnitCount
        write(comma + length + 3) { member in
            if comma == 1 { member[0] = UInt8(ascii: ",") }
            member[comma] = UInt8(ascii: "\"")
            (member + comma + 1).update(from: name.utf8Start, count: length)
            member[comma + 1 + length] = UInt8(ascii: "\"")
            member[comma + 2 + length] = UInt8(ascii: ":")
        }
        afterKey = true
    }

    /// Whether a member name was just written (its value takes no comma).
    private var afterKey = false

    /// Adds the comma between members or elements, and marks the container as non-empty.
    private mutating func separate() {
        if needsComma() { put(UInt8(ascii: ",")) }
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
        put("null")
    }

    public mutating func bool(_ value: Bool) {
        separate()
        if value { put("true") } else { put("false") }
    }

    public mutating func int(_ value: Int) {
        separate()
        if value >= 0 && value < 10 {
            put(UInt8(ascii: "0") + UInt8(value))
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
            put(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    public mutating func double(_ value: Double) {
        separate()
        if value.isFinite {
            var text = value.description
            text.withUTF8 { put(UnsafeRawBufferPointer($0)) }
        } else {
            put("null")  // JSON has no infinities or NaN
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
        json.withUnsafeBytes { put($0) }
    }

    public mutating func raw(_ json: ArraySlice<UInt8>) {
        separate()
        json.withUnsafeBytes { put($0) }
    }

    // MARK: Strings

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func writeQuoted(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            let needsEscape = utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            guard needsEscape else {
                // The common case: the quoted text in one write.
                write(utf8.count + 2) { out in
                    out[0] = UInt8(ascii: "\"")
                    if let base = utf8.baseAddress { (out + 1).update(from: base, count: utf8.count) }
                    out[utf8.count + 1] = UInt8(ascii: "\"")
                }
                return
            }
            put(UInt8(ascii: "\""))
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                put(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart..<index])))
                runStart = index + 1
                put(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): put(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): put(UInt8(ascii: "\\"))
                case 0x0A: put(UInt8(ascii: "n"))
                case 0x0D: put(UInt8(ascii: "r"))
                case 0x09: put(UInt8(ascii: "t"))
                default:
                    put("u00")
                    put(Self.hexDigits[Int(byte >> 4)])
                    put(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            put(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart...])))
            put(UInt8(ascii: "\""))
        }
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
