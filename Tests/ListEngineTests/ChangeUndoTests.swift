import CellCore
import DiffableCore
import ListLayout
@testable import ListEngine
import ListStore
import ListWire
import TestSupport
import Testing

/// Undoing changes in memory (what a durable server does when a write fails): the state, its usage
/// counts and every data source's stored form become exactly what they were.
@Suite("State model: undoing changes in memory")
struct ChangeUndoTests {
    let limits = ChangeLimits(maximumDataSources: 50, maximumItemsPerDataSource: 10_000, maximumIdentifierBytes: 64, maximumRegistrations: 20)

    /// Everything observable about a model: each data source's stored form, the registrations in
    /// order, and the usage counts.
    func fingerprint(_ model: StateModel) -> String {
        var parts: [String] = []
        for name in model.dataSources.keys.sorted() {
            let dataSource = model.dataSources[name]!
            parts.append("\(name)/\(dataSource.incarnation): " + String(decoding: StateCoding.encode(dataSource.content), as: UTF8.self))
            parts.append("bytes \(dataSource.storedBytes) items \(dataSource.storedItemCount)")
        }
        for name in model.registrationOrder {
            parts.append("registration \(name): " + String(decoding: StateCoding.encode(model.registrations[name]!), as: UTF8.self))
        }
        for owner: UInt32 in [0, 1000] {
            let usage = model.usage(of: owner)
            parts.append("owner \(owner): \(usage.dataSources) \(usage.items) \(usage.registrations) \(model.storedBytes(of: owner))")
        }
        return parts.joined(separator: "\n")
    }

    func change(_ name: String, _ operation: DataSourceOperation, create: Bool = false) -> StateChange {
        .dataSource(name: name, ifVersion: nil, createAs: create ? DataSourceCreation(incarnation: "c-\(name)", owner: 1000) : nil, operation)
    }

    /// One change of every kind, each undone alone (newest first) and then all at once.
    @Test func everyKindOfChangeIsUndoneExactly() throws {
        var outline = SectionSnapshot()
        try outline.append([Item("fruit", data: ["n": 1])])
        try outline.append([Item("apple"), Item("pear")], to: "fruit")
        // Registered by the data sources' owner: a provider's plain names resolve in that owner's namespace.
        var row = try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell", "text": "{{title}}"]])
        row.owner = 1000
        var header = try Registration(
            name: "header",
            definition: ["kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": "subtitleCell", "text": "{{title}}"]])
        header.owner = 1000
        var valueRow = try Registration(name: "row", definition: ["contentConfiguration": ["type": "valueCell", "text": "{{title}}"]])
        valueRow.owner = 1000
        let changes: [StateChange] = [
            change("d", .edit(.appendSections(["S", "T"])), create: true),
            change("d", .edit(.appendItems([Item("a", data: ["n": 1]), "b", "c"], toSection: "S"))),
            .register(row),
            .register(row),  // identical: nothing to undo
            .register(header),
            .replaceRegistration(valueRow),
            change("d", .setCellProvider(CellProvider(defaultRegistration: "row"), elementKind: nil)),
            change("d", .setCellProvider(CellProvider(defaultRegistration: "header"), elementKind: "header")),
            change("d", .replaceOutline(section: "T", outline)),
            change("d", .setExpansion(section: "T", items: ["fruit"], expanded: true)),  // an outline's items start collapsed
            change("d", .setExpansionScope(.perView)),
            change("d", .batch([.updateItems([Item("a", data: ["n": 2])]), .moveItem("b", .before("a")), .deleteItems(["c"])])),
            change("d", .edit(.deleteSections(["S"]))),
            change("d", .setLayout(LayoutDescription(defaultLayout: .list(ListSectionConfiguration(appearance: .insetGrouped))))),
            change("e", .replaceSnapshot(try Snapshot([(Section("X"), ["x1", "x2"])]), reloadData: false), create: true),
            change("e", .replaceSnapshot(try Snapshot([(Section("Y", data: ["t": "y"]), ["x2", "y1"])]), reloadData: false)),
            change("e", .edit(.deleteAllItems)),
            .unregister(name: "row", owner: 1000),
            .dropDataSource(name: "d"),
            .createDataSource(name: "d", incarnation: "again", content: DataSourceContent(owner: 1000)),
            change("d", .edit(.appendSections([Section("Z")]))),
        ]
        let model = StateModel()
        _ = try model.apply(change("base", .edit(.appendSections(["B"])), create: true), limits: limits)
        var fingerprints = [fingerprint(model)]
        var undos: [ChangeUndo] = []
        for change in changes {
            let outcome = try model.apply(change, limits: limits, recordingUndo: true)
            undos.append(try #require(outcome.undo, "\(change)"))
            fingerprints.append(fingerprint(model))
        }
        let changingNothing = changes.indices.filter { fingerprints[$0 + 1] == fingerprints[$0] }
        #expect(changingNothing == [3], "every change but the identical register changed something")
        #expect(Set(fingerprints).count == fingerprints.count - 1, "and no two states are alike")
        let end = fingerprint(model)
        // Newest first, one at a time.
        for index in changes.indices.reversed() {
            model.undo([undos[index]])
            #expect(fingerprint(model) == fingerprints[index], "undoing change \(index): \(changes[index])")
        }
        // Again, then all at once.
        undos = []
        for change in changes { undos.append(try #require(try model.apply(change, limits: limits, recordingUndo: true).undo)) }
        #expect(fingerprint(model) == end, "the same changes make the same state")
        model.undo(undos)
        #expect(fingerprint(model) == fingerprints[0])
    }

    /// Random edits (many of them refused) on a random snapshot; the undo of a random suffix of the
    /// accepted ones gives back the state before it, item for item.
    @Test func randomEditsAreUndoneNewestFirst() throws {
        var random = SeededGenerator(seed: 31)
        var accepted = 0
        var undone = 0
        for round in 0..<60 {
            let model = StateModel()
            _ = try model.apply(change("d", .edit(.appendSections(["s0", "s1", "s2"])), create: true), limits: limits)
            var fingerprints = [fingerprint(model)]
            var undos: [ChangeUndo] = []
            var serial = 0
            for _ in 0..<40 {
                let edit = randomEdit(model.dataSources["d"]!.snapshot, &random, serial: &serial)
                do throws(WireError) {
                    let outcome = try model.apply(change("d", edit), limits: limits, recordingUndo: true)
                    guard let undo = outcome.undo else {
                        Issue.record("no undo for \(edit)")
                        return
                    }
                    undos.append(undo)
                    fingerprints.append(fingerprint(model))
                } catch {
                    #expect(fingerprint(model) == fingerprints.last!, "a refused change changes nothing (round \(round), \(edit))")
                }
            }
            let keep = Int.random(in: 0...undos.count, using: &random)
            model.undo(Array(undos[keep...]))
            #expect(fingerprint(model) == fingerprints[keep], "round \(round): undoing \(undos.count - keep) of \(undos.count)")
            accepted += undos.count
            undone += undos.count - keep
        }
        #expect(accepted > 1_000 && undone > 400, "the rounds exercise undo (\(accepted) accepted, \(undone) undone)")
    }

    func randomEdit(_ snapshot: Snapshot, _ random: inout SeededGenerator, serial: inout Int) -> DataSourceOperation {
        let items = snapshot.itemIdentifiers
        let sections = snapshot.sectionIdentifiers
        func someItem() -> String { items.isEmpty || Int.random(in: 0..<8, using: &random) == 0 ? "missing" : items.randomElement(using: &random)! }
        func someSection() -> String { sections.isEmpty ? "s0" : sections.randomElement(using: &random)! }
        func fresh(_ count: Int) -> [Item] {
            (0..<count).map { _ in
                serial += 1
                return Item("n\(serial)", data: Int.random(in: 0..<2, using: &random) == 0 ? .null : ["v": .int(serial)])
            }
        }
        func one() -> SnapshotEdit {
            switch Int.random(in: 0..<14, using: &random) {
            case 0: return .appendItems(fresh(Int.random(in: 1...5, using: &random)), toSection: someSection())
            case 1: return .insertItems(fresh(2), Int.random(in: 0..<2, using: &random) == 0 ? .before(someItem()) : .after(someItem()))
            case 2: return .deleteItems([someItem(), someItem()])
            case 3: return .moveItem(someItem(), .after(someItem()))
            case 4: return .updateItems([Item(someItem(), data: ["u": .int(serial)])])
            case 5: return .reloadItems([someItem()])
            case 6: return .reconfigureItems([someItem()])
            case 7:
                serial += 1
                return .appendSections([Section("t\(serial)", data: ["h": .int(serial)])])
            case 8: return .deleteSections([someSection()])
            case 9: return .moveSection(someSection(), .before(someSection()))
            case 10: return .updateSections([Section(someSection(), data: ["u": .int(serial)])])
            case 11: return .replaceItems(inSection: someSection(), with: fresh(3) + [Item(someItem())])
            case 12: return .deleteAllItems
            default: return .appendItems([Item(someItem())], toSection: someSection())  // an existing one: moved
            }
        }
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .batch((0..<Int.random(in: 1...4, using: &random)).map { _ in one() })
        case 1:
            var replacement = snapshot
            _ = try? replacement.perform(one())
            return .replaceSnapshot(replacement, reloadData: false)
        default: return .edit(one())
        }
    }
}
