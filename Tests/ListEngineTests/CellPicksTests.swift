import CellCore
import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import Testing

/// A cell always comes from the registration its rules pick now: a change that makes the rules pick
/// another registration for a row reloads it (in a last stage, at its final index path, with a warning);
/// one that keeps the pick leaves the reconfigure as it is.
@Suite("Rows the rules pick otherwise are reloaded")
struct CellPicksTests {
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 1_000, maximumIdentifierBytes: 64, maximumRegistrations: 10)

    func change(_ model: StateModel, _ operation: DataSourceOperation) throws -> ChangeOutcome {
        try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: model.dataSources["d"] == nil ? "i1" : nil, operation), limits: limits)
    }

    /// Sections "today" (milk, mail) and "later" (tea); rules: done → todoDone, section later → laterRow,
    /// else todoOpen.
    func model() throws -> StateModel {
        let model = StateModel()
        for name in ["todoOpen", "todoDone", "laterRow"] {
            _ = try model.apply(.register(try Registration(name: name, definition: ["contentConfiguration": ["type": "cell", "text": "{{title}}"]])), limits: limits)
        }
        let snapshot = try Snapshot([
            (Section("today"), [Item("milk", data: ["done": false]), Item("mail", data: ["done": false])]),
            (Section("later"), [Item("tea", data: ["done": false])]),
        ])
        _ = try change(model, .replaceSnapshot(snapshot, reloadData: false))
        let provider = CellProvider(
            rules: [
                CellProvider.Rule(match: (field: "done", equals: true), registration: "todoDone"),
                CellProvider.Rule(section: "later", registration: "laterRow"),
            ], defaultRegistration: "todoOpen")
        _ = try change(model, .setCellProvider(provider, elementKind: nil))
        return model
    }

    func reloads(_ outcome: ChangeOutcome) -> [String] { outcome.changes.stages.flatMap(\.itemReloads).map(\.item.id) }
    func reconfigures(_ outcome: ChangeOutcome) -> [String] { outcome.changes.stages.flatMap(\.itemReconfigures).map(\.item.id) }
    func warned(_ outcome: ChangeOutcome) -> [String] {
        outcome.warnings.filter { $0.code == .reconfigureBecameReload }.flatMap(\.identifiers)
    }

    @Test func aPayloadThatChangesThePickReloadsAndOneThatKeepsItReconfigures() throws {
        let model = try model()
        let outcome = try change(model, .edit(.updateItems([Item("milk", data: ["done": true]), Item("mail", data: ["done": false, "note": "x"])])))
        #expect(reloads(outcome) == ["milk"] && warned(outcome) == ["milk"])
        #expect(reconfigures(outcome) == ["mail"], "mail's registration stays: its cell is configured again")
        #expect(outcome.changes.stages.last?.itemReloads.map(\.indexPath) == [IndexPath(section: 0, item: 0)])
    }

    @Test func aMoveIntoASectionARuleNamesReloadsAtTheFinalPosition() throws {
        let model = try model()
        let outcome = try change(model, .edit(.moveItem("mail", .after("tea"))))
        #expect(outcome.changes.stages.first?.itemMoves.count == 1)
        #expect(outcome.changes.stages.last?.itemReloads.map(\.indexPath) == [IndexPath(section: 1, item: 1)])
        #expect(warned(outcome) == ["mail"])
        // Within its section the pick stays: a move, nothing reloaded.
        let within = try change(model, .edit(.moveItem("mail", .before("tea"))))
        #expect(reloads(within).isEmpty && warned(within).isEmpty)
    }

    @Test func aWholeSnapshotReloadsTheRowsItRepicks() throws {
        let model = try model()
        let snapshot = try Snapshot([
            (Section("today"), [Item("milk", data: ["done": true]), Item("mail", data: ["done": false, "note": "y"])]),
            (Section("later"), [Item("tea", data: ["done": false])]),
        ])
        let outcome = try change(model, .replaceSnapshot(snapshot, reloadData: false))
        #expect(reloads(outcome) == ["milk"] && reconfigures(outcome) == ["mail"] && warned(outcome) == ["milk"])
        var replayed = try Snapshot([
            (Section("today"), [Item("milk", data: ["done": false]), Item("mail", data: ["done": false])]),
            (Section("later"), [Item("tea", data: ["done": false])]),
        ])
        try replayed.apply(outcome.changes)
        replayed.clearMarks()
        var after = model.dataSources["d"]!.snapshot
        after.clearMarks()
        #expect(replayed == after)
        // A row the new snapshot moves into a section a rule names is reloaded there.
        let moved = try Snapshot([
            (Section("today"), [Item("milk", data: ["done": true])]),
            (Section("later"), [Item("tea", data: ["done": false]), Item("mail", data: ["done": false, "note": "y"])]),
        ])
        let move = try change(model, .replaceSnapshot(moved, reloadData: false))
        #expect(warned(move) == ["mail"])
        #expect(move.changes.stages.last?.itemReloads.map(\.indexPath) == [IndexPath(section: 1, item: 1)])
    }

    @Test func newRulesReloadTheRowsTheyPickOtherwise() throws {
        let model = try model()
        let provider = CellProvider(rules: [CellProvider.Rule(section: "later", registration: "laterRow")], defaultRegistration: "todoDone")
        let outcome = try change(model, .setCellProvider(provider, elementKind: nil))
        #expect(Set(reloads(outcome)) == ["milk", "mail"], "tea keeps laterRow: its cell stays")
        #expect(try change(model, .setCellProvider(provider, elementKind: nil)).unchanged)
    }
}
