import DiffableCore
import TestSupport
import Testing

/// Payloads as snapshots store them: packed, rebuilt on read, compared as values.
@Suite("Packed payloads")
struct PackedPayloadTests {
    static func randomValue(_ random: inout SeededGenerator, depth: Int) -> JSONValue {
        let strings = ["", "a", "감기", "😀", "quote\"back\\slash", "ctl\u{01}\n", "e\u{301}", "\u{E9}", String(repeating: "long", count: 40)]
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int([Int.min, Int.max, -1, 0, 63, 64, -64, -65, 1 << 40].randomElement(using: &random)! &+ Int.random(in: -2...2, using: &random))
        case 3: return .double([0.0, -0.0, 0.5, -1e300, 3.25e-200, Double.greatestFiniteMagnitude].randomElement(using: &random)!)
        case 4: return .string(strings.randomElement(using: &random)!)
        case 5: return .array((0..<Int.random(in: 0...200, using: &random) % 5).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                members[strings.randomElement(using: &random)! + String(Int.random(in: 0..<3, using: &random))] = randomValue(&random, depth: depth + 1)
            }
            return .object(members)
        }
    }

    /// One member read from the packed bytes is the member of the rebuilt value, whatever comes before
    /// it (nested arrays and objects are skipped over), and absent names and non-objects give nil.
    @Test func aMemberReadAloneIsTheValuesMember() {
        var random = SeededGenerator(seed: 62)
        for _ in 0..<5_000 {
            let value = Self.randomValue(&random, depth: 0)
            let packed = PackedPayload(value)
            let names: [String] = (value.members.map { Array($0.keys) } ?? []) + ["absent", "", "a0", "e\u{301}0"]
            for name in names { #expect(packed.member(name) == value[name], "\(name) of \(value)") }
        }
        // A name in another normalization form finds the member, as a dictionary's look-up does.
        let value: JSONValue = ["caf\u{E9}": 1, "b": 2]
        #expect(PackedPayload(value).member("cafe\u{301}") == 1)
        #expect(PackedPayload(value).member("cafe\u{301}") == value["cafe\u{301}"])
    }

    @Test func everyValueComesBackAsItWas() {
        var random = SeededGenerator(seed: 61)
        for _ in 0..<5_000 {
            let value = Self.randomValue(&random, depth: 0)
            let packed = PackedPayload(value)
            #expect(packed.value == value)
            #expect(packed.isNull == value.isNull)
            #expect(packed == PackedPayload(packed.value), "packing is canonical")
        }
    }

    @Test func equalityIsTheValues() {
        #expect(PackedPayload(["a": 1, "b": [true, nil]]) == PackedPayload(["b": [true, nil], "a": 1]), "member order does not matter")
        #expect(PackedPayload(.double(0.0)) == PackedPayload(.double(-0.0)), "as JSONValue compares doubles")
        #expect(PackedPayload(.string("\u{E9}")) == PackedPayload(.string("e\u{301}")), "as Swift compares strings")
        #expect(PackedPayload(.int(1)) != PackedPayload(.double(1)), "as JSONValue: an integer is not a double")
        #expect(PackedPayload(["a": 1]) != PackedPayload(["a": 2]))
        #expect(PackedPayload(.null) != PackedPayload(.bool(false)))
        #expect(PackedPayload(.null) == .null && PackedPayload.null.packedCount == 0)
        #expect(PackedPayload(["title": "Item 7", "n": 7]).packedCount <= 24, "a small payload stays small")
    }

    /// Snapshots read back exactly the payloads they were given, and see a payload change (updateItems
    /// reconfigures) only when the value changed.
    @Test func snapshotsKeepPayloadsExactly() throws {
        var random = SeededGenerator(seed: 62)
        var snapshot = Snapshot()
        try snapshot.appendSections(["S"])
        var expected: [String: JSONValue] = [:]
        for index in 0..<500 {
            let value = Self.randomValue(&random, depth: 1)
            try snapshot.appendItems([Item("i\(index)", data: value)])
            expected["i\(index)"] = value
        }
        for (id, value) in expected { #expect(snapshot.data(ofItem: id) == value) }
        var changed = snapshot
        try changed.updateItems([Item("i1", data: expected["i1"]!), Item("i2", data: ["new": true])])
        let reconfigured = changed.difference(from: snapshot).stages.flatMap(\.itemReconfigures).map(\.item.id)
        #expect(reconfigured == (expected["i2"] == ["new": true] ? [] : ["i2"]))
    }

    /// Payloads replaced again and again (their old bytes become garbage, compacted away) and a failed
    /// change rolled back: every item still reads its latest payload.
    @Test func replacedPayloadsAreCompactedAndRollbacksRestoreThem() throws {
        var snapshot = Snapshot()
        try snapshot.appendSections(["S"])
        try snapshot.appendItems((0..<100).map { Item("i\($0)", data: ["n": .int($0)]) })
        var latest: [String: JSONValue] = [:]
        for round in 0..<60 {
            let items = (0..<100).map { Item("i\($0)", data: ["n": .int($0 * round), "text": .string(String(repeating: "x", count: 30 + round))]) }
            try snapshot.updateItems(items)
            for item in items { latest[item.id] = item.data }
        }
        for (id, value) in latest { #expect(snapshot.data(ofItem: id) == value) }
        // A change that fails (a duplicate) leaves every payload as it was.
        let before = snapshot
        #expect(throws: (any Error).self) { try snapshot.appendItems([Item("new", data: ["big": .string(String(repeating: "y", count: 100_000))]), Item("new")]) }
        #expect(snapshot == before)
        for (id, value) in latest { #expect(snapshot.data(ofItem: id) == value) }
    }
}

extension JSONValue {
    /// The members when this is an object.
    fileprivate var members: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }
}
