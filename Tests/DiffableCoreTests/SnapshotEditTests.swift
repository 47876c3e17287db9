import DiffableCore
import TestSupport
import Testing

extension RandomSnapshots {
    /// A random edit of `snapshot`; about one in eight names something that does not exist.
    mutating func randomEdit(of snapshot: Snapshot) -> SnapshotEdit {
        let items = snapshot.itemIdentifiers
        let sections = snapshot.sectionIdentifiers
        func item() -> String {
            items.isEmpty || Int.random(in: 0..<8, using: &random) == 0 ? "missing" : items.randomElement(using: &random)!
        }
        func section() -> String {
            sections.isEmpty || Int.random(in: 0..<8, using: &random) == 0 ? "S-missing" : sections.randomElement(using: &random)!
        }
        func placement(_ id: String) -> Placement { Bool.random(using: &random) ? .before(id) : .after(id) }
        func newItems() -> [Item] {
            var result = (0..<Int.random(in: 0...6, using: &random)).map { _ in Item(freshID("i"), data: payload()) }
            if !items.isEmpty && Bool.random(using: &random) { result.append(Item(item(), data: payload())) }
            return result
        }
        switch Int.random(in: 0..<16, using: &random) {
        case 0: return .appendSections([Section(freshID("S"), data: payload())])
        case 1: return .insertSections([Section(freshID("S")), Section(freshID("S"))], placement(section()))
        case 2: return .deleteSections([section(), section()])
        case 3: return .moveSection(section(), placement(section()))
        case 4: return .reloadSections([section()])
        case 5: return .updateSections([Section(section(), data: payload())])
        case 6: return .appendItems(newItems(), toSection: Bool.random(using: &random) ? section() : nil)
        case 7: return .insertItems(newItems(), placement(item()))
        case 8: return .deleteItems([item(), item(), item()])
        case 9: return Int.random(in: 0..<6, using: &random) == 0 ? .deleteAllItems : .deleteItems([item()])
        case 10, 11: return .moveItem(item(), placement(item()))
        case 12: return .reloadItems([item(), item()])
        case 13: return .reconfigureItems([item()])
        case 14: return .updateItems([Item(item(), data: payload())])
        default:
            // A section's items replaced: some kept (reordered), some new, some from other sections.
            let target = section()
            var replacement = ((try? snapshot.items(inSection: target)) ?? []).filter { _ in Bool.random(using: &random) }
            replacement.shuffle(using: &random)
            replacement.append(contentsOf: (0..<Int.random(in: 0...3, using: &random)).map { _ in Item(freshID("i")) })
            if let foreign = items.randomElement(using: &random), !replacement.contains(where: { $0.id == foreign }) {
                replacement.append(Item(foreign, data: payload()))
            }
            return .replaceItems(inSection: target, with: replacement)
        }
    }
}

@Suite("Snapshot edits and batches")
struct SnapshotEditTests {
    /// 20 × 150 random edits: each edit's changes turn the snapshot before into the snapshot after, obey
    /// the batch rules, and a failing edit changes nothing.
    @Test(arguments: 1...20)
    func editChangesApply(seed: UInt64) throws {
        var generator = RandomSnapshots(seed: seed &* 31)
        var snapshot = try generator.snapshot(size: generator.size())
        for step in 0..<150 {
            let edit = generator.randomEdit(of: snapshot)
            let before = snapshot
            do {
                let outcome = try snapshot.perform(edit)
                for stage in outcome.changes.stages {
                    #expect(!stage.isEmpty)
                    #expect(batchRuleViolations(stage) == [], "step \(step): \(edit)")
                }
                let applied = try before.applying(outcome.changes)
                #expect(applied == snapshot, "step \(step): \(edit)\n\(outcome.changes)")
                #expect(snapshot.reloadedItemIdentifiers.isEmpty && snapshot.reconfiguredItemIdentifiers.isEmpty)
            } catch is SnapshotError {
                #expect(snapshot == before, "step \(step): a failed \(edit) changed the snapshot")
            }
            #expect(snapshot.invariantViolations() == [], "step \(step): \(edit)")
            if snapshot.invariantViolations() != [] { return }
        }
    }

    /// Random batches; a batch whose last edit fails leaves the snapshot exactly as it was.
    @Test(arguments: 1...20)
    func batchesAreAllOrNothing(seed: UInt64) throws {
        var generator = RandomSnapshots(seed: seed &* 131)
        var snapshot = try generator.snapshot(size: generator.size())
        for step in 0..<40 {
            let before = snapshot
            var edits: [SnapshotEdit] = []
            var preview = snapshot
            // Build a batch of edits that succeed one after another...
            for _ in 0..<Int.random(in: 1...12, using: &generator.random) {
                let edit = generator.randomEdit(of: preview)
                if (try? preview.perform(edit)) != nil { edits.append(edit) }
            }
            // ...and sometimes end it with one that fails.
            let failing = Bool.random(using: &generator.random)
            if failing { edits.append(.moveItem("missing", .before("missing too"))) }
            do {
                let outcome = try snapshot.perform(edits)
                #expect(!failing)
                #expect(snapshot == preview, "step \(step)")
                #expect(try before.applying(outcome.changes) == snapshot, "step \(step)")
            } catch let error as BatchError {
                #expect(failing)
                #expect(error.index == edits.count - 1)
                #expect(snapshot == before, "step \(step): a failed batch changed the snapshot")
                // Also the same slots and sections behind the scenes: more edits keep working.
                #expect(snapshot.invariantViolations() == [], "step \(step)")
            }
        }
    }

    @Test func exactChanges() throws {
        var snapshot = try makeSnapshot(["A": ["a", "b", "c"], "B": ["d"]])
        func changes(_ edit: SnapshotEdit) throws -> [String] { try snapshot.perform(edit).changes.stages.map(\.description) }
        #expect(try changes(.appendItems(["x"], toSection: nil)) == ["itemInserts [1, 1] x"])
        #expect(try changes(.appendItems([Item("a", data: 1)], toSection: "B")) == [
            "itemMoves [0, 0]→[1, 2]", "itemReconfigures [1, 2] a",
        ])
        #expect(try changes(.moveItem("c", .before("b"))) == ["itemMoves [0, 1]→[0, 0]"])
        #expect(try changes(.moveItem("c", .before("b"))) == [], "already there")
        #expect(try changes(.deleteItems(["b", "zz", "b"])) == ["itemDeletes [0, 1]"])
        #expect(try changes(.reloadItems(["d"])) == ["itemReloads [1, 0] d"])
        #expect(snapshot.reloadedItemIdentifiers.isEmpty, "no marks are left behind")
        #expect(try changes(.updateItems([Item("d", data: 2), Item("x")])) == ["itemReconfigures [1, 0] d"])
        #expect(try changes(.insertSections(["C"], .before("A"))) == ["sectionInserts 0 C()"])
        #expect(try changes(.moveSection("C", .after("B"))) == ["sectionMoves 0→2"])
        #expect(try changes(.replaceItems(inSection: "C", with: ["n", "x"])) == [
            "itemDeletes [1, 1]", "itemInserts [2, 0] n, [2, 1] x",
        ])
        #expect(try changes(.replaceItems(inSection: "D", with: ["c"])) == ["itemDeletes [0, 0]", "sectionInserts 3 D(c)"])
        #expect(try changes(.deleteAllItems) == ["sectionDeletes 0, 1, 2, 3"])
    }
}
