/// The payloads of a snapshot's item slots, packed (`PackedPayload`) one after another in one buffer:
/// eight bytes per slot for where its payload is, plus the packed bytes. No allocation per item.
///
/// A replaced or freed payload leaves its bytes behind as garbage; once the garbage is more than half
/// the buffer (and over 64 KiB), the live payloads are copied into a fresh buffer (amortized O(1) per
/// change).
struct PayloadArena: Sendable {
    /// Where a slot's payload is in `bytes`; `count` 0 is `null`.
    struct Span: Sendable {
        var offset: UInt32
        var count: UInt32
    }

    private(set) var bytes: [UInt8] = []
    private(set) var spans: [Span] = []
    /// Bytes in `bytes` that no span covers any more.
    private var garbage = 0

    /// The packed bytes of the live payloads (what the slots hold, garbage not counted). O(1).
    var liveBytes: Int { bytes.count - garbage }

    /// Adds a slot holding `value`.
    mutating func append(_ value: JSONValue) {
        spans.append(write(value))
    }

    mutating func removeLast() {
        garbage += Int(spans.removeLast().count)
    }

    /// Replaces a slot's payload.
    mutating func set(_ value: JSONValue, at slot: Int) {
        garbage += Int(spans[slot].count)
        spans[slot] = write(value)
        compactIfWasteful()
    }

    /// Replaces a slot's payload with packed bytes (undoing a change).
    mutating func set(_ payload: PackedPayload, at slot: Int) {
        garbage += Int(spans[slot].count)
        spans[slot] = Span(offset: UInt32(bytes.count), count: UInt32(payload.bytes.count))
        bytes.append(contentsOf: payload.bytes)
        compactIfWasteful()
    }

    /// A slot's payload as a value. O(size of the payload).
    func value(at slot: Int) -> JSONValue {
        let span = spans[slot]
        guard span.count > 0 else { return .null }
        return bytes.withUnsafeBufferPointer { buffer in
            PackedPayload.value(of: UnsafeBufferPointer(rebasing: buffer[Int(span.offset)..<Int(span.offset + span.count)]))
        }
    }

    /// A slot's payload, packed (its bytes copied out).
    func packed(at slot: Int) -> PackedPayload {
        let span = spans[slot]
        return PackedPayload(bytes: Array(bytes[Int(span.offset)..<Int(span.offset + span.count)]))
    }

    /// Whether two slots (of this arena or another) hold equal payloads: the same bytes, or values
    /// that compare equal.
    func payload(at slot: Int, equals otherSlot: Int, in other: PayloadArena) -> Bool {
        let mine = spans[slot]
        let theirs = other.spans[otherSlot]
        if mine.count == 0 || theirs.count == 0 { return mine.count == theirs.count }
        let same = bytes[Int(mine.offset)..<Int(mine.offset + mine.count)]
            .elementsEqual(other.bytes[Int(theirs.offset)..<Int(theirs.offset + theirs.count)])
        return same || value(at: slot) == other.value(at: otherSlot)
    }

    private mutating func write(_ value: JSONValue) -> Span {
        let start = bytes.count
        PackedPayload.append(value, to: &bytes)
        precondition(bytes.count <= UInt32.max, "payloads over 4 GiB in one snapshot")
        return Span(offset: UInt32(start), count: UInt32(bytes.count - start))
    }

    private mutating func compactIfWasteful() {
        guard garbage > 65_536, garbage * 2 > bytes.count else { return }
        var compacted: [UInt8] = []
        compacted.reserveCapacity(bytes.count - garbage)
        for index in spans.indices where spans[index].count > 0 {
            let span = spans[index]
            spans[index].offset = UInt32(compacted.count)
            compacted.append(contentsOf: bytes[Int(span.offset)..<Int(span.offset + span.count)])
        }
        bytes = compacted
        garbage = 0
    }
}
