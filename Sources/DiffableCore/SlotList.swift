/// The slots of the items of one append or insert, in the order given: the first one inline and the
/// rest in an array, so the usual single-item edit allocates nothing for them.
struct SlotList: RandomAccessCollection {
    private var head: Int32 = 0
    private var tail: [Int32] = []
    private(set) var count = 0

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Int32 { position == 0 ? head : tail[position - 1] }

    mutating func reserveCapacity(_ capacity: Int) {
        if capacity > 1 { tail.reserveCapacity(capacity - 1) }
    }

    mutating func append(_ slot: Int32) {
        if count == 0 { head = slot } else { tail.append(slot) }
        count += 1
    }
}
