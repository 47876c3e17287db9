import DiffableCore
import ListLayout
import ListViewCore
import Testing

/// Reloads as listd sends them: `itemReloads` and `sectionReloads` are positions before their stage
/// only (WireDecoding gives them empty identifiers), so the view model must find the items itself.
@Suite("Reloads as they come off the wire")
struct ReloadsFromTheWireTests {
    /// Changes in the wire's shape: reloads without identifiers.
    static func reloads(items: [IndexPath] = [], sections: [Int] = [], deleting: [IndexPath] = []) -> StagedChanges {
        var stage = ChangeStage()
        stage.itemReloads = items.map { ItemChange(indexPath: $0, item: Item("")) }
        stage.sectionReloads = sections.map { SectionReload(index: $0, section: Section("")) }
        stage.itemDeletes = deleting
        return StagedChanges(stages: [stage])
    }

    static func model() throws -> ViewModel {
        let snapshot = try Snapshot([(Section("S"), [Item("milk"), Item("eggs"), Item("bread")]), (Section("T"), [Item("tea")])])
        var model = ViewModel(snapshot: snapshot, version: 0, layout: LayoutDescription(), width: 30, height: 10)
        model.cursor = "milk"
        _ = ViewModelTests.settle(&model)
        return model
    }

    @Test func aReloadedItemIsDequeuedAgainWhateverItsRegistration() throws {
        var model = try Self.model()
        #expect(model.cells["milk"] != nil)
        try model.apply(Self.reloads(items: [IndexPath(section: 0, item: 0)]), version: 1, reloadData: false)
        #expect(model.cells["milk"] == nil, "the old cell went back to listd")
        #expect(model.marked.contains("milk"), "marked as changed")
        #expect(ViewModelTests.settle(&model).dequeued == [IndexPath(section: 0, item: 0)])
        // The new cell is what is drawn.
        model.store(ViewModelTests.cell("milk", "c-new", text: "✓ milk"))
        var canvas = Canvas(width: 30, height: 10)
        let layout = model.layout()
        model.draw(layout, visible: model.visibleElements(in: layout), on: &canvas, showCursor: false)
        #expect(canvas.plainLines.contains { $0.contains("✓ milk") })
    }

    @Test func reloadPositionsAreReadBeforeTheirStage() throws {
        var model = try Self.model()
        // eggs at [0, 1] before the stage, though milk's delete moves it to [0, 0] after it.
        try model.apply(Self.reloads(items: [IndexPath(section: 0, item: 1)], deleting: [IndexPath(section: 0, item: 0)]), version: 1, reloadData: false)
        #expect(model.cells["eggs"] == nil && model.cells["bread"] != nil && model.cells["milk"] == nil)
        #expect(ViewModelTests.settle(&model).dequeued == [IndexPath(section: 0, item: 0)])
    }

    @Test func aReloadedSectionsCellsAreDequeuedAgain() throws {
        var model = try Self.model()
        try model.apply(Self.reloads(sections: [1]), version: 1, reloadData: false)
        #expect(model.cells["tea"] == nil && model.cells["milk"] != nil)
        #expect(ViewModelTests.settle(&model).dequeued == [IndexPath(section: 1, item: 0)])
    }
}
