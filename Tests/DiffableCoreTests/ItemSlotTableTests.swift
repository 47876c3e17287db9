@testable import DiffableCore
import TestSupport
import Testing

/// The identifier → slot table against a dictionary, through random inserts, look-ups and removals
/// (growing from empty, removals that shift runs of buckets back, slots reused).
@Suite("Item slot table")
struct ItemSlotTableTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func behavesAsADictionary(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var table = ItemSlotTable()
        var ids: [String] = []
        var model: [String: Int32] = [:]
        var freeSlots: [Int32] = []
        for step in 0..<20_000 {
            let id = "i\(Int.random(in: 0..<3_000, using: &random))"
            switch Int.random(in: 0..<3, using: &random) {
            case 0, 1:
                let candidate = freeSlots.last ?? Int32(ids.count)
                let (slot, inserted) = table.slot(of: id, orInsert: candidate, ids: ids)
                #expect(inserted == (model[id] == nil), "step \(step)")
                if inserted {
                    if freeSlots.last == candidate {
                        freeSlots.removeLast()
                        ids[Int(candidate)] = id
                    } else {
                        ids.append(id)
                    }
                    model[id] = candidate
                } else {
                    #expect(slot == model[id], "step \(step)")
                }
            default:
                if let slot = model.removeValue(forKey: id) {
                    table.remove(id, ids: ids)
                    ids[Int(slot)] = ""
                    freeSlots.append(slot)
                } else {
                    table.remove(id, ids: ids)  // not held: nothing changes
                }
            }
            #expect(table.count == model.count)
            if step % 997 == 0 {
                for number in 0..<3_000 {
                    let probe = "i\(number)"
                    #expect(table.slot(of: probe, ids: ids) == model[probe], "step \(step), \(probe)")
                }
            }
        }
        #expect(table.capacity >= model.count)
    }

    @Test func insertAfterReserveAndLookupOfAbsentIdentifiers() {
        var table = ItemSlotTable()
        #expect(table.slot(of: "x", ids: []) == nil)
        table.reserve(1_000)
        #expect(table.capacity >= 1_000)
        let ids = (0..<1_000).map { "item-\($0)" }
        for (slot, id) in ids.enumerated() { table.insert(id, slot: Int32(slot)) }
        for (slot, id) in ids.enumerated() { #expect(table.slot(of: id, ids: ids) == Int32(slot)) }
        #expect(table.slot(of: "item-1000", ids: ids) == nil)
    }
}
