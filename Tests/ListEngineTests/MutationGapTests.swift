import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import Testing

/// Behaviours a mutation check found no fast test for (issue 45, point 7): each test here fails when
/// the small bug named in its comment is put in.
@Suite("Engine behaviours a mutation check found untested")
struct MutationGapTests {
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 10_000, maximumIdentifierBytes: 64, maximumRegistrations: 5)

    func change(_ model: StateModel, _ operation: DataSourceOperation) throws -> ChangeOutcome {
        try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: model.dataSources["d"] == nil ? "i1" : nil, operation), limits: limits)
    }

    /// An owner's `reloadItems` reaches a view that shows the outline its own way, at the view's own
    /// index paths (caught: `ViewExpansion.update` dropping the shared changes' item reloads).
    @Test func anOwnersReloadReachesAViewWithItsOwnExpansion() throws {
        let model = StateModel()
        var outline = SectionSnapshot()
        try outline.append(["a", "b", "c"])
        try outline.append(["b1", "b2"], to: "b")
        _ = try change(model, .replaceOutline(section: "O", outline))
        _ = try change(model, .setExpansionScope(.perView))
        let dataSource = try #require(model.dataSources["d"])
        var view = ViewExpansion(showing: dataSource)
        view.set(["b"], expanded: true, inSection: "O")
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        #expect(try view.projection.itemIdentifiers(inSection: "O") == ["a", "b", "b1", "b2", "c"])

        let outcome = try change(model, .edit(.reloadItems(["c", "a"])))
        let shared = outcome.changes.stages.flatMap(\.itemReloads).map { "\($0.indexPath) \($0.item.id)" }
        #expect(shared.count == 2 && shared.contains { $0.hasSuffix(" c") }, "the owner's own changes reload both: \(shared)")
        let changes = view.update(to: dataSource, sharedChanges: outcome.changes)
        let reloads = changes.stages.flatMap(\.itemReloads)
        // c is the fifth row here (b shows its children in this view), the third in the data source.
        #expect(reloads.map(\.item.id) == ["a", "c"], "\(changes)")
        #expect(reloads.map(\.indexPath) == [IndexPath(section: 0, item: 0), IndexPath(section: 0, item: 4)], "\(changes)")
        #expect(changes.stages.allSatisfy { $0.itemInserts.isEmpty && $0.itemDeletes.isEmpty && $0.itemMoves.isEmpty }, "a reload moves nothing: \(changes)")
    }

    /// A user already over `maxBytesPerUser` cannot grow by giving items larger payloads, alone or in a
    /// batch (caught: `SnapshotEdit.mayAddBytes` answering false for `updateItems`).
    @Test func updatingPayloadsCannotGrowAUserOverItsByteQuota() throws {
        var limits = limits
        limits.quota = OwnerQuota(maximumDataSources: 10, maximumItems: 1_000, maximumRegistrations: 10, maximumBytes: 1_000)
        let model = StateModel()
        func quotaRefusal(_ operation: DataSourceOperation) -> String? {
            do throws(WireError) {
                _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, operation), limits: limits)
                return nil
            } catch {
                return error.details["quota"]?.stringValue ?? error.code.rawValue
            }
        }
        let text = JSONValue.string(String(repeating: "x", count: 300))
        _ = try model.apply(
            .dataSource(name: "d", ifVersion: nil, createAs: DataSourceCreation(incarnation: "i", owner: 1000), .edit(.appendSections(["S"]))), limits: limits)
        var appended = 0
        while quotaRefusal(.edit(.appendItems([Item("i\(appended)", data: ["t": text])], toSection: "S"))) == nil { appended += 1 }
        let stored = model.storedBytes(of: 1000)
        #expect(appended > 0 && stored > 1_000, "the user is over its quota (\(stored) bytes)")

        let larger = Item("i0", data: ["t": text, "more": .string(String(repeating: "y", count: 500))])
        #expect(quotaRefusal(.edit(.updateItems([larger]))) == "maxBytesPerUser")
        #expect(quotaRefusal(.batch([.reloadItems(["i1"]), .updateItems([larger])])) == "maxBytesPerUser")
        #expect(model.storedBytes(of: 1000) == stored, "nothing grew")
        #expect(model.dataSources["d"]?.snapshot.data(ofItem: "i0") == ["t": text])
        // Removing still works, and then the update does.
        #expect(quotaRefusal(.edit(.deleteItems(["i1", "i2"]))) == nil)
        #expect(quotaRefusal(.edit(.updateItems([larger]))) == nil)
        #expect(model.storedBytes(of: 1000) == model.dataSources["d"]?.storedBytes)
    }
}
