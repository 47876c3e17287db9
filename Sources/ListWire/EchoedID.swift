/// A request's `id` as its reply echoes it, byte for byte: an integer written the canonical way
/// (`-?(0|[1-9][0-9]*)`, up to 18 digits, the common case) is kept as a number, without an allocation;
/// any other value as its bytes.
public enum EchoedID: Sendable, Equatable {
    case integer(Int)
    case bytes([UInt8])

    /// The `id` whose encoding is `raw`.
    public init<Bytes: Collection>(raw: Bytes) where Bytes.Element == UInt8 {
        if let number = Self.canonicalInteger(raw) {
            self = .integer(number)
        } else {
            self = .bytes(Array(raw))
        }
    }

    public init(bytes: [UInt8]) {
        self.init(raw: bytes)
    }

    /// The encoding as it was sent.
    public var bytes: [UInt8] {
        switch self {
        case .integer(let number): return Array(String(number).utf8)
        case .bytes(let bytes): return bytes
        }
    }

    /// The number `raw` spells when it is an integer written the way `JSONWriter.int` writes it.
    static func canonicalInteger<Bytes: Collection>(_ raw: Bytes) -> Int? where Bytes.Element == UInt8 {
        var value = 0
        var digits = 0
        var negative = false
        var leadingZero = false
        for byte in raw {
            if byte == UInt8(ascii: "-"), digits == 0, !negative {
                negative = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), !leadingZero, digits < 18 else { return nil }
            if byte == UInt8(ascii: "0"), digits == 0 { leadingZero = true }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0, !(negative && value == 0) else { return nil }
        return negative ? -value : value
    }
}

extension JSONWriter {
    /// Writes an echoed `id` as it was sent.
    public mutating func echoedID(_ id: EchoedID) {
        switch id {
        case .integer(let number): int(number)
        case .bytes(let bytes): raw(bytes)
        }
    }
}
