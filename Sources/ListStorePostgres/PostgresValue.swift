import CPostgres

/// A value bound to a query parameter (sent in PostgreSQL's binary format).
enum PostgresValue {
    case text(String)
    case integer(Int)
    case bytes([UInt8])
    case null
    /// An `int8[]` (one dimension).
    case integers([Int])
    /// A `bytea[]` (one dimension; `nil` elements are NULL).
    case byteArrays([[UInt8]?])

    /// The parameter's type (its OID).
    var type: Oid {
        switch self {
        case .text: return 25
        case .integer: return 20
        case .bytes: return 17
        case .null: return 0
        case .integers: return 1016
        case .byteArrays: return 1001
        }
    }

    /// Appends the value in PostgreSQL's binary format (nothing for `null`).
    func write(to storage: inout [UInt8]) {
        switch self {
        case .text(let text):
            storage.append(contentsOf: text.utf8)
        case .integer(let number):
            Self.append(Int64(number), to: &storage)
        case .bytes(let bytes):
            storage.append(contentsOf: bytes)
        case .null:
            break
        case .integers(let numbers):
            Self.arrayHeader(count: numbers.count, hasNulls: false, elementType: 20, to: &storage)
            for number in numbers {
                Self.append(Int32(8), to: &storage)
                Self.append(Int64(number), to: &storage)
            }
        case .byteArrays(let elements):
            Self.arrayHeader(count: elements.count, hasNulls: elements.contains { $0 == nil }, elementType: 17, to: &storage)
            for element in elements {
                guard let element else {
                    Self.append(Int32(-1), to: &storage)
                    continue
                }
                Self.append(Int32(element.count), to: &storage)
                storage.append(contentsOf: element)
            }
        }
    }

    /// A one-dimensional array's header: dimensions, null flag, element type, length, lower bound 1
    /// (an empty array has no dimension).
    private static func arrayHeader(count: Int, hasNulls: Bool, elementType: Oid, to storage: inout [UInt8]) {
        append(Int32(count == 0 ? 0 : 1), to: &storage)
        append(Int32(hasNulls ? 1 : 0), to: &storage)
        append(Int32(bitPattern: elementType), to: &storage)
        guard count > 0 else { return }
        append(Int32(count), to: &storage)
        append(Int32(1), to: &storage)
    }

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to storage: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { storage.append(contentsOf: $0) }
    }
}
