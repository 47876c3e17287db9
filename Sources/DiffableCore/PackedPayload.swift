/// An item's payload as a snapshot stores it: one compact byte string instead of a tree of values.
///
/// A two-field payload such as `{"title": "Item 7", "n": 7}` takes about 20 bytes here, where the
/// `JSONValue` tree takes a dictionary of some 200 bytes; `null` takes nothing (no allocation). The value
/// is rebuilt when something reads it (`value`), which costs a little for every read: snapshots keep
/// millions of payloads and read few of them at a time.
///
/// The encoding is canonical (object members sorted by key), so equal bytes mean equal values; unequal
/// bytes are compared as values, as `JSONValue` compares them.
///
/// Format: a tag byte, then
/// - `null` (0, or no bytes at all for the payload itself), `false` (1), `true` (2);
/// - an integer (3): zig-zag LEB128;
/// - a double (4): its 8 bytes, little-endian;
/// - a string (5): LEB128 byte count, UTF-8;
/// - an array (6): LEB128 count, the elements;
/// - an object (7): LEB128 count, then per member (sorted by key) the key's LEB128 byte count, its UTF-8
///   and the value.
public struct PackedPayload: Sendable {
    /// The encoding; empty for `null`.
    @usableFromInline var bytes: [UInt8]

    /// `null`.
    public static let null = PackedPayload(bytes: [])

    @usableFromInline init(bytes: [UInt8]) { self.bytes = bytes }

    /// Packs a value.
    public init(_ value: JSONValue) {
        guard !value.isNull else {
            bytes = []
            return
        }
        var bytes: [UInt8] = []
        Self.pack(value, into: &bytes)
        self.bytes = bytes
    }

    /// Whether the payload is `null`. O(1).
    @inlinable public var isNull: Bool { bytes.isEmpty }

    /// The payload as a value, rebuilt from its bytes. O(size of the payload).
    public var value: JSONValue {
        bytes.withUnsafeBufferPointer { Self.value(of: $0) }
    }

    /// The value packed in `buffer` (empty: `null`).
    static func value(of buffer: UnsafeBufferPointer<UInt8>) -> JSONValue {
        guard !buffer.isEmpty else { return .null }
        var offset = 0
        return unpack(buffer, at: &offset)
    }

    /// Appends the packing of `value` to `bytes` (nothing for `null`).
    static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        guard !value.isNull else { return }
        pack(value, into: &bytes)
    }

    /// Bytes the payload's encoding holds (for memory accounting).
    public var packedCount: Int { bytes.count }

    /// The member `name` of an object payload, rebuilt alone (the other members are skipped over, not
    /// rebuilt); `nil` when the payload is not an object or has no such member. Names compare as Swift
    /// compares strings, as a dictionary's keys do (bytes first; as strings when either is not ASCII).
    /// What a template reads of an item costs this, not the whole payload. O(size of the payload).
    public func member(_ name: String) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer -> JSONValue? in
            guard buffer.count > 0, buffer[0] == 7 else { return nil }
            var offset = 1
            let count = Int(Self.readVarint(buffer, at: &offset))
            var wanted = name
            return wanted.withUTF8 { key -> JSONValue? in
                let keyIsASCII = key.allSatisfy { $0 < 0x80 }
                for _ in 0..<count {
                    let length = Int(Self.readVarint(buffer, at: &offset))
                    let stored = UnsafeBufferPointer(rebasing: buffer[offset..<offset + length])
                    var matches = stored.elementsEqual(key)
                    if !matches && (!keyIsASCII || !stored.allSatisfy { $0 < 0x80 }) {
                        matches = String(decoding: stored, as: UTF8.self) == name
                    }
                    offset += length
                    if matches { return Self.unpack(buffer, at: &offset) }
                    Self.skip(buffer, at: &offset)
                }
                return nil
            }
        }
    }

    // MARK: Encoding

    private static func pack(_ value: JSONValue, into bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(0)
        case .bool(let flag): bytes.append(flag ? 2 : 1)
        case .int(let number):
            bytes.append(3)
            writeVarint(UInt64(bitPattern: Int64(number << 1) ^ Int64(number >> (Int.bitWidth - 1))), into: &bytes)
        case .double(let number):
            bytes.append(4)
            withUnsafeBytes(of: number.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        case .string(let text):
            bytes.append(5)
            writeString(text, into: &bytes)
        case .array(let elements):
            bytes.append(6)
            writeVarint(UInt64(elements.count), into: &bytes)
            for element in elements { pack(element, into: &bytes) }
        case .object(let members):
            bytes.append(7)
            writeVarint(UInt64(members.count), into: &bytes)
            for key in members.keys.sorted() {
                writeString(key, into: &bytes)
                pack(members[key]!, into: &bytes)
            }
        }
    }

    private static func writeString(_ text: String, into bytes: inout [UInt8]) {
        writeVarint(UInt64(text.utf8.count), into: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    private static func writeVarint(_ value: UInt64, into bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    // MARK: Decoding (of bytes this type wrote: no validation needed)

    private static func unpack(_ bytes: UnsafeBufferPointer<UInt8>, at offset: inout Int) -> JSONValue {
        let tag = bytes[offset]
        offset += 1
        switch tag {
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3:
            let zigzag = readVarint(bytes, at: &offset)
            return .int(Int(Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))))
        case 4:
            var pattern: UInt64 = 0
            for index in 0..<8 { pattern |= UInt64(bytes[offset + index]) << (8 * index) }
            offset += 8
            return .double(Double(bitPattern: pattern))
        case 5: return .string(readString(bytes, at: &offset))
        case 6:
            let count = Int(readVarint(bytes, at: &offset))
            var elements: [JSONValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(unpack(bytes, at: &offset)) }
            return .array(elements)
        case 7:
            let count = Int(readVarint(bytes, at: &offset))
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(count)
            for _ in 0..<count {
                let key = readString(bytes, at: &offset)
                members[key] = unpack(bytes, at: &offset)
            }
            return .object(members)
        default: return .null
        }
    }

    /// Moves `offset` past one packed value.
    private static func skip(_ bytes: UnsafeBufferPointer<UInt8>, at offset: inout Int) {
        let tag = bytes[offset]
        offset += 1
        switch tag {
        case 3: _ = readVarint(bytes, at: &offset)
        case 4: offset += 8
        case 5: offset += Int(readVarint(bytes, at: &offset))
        case 6:
            for _ in 0..<readVarint(bytes, at: &offset) { skip(bytes, at: &offset) }
        case 7:
            for _ in 0..<readVarint(bytes, at: &offset) {
                offset += Int(readVarint(bytes, at: &offset))
                skip(bytes, at: &offset)
            }
        default: break
        }
    }

    private static func readVarint(_ bytes: UnsafeBufferPointer<UInt8>, at offset: inout Int) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    private static func readString(_ bytes: UnsafeBufferPointer<UInt8>, at offset: inout Int) -> String {
        let count = Int(readVarint(bytes, at: &offset))
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
        offset += count
        return text
    }
}

extension PackedPayload: Equatable {
    /// Equal values: the same bytes, or values that compare equal in other bytes (`-0.0` and `0.0`,
    /// strings equal as Swift compares them, in another normalization form). O(size).
    public static func == (lhs: PackedPayload, rhs: PackedPayload) -> Bool {
        if lhs.bytes == rhs.bytes { return true }
        if lhs.isNull || rhs.isNull { return false }
        return lhs.value == rhs.value
    }
}
