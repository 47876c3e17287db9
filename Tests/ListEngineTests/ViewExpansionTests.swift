import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import TestSupport
import Testing

@Suite("Expansion per view: a view's own projection and its changes")
struct ViewExpansionTests {
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 10_000, maximumIdentifierBytes: 64, maximumRegistrations: 5)

    /// A tree: a, b (children b1, b2 (children b2x)), c (child c1); nothing expanded.
    func tree() throws -> SectionSnapshot {
        var outline = SectionSnapshot()
        try outline.append(["a", "b", "c"])
        try outline.append(["b1", "b2"], to: "b")
        try outline.append(["b2x"], to: "b2")
        try outline.append(["c1"], to: "c")
        return outline
    }

    func change(_ model: StateModel, _ operation: DataSourceOperation) throws {
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: model.dataSources["d"] == nil ? "i1" : nil, operation), limits: limits)
    }

    /// Data source "d": an outline section O (the tree) and a flat section F, expansion scope perView.
    func model() throws -> StateModel {
        let model = StateModel()
        try change(model, .replaceOutline(section: "O", try tree()))
        try change(model, .edit(.appendSections(["F"])))
        try change(model, .edit(.appendItems(["f1", "f2"], toSection: "F")))
        try change(model, .setExpansionScope(.perView))
        return model
    }

    func ids(_ snapshot: Snapshot, _ section: String) -> [String] { (try? snapshot.itemIdentifiers(inSection: section)) ?? [] }

    @Test func aViewsOwnExpansionShowsInItsProjectionOnly() throws {
        let model = try model()
        let dataSource = model.dataSources["d"]!
        var view = ViewExpansion(showing: dataSource)
        view.set(["b"], expanded: true, inSection: "O")
        let changes = view.update(to: dataSource, sharedChanges: StagedChanges())
        #expect(ids(view.projection, "O") == ["a", "b", "b1", "b2", "c"])
        #expect(ids(dataSource.snapshot, "O") == ["a", "b", "c"])
        // Inserted children, then the parent's disclosure reconfigured.
        #expect(changes.stages.first?.itemInserts.map(\.item.id) == ["b1", "b2"])
        #expect(changes.stages.last?.itemReconfigures.map(\.item.id) == ["b"])
        #expect(view.isExpanded("b", inSection: "O", outline: dataSource.outlines["O"]!))
        #expect(!view.isExpanded("c", inSection: "O", outline: dataSource.outlines["O"]!))
    }

    @Test func whatTheViewDidNotSetFollowsTheOwner() throws {
        let model = try model()
        let dataSource = model.dataSources["d"]!
        var view = ViewExpansion(showing: dataSource)
        view.set(["b"], expanded: false, inSection: "O")
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        try change(model, .setExpansion(section: "O", items: ["b", "c"], expanded: true))
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        // The owner expanded b and c: the view collapsed b itself, so only c opens here.
        #expect(ids(dataSource.snapshot, "O") == ["a", "b", "b1", "b2", "c", "c1"])
        #expect(ids(view.projection, "O") == ["a", "b", "c", "c1"])
    }

    @Test func overridesGoWithTheirItemsAndAllAtOnceWhenTheScopeIsShared() throws {
        let model = try model()
        let dataSource = model.dataSources["d"]!
        var view = ViewExpansion(showing: dataSource)
        view.set(["b", "c"], expanded: true, inSection: "O")
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        var smaller = try tree()
        try smaller.delete(["c"])
        try change(model, .replaceOutline(section: "O", smaller))
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        // Kept until the change is published (it might be undone), then forgotten.
        #expect(view.overrides == ["O": ["b": true, "c": true]])
        view.prune(dataSource)
        #expect(view.overrides == ["O": ["b": true]])
        try change(model, .setExpansionScope(.shared))
        let changes = view.update(to: dataSource, sharedChanges: StagedChanges())
        #expect(view.showsSharedSnapshot)
        view.prune(dataSource)
        #expect(view.isEmpty)
        #expect(view.projection == dataSource.snapshot)
        #expect(changes.stages.first?.itemDeletes.count == 2)  // b1, b2
    }

    /// A change undone before it was published (a failed write) leaves the view's own expansion as it
    /// was: reprojected, it shows what it showed before.
    @Test func anUndoneChangeLeavesTheViewsExpansionAsItWas() throws {
        let model = try model()
        let dataSource = model.dataSources["d"]!
        var view = ViewExpansion(showing: dataSource)
        view.set(["b"], expanded: true, inSection: "O")
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        let shown = view.projection
        var smaller = try tree()
        try smaller.delete(["b"])
        for operation: DataSourceOperation in [.setExpansionScope(.shared), .replaceOutline(section: "O", smaller), .edit(.deleteSections(["O"]))] {
            let outcome = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, operation), limits: limits, recordingUndo: true)
            _ = view.update(to: dataSource, sharedChanges: outcome.changes)
            #expect(view.projection != shown, "\(operation)")
            model.undo([try #require(outcome.undo)])
            view.reproject(dataSource)
            #expect(view.projection == shown, "\(operation)")
            #expect(view.overrides == ["O": ["b": true]])
        }
    }

    /// Payloads the owner updates reach the outline (and so expanding, collapsing and the views that show
    /// it their own way), not only the snapshot.
    @Test func updatedPayloadsReachOutlinesAndViews() throws {
        let model = try model()
        let dataSource = model.dataSources["d"]!
        var view = ViewExpansion(showing: dataSource)
        view.set(["b"], expanded: true, inSection: "O")
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        let outcome = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.updateItems([Item("b", data: ["title": "Bee"])]))), limits: limits)
        let changes = view.update(to: dataSource, sharedChanges: outcome.changes)
        #expect(view.projection.data(ofItem: "b") == ["title": "Bee"])
        #expect(changes.stages.flatMap(\.itemReconfigures).map(\.item) == [Item("b", data: ["title": "Bee"])])
        #expect(dataSource.outlines["O"]?.data(of: "b") == ["title": "Bee"])
        // The owner expands: b keeps its new payload in the data source's snapshot too.
        try change(model, .setExpansion(section: "O", items: ["b"], expanded: true))
        #expect(dataSource.snapshot.data(ofItem: "b") == ["title": "Bee"])
    }

    /// A change that touches no section the view shows its own way reaches it as it is.
    @Test func changesElsewhereReachTheViewAsTheyAre() throws {
        let model = try model()
        let dataSource = model.dataSources["d"]!
        var view = ViewExpansion(showing: dataSource)
        view.set(["b"], expanded: true, inSection: "O")
        _ = view.update(to: dataSource, sharedChanges: StagedChanges())
        let outcome = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems(["f3"], toSection: "F"))), limits: limits)
        #expect(view.update(to: dataSource, sharedChanges: outcome.changes) == outcome.changes)
        #expect(ids(view.projection, "F") == ["f1", "f2", "f3"] && ids(view.projection, "O") == ["a", "b", "b1", "b2", "c"])
    }

    /// Random owner changes and view expansions: each time, the view's changes turn what it showed into
    /// what it shows, and what it shows is the outline under its own expansion over the owner's.
    @Test func theViewsChangesAlwaysLeadToItsProjection() throws {
        var random = SeededGenerator(seed: 33)
        for round in 0..<40 {
            let model = try model()
            let dataSource = model.dataSources["d"]!
            var view = ViewExpansion(showing: dataSource)
            var next = 0
            for step in 0..<30 {
                let before = view.projection
                // What each disclosure in O showed.
                let shownBefore = dataSource.outlines["O"].map { outline in
                    Dictionary(uniqueKeysWithValues: ids(before, "O").map { ($0, view.isExpanded($0, inSection: "O", outline: outline)) })
                } ?? [:]
                var shared = StagedChanges()
                let outline = dataSource.outlines["O"]
                let items = outline?.items.map(\.id) ?? []
                switch random.next() % 9 {
                case 0, 1:
                    if let item = items.randomElement(using: &random) {
                        view.set([item], expanded: random.next() % 2 == 0, inSection: "O")
                    }
                case 2:
                    if let item = items.randomElement(using: &random) {
                        let outcome = try model.apply(
                            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansion(section: "O", items: [item], expanded: random.next() % 2 == 0)),
                            limits: limits)
                        shared = outcome.changes
                    }
                case 3:
                    var edited = outline ?? SectionSnapshot()
                    next += 1
                    if let parent = items.randomElement(using: &random), random.next() % 3 != 0 {
                        try edited.append([Item("n\(next)", data: ["n": .int(next)])], to: parent)
                    } else {
                        try edited.append([Item("n\(next)")])
                    }
                    shared = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceOutline(section: "O", edited)), limits: limits).changes
                case 4:
                    if var edited = outline, let item = items.randomElement(using: &random) {
                        try edited.delete([item])
                        shared = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceOutline(section: "O", edited)), limits: limits).changes
                    }
                case 5:
                    next += 1
                    shared = try model.apply(
                        .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems([Item("f-\(next)")], toSection: "F"))), limits: limits
                    ).changes
                case 6:
                    let sections = dataSource.snapshot.sectionIdentifiers
                    if sections.count > 1 {
                        shared = try model.apply(
                            .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.moveSection(sections.last!, .before(sections[0])))), limits: limits
                        ).changes
                    }
                case 7:
                    if let item = dataSource.snapshot.itemIdentifier(at: IndexPath(section: 0, item: 0)) {
                        shared = try model.apply(
                            .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.reconfigureItems([item]))), limits: limits
                        ).changes
                    }
                default:
                    let scope: ExpansionScope = random.next() % 4 == 0 ? .shared : .perView
                    _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansionScope(scope)), limits: limits)
                }
                let changes = view.update(to: dataSource, sharedChanges: shared)
                var applied = before
                try applied.apply(changes)
                #expect(applied == view.projection, "round \(round) step \(step)")
                // What the view shows: the shared snapshot but for O, which follows the view's own expansion.
                for section in dataSource.snapshot.sectionIdentifiers where section != "O" {
                    #expect(ids(view.projection, section) == ids(dataSource.snapshot, section))
                }
                if let outline = dataSource.outlines["O"] {
                    let expected = outline.visibleItems { view.isExpanded($0, inSection: "O", outline: outline) }.map(\.item.id)
                    #expect(ids(view.projection, "O") == expected, "round \(round) step \(step)")
                }
                if dataSource.expansionScope == .shared { #expect(view.showsSharedSnapshot) }
                // Published: what no longer applies is forgotten (sometimes later, as when writes queue).
                if random.next() % 2 == 0 { view.prune(dataSource) }
                // A disclosure that changes is configured again (reconfigured or reloaded) where the view still shows it.
                let updated = Set(changes.stages.flatMap { $0.itemReconfigures.map(\.item.id) + $0.itemReloads.map(\.item.id) })
                if let outline = dataSource.outlines["O"] {
                    for item in ids(view.projection, "O") {
                        guard let was = shownBefore[item], was != view.isExpanded(item, inSection: "O", outline: outline) else { continue }
                        #expect(updated.contains(item), "round \(round) step \(step): \(item)")
                    }
                }
            }
        }
    }
}
