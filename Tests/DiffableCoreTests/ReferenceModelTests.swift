import DiffableCore
import TestSupport
import Testing

/// The obvious implementation of the snapshot rules on plain arrays, to check `Snapshot` against.
struct ReferenceSnapshot: Equatable {
    var sections: [(section: Section, items: [Item])] = []

    static func == (lhs: ReferenceSnapshot, rhs: ReferenceSnapshot) -> Bool {
        lhs.sections.map(\.section) == rhs.sections.map(\.section) && lhs.sections.map(\.items) == rhs.sections.map(\.items)
    }

    func sectionIndex(_ id: String) -> Int? { sections.firstIndex { $0.section.id == id } }

    func location(_ id: String) -> (Int, Int)? {
        for (s, entry) in sections.enumerated() {
            if let i = entry.items.firstIndex(where: { $0.id == id }) { return (s, i) }
        }
        return nil
    }

    mutating func remove(_ id: String) {
        if let (s, i) = location(id) { sections[s].items.remove(at: i) }
    }

    func asSnapshot() throws -> Snapshot { try Snapshot(sections) }

    // The operations, with the error each misuse gives (checked in the order Snapshot checks them).

    mutating func appendItems(_ items: [Item], to section: String?) -> SnapshotError.Code? {
        let target: Int
        if let section {
            guard let index = sectionIndex(section) else { return .sectionNotFound }
            target = index
        } else {
            guard !sections.isEmpty else { return .noSections }
            target = sections.count - 1
        }
        if Set(items.map(\.id)).count != items.count { return .duplicateItem }
        let targetID = sections[target].section.id
        for item in items { remove(item.id) }
        sections[sectionIndex(targetID)!].items.append(contentsOf: items)
        return nil
    }

    mutating func insertItems(_ items: [Item], relativeTo destination: String, after: Bool) -> SnapshotError.Code? {
        if items.contains(where: { $0.id == destination }) { return .invalidArgument }
        if location(destination) == nil { return .itemNotFound }
        if Set(items.map(\.id)).count != items.count { return .duplicateItem }
        for item in items { remove(item.id) }
        let (s, i) = location(destination)!
        sections[s].items.insert(contentsOf: items, at: after ? i + 1 : i)
        return nil
    }

    mutating func moveItem(_ item: String, relativeTo destination: String, after: Bool) -> SnapshotError.Code? {
        guard let (s, i) = location(item), location(destination) != nil else { return .itemNotFound }
        if item == destination { return .invalidMove }
        let moving = sections[s].items.remove(at: i)
        let (ds, di) = location(destination)!
        sections[ds].items.insert(moving, at: after ? di + 1 : di)
        return nil
    }

    mutating func appendSections(_ ids: [String]) -> SnapshotError.Code? {
        if Set(ids).count != ids.count || ids.contains(where: { sectionIndex($0) != nil }) { return .duplicateSection }
        sections.append(contentsOf: ids.map { (Section($0), []) })
        return nil
    }

    mutating func insertSections(_ ids: [String], relativeTo destination: String, after: Bool) -> SnapshotError.Code? {
        if ids.contains(destination) { return .invalidArgument }
        guard let index = sectionIndex(destination) else { return .sectionNotFound }
        if Set(ids).count != ids.count || ids.contains(where: { sectionIndex($0) != nil }) { return .duplicateSection }
        sections.insert(contentsOf: ids.map { (Section($0), []) }, at: after ? index + 1 : index)
        return nil
    }

    mutating func moveSection(_ id: String, relativeTo destination: String, after: Bool) -> SnapshotError.Code? {
        guard let from = sectionIndex(id), sectionIndex(destination) != nil else { return .sectionNotFound }
        if id == destination { return .invalidMove }
        let moving = sections.remove(at: from)
        let to = sectionIndex(destination)!
        sections.insert(moving, at: after ? to + 1 : to)
        return nil
    }
}

@Suite("Snapshot against a reference model")
struct ReferenceModelTests {
    /// Random operations, about one in six of them invalid, on sections large enough to split and merge
    /// chunks (more than `maximumChunkSize` items).
    @Test(arguments: 1...8)
    func randomOperationSequences(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var snapshot = Snapshot()
        var model = ReferenceSnapshot()
        var nextID = 0
        func newItems(_ count: Int) -> [Item] {
            (0..<count).map { _ in
                nextID += 1
                return Item("i\(nextID)", data: Bool.random(using: &random) ? .int(nextID) : .null)
            }
        }
        var all: [String] = []
        func anyItem() -> String {
            if all.isEmpty || Int.random(in: 0..<12, using: &random) == 0 { return "missing\(nextID)" }
            return all.randomElement(using: &random)!
        }
        func anySection() -> String {
            if model.sections.isEmpty || Int.random(in: 0..<12, using: &random) == 0 { return "S-missing" }
            return model.sections.randomElement(using: &random)!.section.id
        }
        var sectionNumber = 0
        for step in 0..<200 {
            all = model.sections.flatMap(\.items).map(\.id)
            let after = Bool.random(using: &random)
            let expected: SnapshotError.Code?
            let actual: SnapshotError.Code?
            func run(_ body: () throws -> Void) -> SnapshotError.Code? {
                do { try body(); return nil } catch let error as SnapshotError { return error.code } catch { return nil }
            }
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                sectionNumber += 1
                let ids = ["S\(sectionNumber)"] + (Int.random(in: 0..<8, using: &random) == 0 ? [anySection()] : [])
                expected = model.appendSections(ids)
                actual = run { try snapshot.appendSections(ids.map { Section($0) }) }
            case 1:
                sectionNumber += 1
                let destination = anySection()
                expected = model.insertSections(["S\(sectionNumber)"], relativeTo: destination, after: after)
                actual = run {
                    after
                        ? try snapshot.insertSections([Section("S\(sectionNumber)")], afterSection: destination)
                        : try snapshot.insertSections([Section("S\(sectionNumber)")], beforeSection: destination)
                }
            case 2:
                let (id, destination) = (anySection(), anySection())
                expected = model.moveSection(id, relativeTo: destination, after: after)
                actual = run {
                    after ? try snapshot.moveSection(id, afterSection: destination) : try snapshot.moveSection(id, beforeSection: destination)
                }
            case 3, 4:
                // Bulk appends, sometimes re-appending existing items, sometimes repeating one.
                var items = newItems(Int.random(in: 0..<700, using: &random))
                if Bool.random(using: &random) { items.append(Item(anyItem())) }
                if Int.random(in: 0..<10, using: &random) == 0, let first = items.first { items.append(first) }
                let section: String? = Bool.random(using: &random) ? anySection() : nil
                expected = model.appendItems(items, to: section)
                actual = run { try snapshot.appendItems(items, toSection: section) }
            case 5, 6:
                var items = newItems(Int.random(in: 1..<40, using: &random))
                if Bool.random(using: &random) { items.insert(Item(anyItem()), at: 0) }
                let destination = anyItem()
                expected = model.insertItems(items, relativeTo: destination, after: after)
                actual = run {
                    _ = after ? try snapshot.insertItems(items, afterItem: destination) : try snapshot.insertItems(items, beforeItem: destination)
                }
            case 7:
                let (id, destination) = (anyItem(), anyItem())
                expected = model.moveItem(id, relativeTo: destination, after: after)
                actual = run {
                    after ? try snapshot.moveItem(id, afterItem: destination) : try snapshot.moveItem(id, beforeItem: destination)
                }
            case 8:
                let ids = (0..<Int.random(in: 1..<300, using: &random)).map { _ in anyItem() }
                for id in ids { model.remove(id) }
                snapshot.deleteItems(ids)
                (expected, actual) = (nil, nil)
            default:
                let ids = [anySection()]
                model.sections.removeAll { ids.contains($0.section.id) }
                snapshot.deleteSections(ids)
                (expected, actual) = (nil, nil)
            }
            #expect(actual == expected, "step \(step)")
            #expect(snapshot.invariantViolations() == [], "step \(step)")
            if step % 10 == 0 { #expect(try snapshot == model.asSnapshot(), "step \(step)") }
            if actual != expected || snapshot.invariantViolations() != [] { return }
        }
        #expect(try snapshot == model.asSnapshot())
        // Every look-up agrees with the model.
        for (s, entry) in model.sections.enumerated() {
            for (i, item) in entry.items.enumerated() {
                #expect(snapshot.indexPath(ofItem: item.id) == IndexPath(section: s, item: i))
                #expect(snapshot.sectionIdentifier(containingItem: item.id) == entry.section.id)
            }
        }
        #expect(snapshot.itemIdentifiers == model.sections.flatMap(\.items).map(\.id))
    }

    @Test func largeSectionLookupsAfterMiddleEdits() throws {
        var snapshot = Snapshot()
        try snapshot.appendSections(["S"])
        try snapshot.appendItems((0..<5_000).map { Item("\($0)") })
        try snapshot.insertItems(["x"], beforeItem: "2500")
        snapshot.deleteItems(["10", "4999"])
        try snapshot.moveItem("0", afterItem: "3000")
        // 0…4999, x inserted at 2500, "10" and "4999" deleted, "0" moved to just after "3000".
        #expect(snapshot.indexPath(ofItem: "x") == IndexPath(section: 0, item: 2498))
        #expect(snapshot.indexPath(ofItem: "3000") == IndexPath(section: 0, item: 2999))
        #expect(snapshot.indexPath(ofItem: "0") == IndexPath(section: 0, item: 3000))
        #expect(snapshot.itemIdentifier(at: IndexPath(section: 0, item: 4998)) == "4998")
        #expect(snapshot.numberOfItems == 4_999)
        #expect(snapshot.invariantViolations() == [])
    }
}
