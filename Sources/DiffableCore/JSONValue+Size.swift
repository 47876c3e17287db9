extension JSONValue {
    /// About the bytes the value takes as compact JSON (strings counted by their UTF-8 bytes and
    /// quotes, escapes not counted; numbers as 8): what listd charges for a value it keeps, without
    /// encoding it. O(size of the value), no allocation.
    public var approximateByteCount: Int {
        switch self {
        case .null, .bool: return 4
        case .int, .double: return 8
        case .string(let value): return value.utf8.count + 2
        case .array(let elements):
            var total = 2 + max(elements.count - 1, 0)
            for element in elements { total += element.approximateByteCount }
            return total
        case .object(let members):
            var total = 2 + max(members.count - 1, 0)
            for (key, value) in members { total += key.utf8.count + 3 + value.approximateByteCount }
            return total
        }
    }
}
