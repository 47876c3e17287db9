/// The hash table from item identifiers to slots, holding slots only: the identifiers stay where the
/// storage keeps them (`itemIDs`, passed to every call), so each identifier is stored once.
///
/// Open addressing with linear probing. A bucket is 8 bytes: the slot plus one in its low 32 bits (0 is
/// an empty bucket) and 32 bits of the identifier's hash in the high ones, compared before any string is,
/// and enough to grow the table without hashing an identifier again. At most 3/4 of the buckets are
/// used; deleting shifts the following buckets back (no tombstones). A dictionary of `String` to `Int32`
/// takes about 20 bytes per bucket instead of 8.
struct ItemSlotTable: Sendable {
    private var buckets: [UInt64] = []
    /// The number of identifiers held.
    private(set) var count = 0

    /// How many identifiers fit before the table grows.
    var capacity: Int { buckets.count / 4 * 3 }

    /// The slot of `id`, or `nil`. O(1) on average.
    func slot(of id: String, ids: [String]) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        let hash = Self.hash(id)
        let mask = buckets.count - 1
        var index = Int(hash) & mask
        while true {
            let bucket = buckets[index]
            if bucket == 0 { return nil }
            if UInt32(truncatingIfNeeded: bucket >> 32) == hash {
                let slot = Int32(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
                if ids[Int(slot)] == id { return slot }
            }
            index = (index + 1) & mask
        }
    }

    /// The slot of `id` when it is held; otherwise `candidate` is recorded as its slot (the caller then
    /// stores `id` at `ids[candidate]` before the next call). One probe sequence.
    mutating func slot(of id: String, orInsert candidate: Int32, ids: [String]) -> (slot: Int32, inserted: Bool) {
        reserve(count + 1)
        let hash = Self.hash(id)
        let mask = buckets.count - 1
        var index = Int(hash) & mask
        while true {
            let bucket = buckets[index]
            if bucket == 0 {
                buckets[index] = Self.bucket(slot: candidate, hash: hash)
                count += 1
                return (candidate, true)
            }
            if UInt32(truncatingIfNeeded: bucket >> 32) == hash {
                let slot = Int32(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
                if ids[Int(slot)] == id { return (slot, false) }
            }
            index = (index + 1) & mask
        }
    }

    /// Records `slot` for `id`, which the table does not hold.
    mutating func insert(_ id: String, slot: Int32) {
        reserve(count + 1)
        place(Self.bucket(slot: slot, hash: Self.hash(id)))
        count += 1
    }

    /// Forgets `id` (still at its slot in `ids`); nothing when it is not held.
    mutating func remove(_ id: String, ids: [String]) {
        guard !buckets.isEmpty else { return }
        let hash = Self.hash(id)
        let mask = buckets.count - 1
        var index = Int(hash) & mask
        while true {
            let bucket = buckets[index]
            if bucket == 0 { return }
            if UInt32(truncatingIfNeeded: bucket >> 32) == hash, ids[Int(Int32(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1)] == id { break }
            index = (index + 1) & mask
        }
        // Backward shift: each following bucket of the run moves into the hole when its home bucket is
        // not between the hole and itself (cyclically), so every probe sequence stays unbroken.
        var hole = index
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let home = Int(UInt32(truncatingIfNeeded: buckets[next] >> 32)) & mask
            if (next - home) & mask >= (next - hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = 0
        count -= 1
    }

    /// Makes room for `needed` identifiers, doubling at least (amortized O(1) per identifier).
    mutating func reserve(_ needed: Int) {
        guard needed > capacity else { return }
        var size = max(16, buckets.count * 2)
        while size / 4 * 3 < needed { size *= 2 }
        let old = buckets
        buckets = Array(repeating: 0, count: size)
        for bucket in old where bucket != 0 { place(bucket) }
    }

    /// Puts a bucket into the first empty one of its probe sequence.
    private mutating func place(_ bucket: UInt64) {
        let mask = buckets.count - 1
        var index = Int(UInt32(truncatingIfNeeded: bucket >> 32)) & mask
        while buckets[index] != 0 { index = (index + 1) & mask }
        buckets[index] = bucket
    }

    private static func bucket(slot: Int32, hash: UInt32) -> UInt64 {
        UInt64(hash) << 32 | UInt64(UInt32(slot + 1))
    }

    private static func hash(_ id: String) -> UInt32 {
        UInt32(truncatingIfNeeded: id.hashValue)
    }
}
