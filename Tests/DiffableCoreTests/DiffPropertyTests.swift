import DiffableCore
import TestSupport
import Testing

/// Random snapshots and random edits of them, from fixed seeds.
struct RandomSnapshots {
    var random: SeededGenerator
    var nextID = 0

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    mutating func freshID(_ prefix: String) -> String {
        nextID += 1
        return "\(prefix)\(nextID)"
    }

    mutating func payload() -> JSONValue {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return .null
        case 1: return .int(Int.random(in: 0..<3, using: &random))
        case 2: return ["title": .string(String(Int.random(in: 0..<3, using: &random)))]
        default: return .array([.bool(Bool.random(using: &random))])
        }
    }

    /// A snapshot with up to 8 sections and `size` items spread over them.
    mutating func snapshot(size: Int) throws -> Snapshot {
        var snapshot = Snapshot()
        let sectionCount = size == 0 ? Int.random(in: 0...2, using: &random) : Int.random(in: 1...8, using: &random)
        for _ in 0..<sectionCount { try snapshot.appendSections([Section(freshID("S"), data: payload())]) }
        guard sectionCount > 0 else { return snapshot }
        var items: [Item] = []
        for _ in 0..<size { items.append(Item(freshID("i"), data: payload())) }
        let sections = snapshot.sectionIdentifiers
        for item in items {
            try snapshot.appendItems([item], toSection: sections.randomElement(using: &random)!)
        }
        return snapshot
    }

    /// `snapshot` after a random mix of section and item edits, moves across sections, payload changes
    /// and reload/reconfigure marks (all through the public API).
    mutating func edit(_ old: Snapshot) throws -> Snapshot {
        var snapshot = old
        let edits = Int.random(in: 0...24, using: &random)
        for _ in 0..<edits {
            let items = snapshot.itemIdentifiers
            let sections = snapshot.sectionIdentifiers
            switch Int.random(in: 0..<14, using: &random) {
            case 0 where !sections.isEmpty:
                snapshot.deleteSections([sections.randomElement(using: &random)!])
            case 1 where !sections.isEmpty:
                try snapshot.insertSections([Section(freshID("S"))], beforeSection: sections.randomElement(using: &random)!)
            case 2 where sections.count > 1:
                let pair = sections.shuffled(using: &random).prefix(2)
                try snapshot.moveSection(pair.first!, afterSection: pair.last!)
            case 3...4 where !items.isEmpty:
                let count = Int.random(in: 1...max(1, items.count / 4), using: &random)
                snapshot.deleteItems((0..<count).map { _ in items.randomElement(using: &random)! })
            case 5...6 where !sections.isEmpty:
                let count = Int.random(in: 1...20, using: &random)
                try snapshot.appendItems(
                    (0..<count).map { _ in Item(freshID("i"), data: payload()) }, toSection: sections.randomElement(using: &random)!)
            case 7 where !items.isEmpty:
                try snapshot.insertItems([Item(freshID("i"))], afterItem: items.randomElement(using: &random)!)
            case 8...9 where items.count > 1:
                let pair = items.shuffled(using: &random).prefix(2)
                if Bool.random(using: &random) {
                    try snapshot.moveItem(pair.first!, beforeItem: pair.last!)
                } else {
                    try snapshot.moveItem(pair.first!, afterItem: pair.last!)
                }
            case 10 where !items.isEmpty:
                let count = Int.random(in: 1...max(1, items.count / 5), using: &random)
                var seen = Set<String>()
                let changed = (0..<count).map { _ in items.randomElement(using: &random)! }.filter { seen.insert($0).inserted }
                try snapshot.updateItems(changed.map { Item($0, data: payload()) })
            case 11 where !items.isEmpty:
                try snapshot.reloadItems([items.randomElement(using: &random)!])
            case 12 where !items.isEmpty:
                try snapshot.reconfigureItems([items.randomElement(using: &random)!])
            case 13 where !sections.isEmpty:
                if Bool.random(using: &random) {
                    try snapshot.reloadSections([sections.randomElement(using: &random)!])
                } else {
                    try snapshot.updateSections([Section(sections.randomElement(using: &random)!, data: payload())])
                }
            default:
                // Shuffle a whole section: many moves at once.
                if let section = sections.randomElement(using: &random) {
                    let ids = try snapshot.itemIdentifiers(inSection: section).shuffled(using: &random)
                    try snapshot.appendItems(ids.map { Item($0, data: snapshot.data(ofItem: $0)!) }, toSection: section)
                }
            }
        }
        return snapshot
    }

    mutating func size() -> Int {
        // Mostly small, sometimes up to 2,000 items.
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return 0
        case 1..<7: return Int.random(in: 1...60, using: &random)
        case 7, 8: return Int.random(in: 60...600, using: &random)
        default: return Int.random(in: 600...2_000, using: &random)
        }
    }
}

@Suite("Diff properties")
struct DiffPropertyTests {
    /// 40 batches × 60 pairs = 2,400 random pairs: applying the stages to the old snapshot gives the new
    /// one, every stage obeys the batch rules, and the snapshots' structure stays sound.
    @Test(arguments: 1...40)
    func applyingTheDiffGivesTheNewSnapshot(batch: UInt64) throws {
        var generator = RandomSnapshots(seed: batch &* 7_919)
        for _ in 0..<60 {
            let old = try generator.snapshot(size: generator.size())
            let new = try generator.edit(old)
            let changes = try expectRoundTrip(from: old, to: new)
            // Marks aside, a diff against itself is empty.
            var unmarked = new
            unmarked.clearMarks()
            #expect(unmarked.difference(from: new).isEmpty)
            #expect(changes.stages.count <= 5)
            // Reverse direction too.
            try expectRoundTrip(from: unmarked, to: old)
        }
    }

    @Test(arguments: 1...10)
    func pureAppendsAreInsertsOnly(seed: UInt64) throws {
        var generator = RandomSnapshots(seed: seed)
        let old = try generator.snapshot(size: generator.size())
        var new = old
        for section in new.sectionIdentifiers where Bool.random(using: &generator.random) {
            try new.appendItems((0..<Int.random(in: 1...30, using: &generator.random)).map { _ in Item(generator.freshID("n")) }, toSection: section)
        }
        try new.appendSections([Section(generator.freshID("S"))])
        try new.appendItems([Item(generator.freshID("n"))])
        let changes = try expectRoundTrip(from: old, to: new)
        for stage in changes.stages {
            var insertsOnly = stage
            insertsOnly.itemInserts = []
            insertsOnly.sectionInserts = []
            #expect(insertsOnly.isEmpty, "\(stage)")
        }
        #expect(changes.stages.flatMap(\.itemInserts).count + changes.stages.flatMap(\.sectionInserts).flatMap(\.items).count
            == new.numberOfItems - old.numberOfItems)
    }

    @Test(arguments: 1...10)
    func payloadChangesAreReconfiguresOnly(seed: UInt64) throws {
        var generator = RandomSnapshots(seed: seed + 100)
        let old = try generator.snapshot(size: Int.random(in: 1...500, using: &generator.random))
        var new = old
        var changed: Set<String> = []
        for id in old.itemIdentifiers where Int.random(in: 0..<4, using: &generator.random) == 0 {
            try new.updateItems([Item(id, data: ["changed": .string(id)])])
            changed.insert(id)
        }
        let changes = try expectRoundTrip(from: old, to: new)
        if changed.isEmpty {
            #expect(changes.isEmpty)
        } else {
            #expect(changes.stages.count == 1)
            var rest = changes.stages[0]
            #expect(Set(rest.itemReconfigures.map(\.item.id)) == changed)
            rest.itemReconfigures = []
            #expect(rest.isEmpty)
        }
    }
}
