import CellCore
import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import Testing

/// A change rehearsed on a copy of its data source and installed gives the state applying it gives;
/// a rehearsal against an older version is not installed; quotas are checked when installing.
@Suite("State model: rehearsing a change off the model's thread")
struct RehearsalTests {
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 10_000, maximumIdentifierBytes: 64, maximumRegistrations: 5)

    func outlineModel() throws -> StateModel {
        var outline = SectionSnapshot()
        for parent in 0..<20 {
            try outline.append([Item("p\(parent)", data: ["n": .int(parent)])])
            try outline.append((0..<5).map { Item("c\(parent)-\($0)") }, to: "p\(parent)")
        }
        let model = StateModel()
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: DataSourceCreation(incarnation: "i", owner: 1000), .edit(.appendSections(["top", "o"]))), limits: limits)
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceOutline(section: "o", outline)), limits: limits)
        return model
    }

    func encoding(_ model: StateModel) -> String {
        let d = model.dataSources["d"]!
        return String(decoding: StateCoding.encode(d.content), as: UTF8.self) + " \(d.storedBytes) \(d.storedItemCount) \(model.usage(of: 1000).items) \(model.storedBytes(of: 1000))"
    }

    @Test func anInstalledRehearsalIsTheAppliedChange() throws {
        let changes: [StateChange] = [
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansion(section: "o", items: (0..<20).map { "p\($0)" }, expanded: true)),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansion(section: "o", items: ["p3", "p7"], expanded: false)),
            .dataSource(name: "d", ifVersion: 4, createAs: nil, .replaceOutline(section: "o", try SectionSnapshot(items: [Item("x")]))),
        ]
        let applied = try outlineModel()
        let installed = try outlineModel()
        for (index, change) in changes.enumerated() {
            let expected = try applied.apply(change, limits: limits)
            let rehearsal = try StateModel.rehearse(change, on: try #require(installed.rehearsalBase(of: "d")), limits: limits)
            let outcome = try #require(try installed.install(rehearsal, limits: limits, recordingUndo: true))
            #expect(outcome.changes == expected.changes && outcome.version == expected.version)
            #expect(encoding(installed) == encoding(applied))
            // Its undo gives back the state before it.
            let before = try outlineModel()
            if index == 0 {
                installed.undo([try #require(outcome.undo)])
                #expect(encoding(installed) == encoding(before))
                let again = try StateModel.rehearse(change, on: try #require(installed.rehearsalBase(of: "d")), limits: limits)
                _ = try #require(try installed.install(again, limits: limits, recordingUndo: false))
            }
        }
    }

    @Test func aRehearsalOfAnOlderVersionIsNotInstalled() throws {
        let model = try outlineModel()
        let change = StateChange.dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansion(section: "o", items: ["p1"], expanded: true))
        let rehearsal = try StateModel.rehearse(change, on: try #require(model.rehearsalBase(of: "d")), limits: limits)
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems(["late"], toSection: "top"))), limits: limits)
        let before = encoding(model)
        #expect(try model.install(rehearsal, limits: limits, recordingUndo: false) == nil)
        #expect(encoding(model) == before)
    }

    @Test func quotasAreCheckedWhenInstalling() throws {
        let model = try outlineModel()
        var quota = limits
        quota.quota = OwnerQuota(maximumDataSources: 10, maximumItems: model.usage(of: 1000).items + 2, maximumRegistrations: 5)
        // Another data source of the same owner takes the room while the change is rehearsed.
        let change = StateChange.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems(["a", "b"], toSection: "top")))
        let rehearsal = try StateModel.rehearse(change, on: try #require(model.rehearsalBase(of: "d")), limits: quota)
        _ = try model.apply(.dataSource(name: "e", ifVersion: nil, createAs: DataSourceCreation(incarnation: "j", owner: 1000), .edit(.appendSections([Section("s")]))), limits: quota)
        _ = try model.apply(.dataSource(name: "e", ifVersion: nil, createAs: nil, .edit(.appendItems(["x", "y"], toSection: "s"))), limits: quota)
        #expect(throws: WireError.self) { try model.install(rehearsal, limits: quota, recordingUndo: false) }
    }
}
