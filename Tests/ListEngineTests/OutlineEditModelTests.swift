import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import Testing
import TestSupport

/// A reference of a data source with outlines, written as plainly as possible: each section a list of
/// rows in depth-first order with their depth, expansion and payload (no parent links, no hashing). What
/// an edit does to it is what the engine must do to its outlines and rows.
private struct ReferenceSource: Equatable {
    struct Row: Equatable {
        var id: String
        var level: Int
        var expanded: Bool
        var data: Int
    }

    var order: [String]
    var sections: [String: [Row]]

    struct Refused: Error {}

    func find(_ id: String) -> (section: String, index: Int)? {
        for section in order { if let index = sections[section]!.firstIndex(where: { $0.id == id }) { return (section, index) } }
        return nil
    }

    /// The end (exclusive) of the subtree starting at `index`.
    func subtreeEnd(_ rows: [Row], _ index: Int) -> Int {
        var end = index + 1
        while end < rows.count && rows[end].level > rows[index].level { end += 1 }
        return end
    }

    /// Removes the subtree of `id`, its levels made relative to it.
    mutating func detach(_ id: String) -> [Row] {
        let (section, index) = find(id)!
        let rows = sections[section]!
        let end = subtreeEnd(rows, index)
        let base = rows[index].level
        sections[section]!.removeSubrange(index..<end)
        return rows[index..<end].map { var row = $0; row.level -= base; return row }
    }

    func level(_ id: String) -> Int { let (s, i) = find(id)!; return sections[s]![i].level }

    /// Detaches the named existing items deepest first; new ones become one row each. In order.
    mutating func takeOut(_ items: [(String, Int)]) -> [[Row]] {
        let existing = items.indices.filter { find(items[$0].0) != nil }.sorted { level(items[$0].0) > level(items[$1].0) }
        var taken: [Int: [Row]] = [:]
        for index in existing {
            var subtree = detach(items[index].0)
            subtree[0].data = items[index].1
            taken[index] = subtree
        }
        return items.indices.map { taken[$0] ?? [Row(id: items[$0].0, level: 0, expanded: false, data: items[$0].1)] }
    }

    mutating func insert(_ subtree: [Row], in section: String, at index: Int, level: Int) {
        sections[section]!.insert(contentsOf: subtree.map { var row = $0; row.level += level; return row }, at: index)
    }

    mutating func append(_ items: [(String, Int)], to section: String?) {
        let target = section ?? order.last!
        for subtree in takeOut(items) { insert(subtree, in: target, at: sections[target]!.count, level: 0) }
    }

    mutating func insert(_ items: [(String, Int)], relativeTo destination: String, after: Bool) throws {
        guard find(destination) != nil, !items.contains(where: { $0.0 == destination }) else { throw Refused() }
        let subtrees = takeOut(items)
        guard let (section, _) = find(destination) else { throw Refused() }
        var previous = destination
        for subtree in subtrees {
            let (_, index) = find(after ? previous : destination)!
            let rows = sections[section]!
            insert(subtree, in: section, at: after ? subtreeEnd(rows, index) : index, level: rows[index].level)
            previous = subtree[0].id
        }
    }

    mutating func delete(_ ids: [String]) {
        for id in ids { if find(id) != nil { _ = detach(id) } }
    }

    mutating func move(_ id: String, relativeTo destination: String, after: Bool) throws {
        guard let (fromSection, from) = find(id), let (toSection, _) = find(destination), id != destination else { throw Refused() }
        if fromSection == toSection {
            let rows = sections[fromSection]!
            if rows[from..<subtreeEnd(rows, from)].contains(where: { $0.id == destination }) { throw Refused() }
        }
        let subtree = detach(id)
        let (section, index) = find(destination)!
        let rows = sections[section]!
        insert(subtree, in: section, at: after ? subtreeEnd(rows, index) : index, level: rows[index].level)
    }

    mutating func update(_ items: [(String, Int)]) throws {
        guard items.allSatisfy({ find($0.0) != nil }) else { throw Refused() }
        for (id, data) in items { let (s, i) = find(id)!; sections[s]![i].data = data }
    }

    mutating func setExpanded(_ ids: [String], _ expanded: Bool) {
        for id in ids { let (s, i) = find(id)!; sections[s]![i].expanded = expanded }
    }

    /// The rows a list shows: those whose every ancestor is expanded.
    func visible(_ section: String) -> [Row] {
        var shown: [Row] = []
        var hiddenBelow: Int?
        for row in sections[section]! {
            if let level = hiddenBelow, row.level > level { continue }
            hiddenBelow = row.expanded ? nil : row.level
            shown.append(row)
        }
        return shown
    }

    var count: Int { sections.values.reduce(0) { $0 + $1.count } }
}

@Suite("Outlines survive every verb (a model-based check)")
struct OutlineEditModelTests {
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 10_000, maximumIdentifierBytes: 64, maximumRegistrations: 5)

    private func data(_ value: Int) -> JSONValue { ["v": .int(value)] }

    private func apply(_ operation: DataSourceOperation, _ model: StateModel) throws(WireError) -> ChangeOutcome {
        try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, operation), limits: limits)
    }

    /// Builds the engine's outline for a section of the reference.
    private func outline(of rows: [ReferenceSource.Row]) throws -> SectionSnapshot {
        var outline = SectionSnapshot()
        var parents: [String] = []
        for row in rows {
            parents.removeLast(parents.count - row.level)
            try outline.append([Item(row.id, data: data(row.data))], to: parents.last)
            if row.expanded { outline.expand([row.id]) }
            parents.append(row.id)
        }
        return outline
    }

    /// The engine's data source is the reference: rows, outlines (order, depth, expansion, payloads), counts.
    private func check(_ model: StateModel, _ reference: ReferenceSource, _ step: String) throws {
        let d = try #require(model.dataSources["d"])
        #expect(d.snapshot.sectionIdentifiers == reference.order, "\(step)")
        for section in reference.order {
            let shown = reference.visible(section)
            let rows = try d.snapshot.items(inSection: section)
            #expect(rows.map(\.id) == shown.map(\.id), "\(step): rows of \(section)")
            #expect(rows.map(\.data) == shown.map { data($0.data) }, "\(step): payloads of \(section)")
            let all = reference.sections[section]!
            if all.contains(where: { $0.level > 0 }) {
                let outline = try #require(d.outlines[section], "\(step): \(section) lost its outline")
                #expect(outline == (try self.outline(of: all)), "\(step): outline of \(section)\n\(outline.visualDescription)")
            }
        }
        #expect(d.storedItemCount == reference.count, "\(step): stored items")
    }

    /// `applySectionSnapshot` never takes an item another section's outline holds (as a row or a
    /// collapsed item): that outline would keep it, and one identifier would be in two places (found by
    /// `listd-fuzz-commands`: the same request then answered differently from run to run). Rows of a
    /// section without an outline are still moved into place.
    @Test func applyingAnOutlineRefusesItemsOfAnotherOutline() throws {
        let model = StateModel()
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: "i", .edit(.appendSections(["S0", "S1"]))), limits: limits)
        let tree = [
            ReferenceSource.Row(id: "a", level: 0, expanded: false, data: 1), .init(id: "x", level: 1, expanded: false, data: 2),
            .init(id: "b", level: 0, expanded: false, data: 3),
        ]
        _ = try apply(.replaceOutline(section: "S0", try outline(of: tree)), model)
        _ = try apply(.edit(.appendItems([Item("flat")], toSection: "S1")), model)
        func state() throws -> String {
            let d = model.dataSources["d"]!
            let rows = try d.snapshot.sectionIdentifiers.map { "\($0): \(try d.snapshot.itemIdentifiers(inSection: $0))" }
            return "\(d.version) \(rows) \(d.outlines.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.items.map(\.id))" })"
        }
        let before = try state()
        for taken in ["a", "x", "b"] {
            let other = try SectionSnapshot(items: [Item("c"), Item(taken)])
            #expect(throws: WireError.self, "\(taken) is S0's") { try self.apply(.replaceOutline(section: "S2", other), model) }
            do {
                _ = try apply(.replaceOutline(section: "S2", other), model)
            } catch {
                #expect(error.code == .duplicateItem && error.message.contains("\"\(taken)\"") && error.message.contains("section \"S0\""), "\(error.message)")
            }
        }
        #expect(try state() == before, "nothing changed")
        // A row of a section without an outline moves into place, as before.
        let outcome = try apply(.replaceOutline(section: "S2", try SectionSnapshot(items: [Item("flat"), Item("c")])), model)
        #expect(outcome.warnings.map(\.code) == [.itemsAlreadyExisted])
        #expect(try model.dataSources["d"]!.snapshot.itemIdentifiers(inSection: "S1").isEmpty)
        #expect(try model.dataSources["d"]!.snapshot.itemIdentifiers(inSection: "S2") == ["flat", "c"])
        // A row of another section cannot become a collapsed item (it would stay a row there).
        _ = try apply(.edit(.appendItems([Item("r")], toSection: "S1")), model)
        var collapsedRow = try SectionSnapshot(items: [Item("p")])
        try collapsedRow.append([Item("r")], to: "p")
        do {
            _ = try apply(.replaceOutline(section: "S3", collapsedRow), model)
            Issue.record("a collapsed item took a row of S1")
        } catch {
            #expect(error.code == .duplicateItem && error.message.contains("rows of section \"S1\""), "\(error.message)")
        }
        #expect(try model.dataSources["d"]!.snapshot.itemIdentifiers(inSection: "S1") == ["r"])
        // Items of two other outlines: the error names the section of the outline's first one, whatever
        // the order the outlines are held in (it was a dictionary's: a fuzzer's twin saw two messages).
        _ = try apply(.replaceOutline(section: "S4", try SectionSnapshot(items: [Item("z")])), model)
        for order in [["z", "a"], ["a", "z"]] {
            let taking = try SectionSnapshot(items: order.map { Item($0) })
            do {
                _ = try apply(.replaceOutline(section: "S5", taking), model)
                Issue.record("took items of S0 and S4")
            } catch {
                let holder = order[0] == "z" ? "S4" : "S0"
                #expect(error.message.hasPrefix("Items \"\(order[0])\" are in the outline of section \"\(holder)\""), "\(error.message)")
            }
        }
        // Its own outline is replaced as ever.
        _ = try apply(.replaceOutline(section: "S0", try SectionSnapshot(items: [Item("b"), Item("a")])), model)
        #expect(model.dataSources["d"]!.outlines["S0"]!.items.map(\.id) == ["b", "a"])
    }

    @Test(arguments: 0..<12)
    func randomEditsKeepEveryOutline(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        let model = StateModel()
        var reference = ReferenceSource(order: ["S0", "S1", "S2"], sections: ["S0": [], "S1": [], "S2": []])
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: "i", .edit(.appendSections(["S0", "S1", "S2"]))), limits: limits)
        var nextID = 0
        func fresh() -> String { nextID += 1; return "n\(nextID)" }
        func anyID() -> String? {
            let all = reference.order.flatMap { reference.sections[$0]!.map(\.id) }
            return all.randomElement(using: &random)
        }
        var counter = 0
        func value() -> Int { counter += 1; return counter }
        // A random tree in a section, made with applySectionSnapshot.
        func plant(_ section: String) throws {
            var rows: [ReferenceSource.Row] = []
            for _ in 0..<Int.random(in: 2...7, using: &random) {
                let level = rows.isEmpty ? 0 : Int.random(in: 0...(rows.last!.level + 1), using: &random)
                rows.append(.init(id: fresh(), level: level, expanded: Bool.random(using: &random), data: value()))
            }
            reference.sections[section] = rows
            _ = try apply(.replaceOutline(section: section, try outline(of: rows)), model)
        }
        try plant("S0")
        try plant("S1")
        try check(model, reference, "planted")

        for step in 0..<120 {
            let before = reference
            let version = model.dataSources["d"]!.version
            let pick = Int.random(in: 0..<100, using: &random)
            var operation: DataSourceOperation
            var refused = false
            var name = ""
            do {
                switch pick {
                case 0..<18:
                    let items = (0..<Int.random(in: 1...3, using: &random)).map { _ in Bool.random(using: &random) ? fresh() : (anyID() ?? fresh()) }
                    let unique = items.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.map { ($0, value()) }
                    let section = Bool.random(using: &random) ? nil : reference.order.randomElement(using: &random)
                    name = "append \(unique.map(\.0)) to \(section ?? "last")"
                    operation = .edit(.appendItems(unique.map { Item($0.0, data: data($0.1)) }, toSection: section))
                    reference.append(unique, to: section)
                case 18..<36:
                    guard let destination = anyID() else { continue }
                    let items = (0..<Int.random(in: 1...2, using: &random)).map { _ in Bool.random(using: &random) ? fresh() : (anyID() ?? fresh()) }
                    let unique = items.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.map { ($0, value()) }
                    let after = Bool.random(using: &random)
                    name = "insert \(unique.map(\.0)) \(after ? "after" : "before") \(destination)"
                    operation = .edit(.insertItems(unique.map { Item($0.0, data: data($0.1)) }, after ? .after(destination) : .before(destination)))
                    do { try reference.insert(unique, relativeTo: destination, after: after) } catch { refused = true }
                case 36..<50:
                    let ids = (0..<Int.random(in: 1...2, using: &random)).map { _ in Int.random(in: 0..<5, using: &random) == 0 ? "unknown" : (anyID() ?? "unknown") }
                    name = "delete \(ids)"
                    operation = .edit(.deleteItems(ids))
                    reference.delete(ids)
                case 50..<68:
                    guard let id = anyID(), let destination = anyID() else { continue }
                    let after = Bool.random(using: &random)
                    name = "move \(id) \(after ? "after" : "before") \(destination)"
                    operation = .edit(.moveItem(id, after ? .after(destination) : .before(destination)))
                    do { try reference.move(id, relativeTo: destination, after: after) } catch { refused = true }
                case 68..<80:
                    guard let id = anyID() else { continue }
                    let update = [(id, value())]
                    name = "update \(id)"
                    operation = .edit(.updateItems(update.map { Item($0.0, data: data($0.1)) }))
                    try reference.update(update)
                case 80..<90:
                    let section = ["S0", "S1"].randomElement(using: &random)!
                    guard model.dataSources["d"]!.outlines[section] != nil, let row = reference.sections[section]!.randomElement(using: &random) else { continue }
                    let expanded = Bool.random(using: &random)
                    name = "\(expanded ? "expand" : "collapse") \(row.id)"
                    operation = .setExpansion(section: section, items: [row.id], expanded: expanded)
                    reference.setExpanded([row.id], expanded)
                case 90..<95:
                    let section = reference.order.randomElement(using: &random)!
                    guard reference.sections[section]!.isEmpty || Bool.random(using: &random) else { continue }
                    name = "plant in \(section)"
                    let old = reference.sections[section]!.map(\.id)
                    reference.sections[section] = []
                    _ = old
                    try plant(section)
                    try check(model, reference, "step \(step): \(name)")
                    continue
                default:
                    guard let a = anyID(), let b = anyID(), a != b else { continue }
                    let values = [(a, value())]
                    name = "batch update \(a), delete \(b)"
                    operation = .batch([.updateItems(values.map { Item($0.0, data: data($0.1)) }), .deleteItems([b])])
                    try reference.update(values)
                    reference.delete([b])
                }
            }
            let label = "seed \(seed) step \(step): \(name)"
            let snapshotBefore = model.dataSources["d"]!.snapshot
            do {
                let outcome = try apply(operation, model)
                #expect(!refused, "\(label): accepted what the reference refuses")
                // The changes turn the rows before into the rows after.
                var replayed = snapshotBefore
                try replayed.apply(outcome.changes)
                replayed.clearMarks()
                var after = model.dataSources["d"]!.snapshot
                after.clearMarks()
                #expect(replayed == after, "\(label): the changes do not replay")
                // A version for every change, none for an edit that changed nothing.
                #expect(outcome.unchanged == (reference == before), "\(label): unchanged is \(outcome.unchanged) \(outcome.changes) \(outcome.changedUnseen)")
                #expect(model.dataSources["d"]!.version == version + (outcome.unchanged ? 0 : 1), "\(label)")
            } catch let error as WireError {
                #expect(refused, "\(label): refused (\(error.message)) what the reference accepts")
                reference = before
                #expect(model.dataSources["d"]!.version == version, "\(label)")
            }
            try check(model, reference, label)
        }
    }
}
