import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import Testing

/// Plain edits of a section that holds an outline keep what views expanded their own way (the outline,
/// and so the view's own expansion, survives them), and each view's changes replay onto its projection.
@Suite("Expansion per view through plain edits")
struct ViewExpansionEditTests {
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 10_000, maximumIdentifierBytes: 64, maximumRegistrations: 5)

    func change(_ model: StateModel, _ operation: DataSourceOperation) throws -> ChangeOutcome {
        try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: model.dataSources["d"] == nil ? "i1" : nil, operation), limits: limits)
    }

    func ids(_ snapshot: Snapshot, _ section: String) -> [String] { (try? snapshot.itemIdentifiers(inSection: section)) ?? [] }

    @Test func aViewsOwnExpansionSurvivesEveryVerb() throws {
        let model = StateModel()
        var outline = SectionSnapshot()
        try outline.append(["a", "b"])
        try outline.append(["a1", "a2"], to: "a")
        try outline.append(["b1"], to: "b")
        _ = try change(model, .replaceOutline(section: "O", outline))
        _ = try change(model, .setExpansionScope(.perView))
        let dataSource = model.dataSources["d"]!
        var view = ViewExpansion(showing: dataSource)
        view.set(["a"], expanded: true, inSection: "O")
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        #expect(ids(view.projection, "O") == ["a", "a1", "a2", "b"])

        // Each edit: the data source's rows, then the view's (its expansion kept), its changes replaying.
        let steps: [(DataSourceOperation, shared: [String], own: [String])] = [
            (.edit(.appendItems(["c"], toSection: "O")), ["a", "b", "c"], ["a", "a1", "a2", "b", "c"]),
            (.edit(.insertItems(["a3"], .after("a2"))), ["a", "b", "c"], ["a", "a1", "a2", "a3", "b", "c"]),
            (.edit(.moveItem("b", .before("a"))), ["b", "a", "c"], ["b", "a", "a1", "a2", "a3", "c"]),
            (.edit(.deleteItems(["a1"])), ["b", "a", "c"], ["b", "a", "a2", "a3", "c"]),
            (.edit(.updateItems([Item("a2", data: ["done": true])])), ["b", "a", "c"], ["b", "a", "a2", "a3", "c"]),
            (.edit(.reloadItems(["a"])), ["b", "a", "c"], ["b", "a", "a2", "a3", "c"]),
        ]
        for (operation, shared, own) in steps {
            let before = view.projection
            let outcome = try change(model, operation)
            let changes = view.update(to: dataSource, sharedChanges: outcome.changes)
            view.prune(dataSource)
            #expect(ids(dataSource.snapshot, "O") == shared, "\(operation)")
            #expect(ids(view.projection, "O") == own, "\(operation)")
            var replayed = before
            try replayed.apply(changes)
            replayed.clearMarks()
            var projection = view.projection
            projection.clearMarks()
            #expect(replayed == projection, "\(operation): the view's changes do not replay")
            #expect(view.isExpanded("a", inSection: "O", outline: dataSource.outlines["O"]!), "\(operation)")
        }
        // The collapsed child's new payload is the outline's (and the view shows it).
        #expect(dataSource.outlines["O"]?.data(of: "a2") == ["done": true])
        #expect(view.projection.data(ofItem: "a2") == ["done": true])
    }
}
