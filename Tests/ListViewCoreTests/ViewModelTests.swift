import DiffableCore
import ListLayout
import ListViewCore
import Testing

@Suite("The view model")
struct ViewModelTests {
    static func items(_ prefix: String, _ count: Int) -> [Item] {
        (0..<count).map { Item("\(prefix)\($0)", data: ["title": .string("\(prefix.uppercased()) \($0)")]) }
    }

    /// A cell as dequeue returns it.
    static func cell(_ item: String, _ id: String, text: String? = nil, secondary: String? = nil, level: Int = 0) -> JSONValue {
        var content: [String: JSONValue] = ["type": secondary == nil ? "cell" : "subtitleCell", "text": .string(text ?? item)]
        if let secondary { content["secondaryText"] = .string(secondary) }
        var members: [String: JSONValue] = ["cell": .string(id), "item": .string(item), "content": .object(content), "state": [:]]
        if level > 0 { members["indentationLevel"] = .int(level) }
        return .object(members)
    }

    static func plainList(_ count: Int, height: Int = 10) throws -> ViewModel {
        let snapshot = try Snapshot([(Section("S"), items("i", count))])
        var model = ViewModel(snapshot: snapshot, version: 0, layout: LayoutDescription(), width: 30, height: height)
        model.cursor = "i0"
        return model
    }

    /// Dequeues what `plan` asks for (cells named after their items) and hands back what it releases.
    static func settle(_ model: inout ViewModel) -> (dequeued: [IndexPath], released: [String]) {
        let layout = model.layout()
        let plan = model.plan(model.visibleElements(in: layout))
        model.forget(cellIdentifiers: Set(plan.released))
        for path in plan.items {
            let item = model.snapshot.item(at: path)!.id
            model.store(cell(item, "c-\(item)"))
        }
        return (plan.items, plan.released)
    }

    /// An error cell (a failed dequeue) has no cell to hand back: it is forgotten once off screen, and
    /// dequeued again when its item comes back.
    @Test func errorCellsAreForgottenOffScreen() throws {
        var model = try Self.plainList(40, height: 5)
        let first = model.plan(model.visibleElements(in: model.layout()))
        #expect(first.items.first == IndexPath(section: 0, item: 0))
        model.store(["item": "i0", "error": ["code": "registration-not-found", "message": "gone"]])
        for path in first.items.dropFirst() { model.store(Self.cell(model.snapshot.item(at: path)!.id, "c\(path.item)")) }
        model.top = 20
        let away = model.plan(model.visibleElements(in: model.layout()))
        #expect(!away.released.contains(""), "no cell id to hand back")
        model.forgetErrorCells(notIn: model.visibleElements(in: model.layout()))
        #expect(model.cells["i0"] == nil, "forgotten off screen")
        model.top = 0
        let back = model.plan(model.visibleElements(in: model.layout()))
        #expect(back.items.contains(IndexPath(section: 0, item: 0)), "dequeued again")
    }

    @Test func onlyWhatIsVisibleIsDequeuedAndWhatLeavesIsHandedBack() throws {
        var model = try Self.plainList(100_000)
        let first = Self.settle(&model)
        #expect(first.dequeued == (0..<10).map { IndexPath(section: 0, item: $0) })
        #expect(first.released.isEmpty)
        #expect(Self.settle(&model).dequeued.isEmpty, "nothing new while nothing moved")

        model.top = 5
        let scrolled = Self.settle(&model)
        #expect(scrolled.dequeued == (10..<15).map { IndexPath(section: 0, item: $0) })
        #expect(scrolled.released == ["c-i0", "c-i1", "c-i2", "c-i3", "c-i4"])
        #expect(model.cells.count == 10)
    }

    @Test func theCursorStaysOnItsItemWhenItemsMoveAroundIt() throws {
        var model = try Self.plainList(5)
        _ = Self.settle(&model)
        model.cursor = "i3"
        var moved = model.snapshot
        try moved.moveItem("i3", beforeItem: "i0")
        _ = moved.deleteItems(["i1"])
        _ = try moved.insertItems([Item("new")], beforeItem: "i3")
        try model.apply(moved.difference(from: model.snapshot), version: 1, reloadData: false)
        #expect(model.cursor == "i3" && model.cursorPath == IndexPath(section: 0, item: 1))
        #expect(model.version == 1 && model.snapshot == moved, "the stages rebuild the new snapshot")
        #expect(model.cells["i1"] == nil && model.cells["i3"] != nil, "the deleted item's cell is gone, the moved one kept")
        #expect(Self.settle(&model).dequeued == [IndexPath(section: 0, item: 0)], "only the new item needs a cell")

        // The cursor's item deleted: the cursor goes to the first item.
        var without = model.snapshot
        _ = without.deleteItems(["i3"])
        try model.apply(without.difference(from: model.snapshot), version: 2, reloadData: false)
        #expect(model.cursor == "new")
    }

    @Test func reloadedItemsAreDequeuedAgainReconfiguredOnesKeepTheirCell() throws {
        var model = try Self.plainList(3)
        _ = Self.settle(&model)
        var changes = StagedChanges()
        var stage = ChangeStage()
        stage.itemReloads = [ItemChange(indexPath: IndexPath(section: 0, item: 1), item: Item("i1", data: ["title": "new"]))]
        stage.itemReconfigures = [ItemChange(indexPath: IndexPath(section: 0, item: 2), item: Item("i2", data: ["title": "newer"]))]
        changes.stages = [stage]
        try model.apply(changes, version: 1, reloadData: false)
        #expect(model.cells["i1"] == nil && model.cells["i2"] != nil)
        #expect(Self.settle(&model).dequeued == [IndexPath(section: 0, item: 1)])
        // A cellUpdated for the reconfigured item replaces its content in place.
        model.store(Self.cell("i2", "c-i2", text: "newer"))
        #expect(model.cells["i2"]?["content"]?["text"] == "newer")
        // reloadData forgets every cell.
        try model.apply(StagedChanges(), version: 2, reloadData: true)
        #expect(model.cells.isEmpty && Self.settle(&model).dequeued.count == 3)
    }

    @Test func aFailedReconfigurationKeepsWhatWasShown() throws {
        var model = try Self.plainList(1)
        model.store(Self.cell("i0", "c1", text: "shown"))
        model.store(["cell": "c1", "item": "i0", "state": [:], "error": ["code": "plugin-timeout", "message": "late"]])
        #expect(model.cells["i0"]?["content"]?["text"] == "shown" && model.cells["i0"]?["error"]?["code"] == "plugin-timeout")
    }

    @Test func cellsSizeThemselves() throws {
        var model = try Self.plainList(3)
        _ = Self.settle(&model)
        #expect(model.layout().contentHeight == 3)
        let grew = model.store(Self.cell("i1", "c-i1", secondary: "below"))
        #expect(grew, "a subtitle needs a second row")
        #expect(model.layout().contentHeight == 4)
        let grewAgain = model.store(Self.cell("i1", "c-i1", secondary: "still below"))
        #expect(!grewAgain)
    }

    /// Home's company row: l and h move through the band; revealing the cursor scrolls it sideways by
    /// whole groups and never past its end.
    @Test func sidewaysBandsScrollWithTheCursor() throws {
        let snapshot = try Snapshot([(Section("list"), Self.items("a", 2)), (Section("band"), Self.items("b", 3)), (Section("after"), Self.items("z", 1))])
        let layout = try LayoutDescription(json: [
            "sections": [
                "band": [
                    "item": ["width": ["fractionalWidth": 1], "height": ["fractionalHeight": 1]],
                    "group": ["axis": "horizontal", "width": ["fractionalWidth": 0.8], "height": ["absolute": 3]],
                    "interGroupSpacing": 2, "orthogonalScrollingBehavior": "groupPaging",
                ],
            ],
        ])
        var model = ViewModel(snapshot: snapshot, version: 0, layout: layout, width: 40, height: 10)
        model.cursor = "a1"
        var laidOut = model.layout()
        model.moveCursorRow(1, in: laidOut)
        #expect(model.cursor == "b0")
        model.moveCursorSideways(1, in: laidOut)
        model.revealCursor(laidOut)
        #expect(model.cursor == "b1" && model.horizontalOffsets["band"] == 34, "one group (32) and its spacing (2)")
        model.moveCursorSideways(1, in: laidOut)
        model.revealCursor(laidOut)
        #expect(model.cursor == "b2")
        let end = try #require(model.horizontalOffsets["band"])
        #expect(end <= laidOut.sections[1].contentWidth - 40, "not past the end of the row")
        model.moveCursorSideways(1, in: laidOut)
        #expect(model.cursor == "b2", "nothing after the last card")
        model.moveCursorSideways(-1, in: laidOut)
        model.moveCursorSideways(-1, in: laidOut)
        model.revealCursor(laidOut)
        #expect(model.cursor == "b0" && model.horizontalOffsets["band"] == 0)
        // j leaves the band at once.
        model.moveCursorRow(1, in: laidOut)
        #expect(model.cursor == "z0")
        laidOut = model.layout()
        model.moveCursorRow(-1, in: laidOut)
        #expect(model.snapshot.indexPath(ofItem: model.cursor!)?.section == 1)
    }

    @Test func gridRowsKeepTheirColumn() throws {
        let snapshot = try Snapshot([(Section("grid"), Self.items("g", 7))])
        let layout = try LayoutDescription(json: [
            "default": [
                "item": ["width": ["fractionalWidth": 0.33], "height": ["fractionalHeight": 1]],
                "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 1], "count": 3],
            ],
        ])
        var model = ViewModel(snapshot: snapshot, version: 0, layout: layout, width: 30, height: 10)
        model.cursor = "g1"
        let laidOut = model.layout()
        model.moveCursorRow(1, in: laidOut)
        #expect(model.cursor == "g4")
        model.moveCursorRow(1, in: laidOut)
        #expect(model.cursor == "g6", "the last row has one item: the nearest column")
        model.moveCursorSideways(-1, in: laidOut)
        #expect(model.cursor == "g6", "h does not leave the row")
        model.moveCursorRow(-1, in: laidOut)
        #expect(model.cursor == "g3")
    }

    @Test func outlineCellsAreIndented() throws {
        let snapshot = try Snapshot([(Section("tree"), [Item("root"), Item("child"), Item("grandchild")])])
        var model = ViewModel(snapshot: snapshot, version: 0, layout: LayoutDescription(), width: 20, height: 3)
        model.store(Self.cell("root", "c1", text: "Root"))
        model.store(Self.cell("child", "c2", text: "Child", level: 1))
        model.store(Self.cell("grandchild", "c3", text: "Grandchild", level: 2))
        let layout = model.layout()
        var canvas = Canvas(width: 20, height: 3)
        model.draw(layout, visible: model.visibleElements(in: layout), on: &canvas, showCursor: false)
        #expect(canvas.plainLines == ["Root", "  Child", "    Grandchild"])
    }

    /// An animated change marks the rows it inserted, moved, reloaded or reconfigured (drawn yellow and
    /// bold until cleared); one with animatingDifferences false, or reloadData, marks none.
    @Test func animatedChangesMarkTheirRows() throws {
        var snapshot = Snapshot()
        try snapshot.appendSections(["s"])
        try snapshot.appendItems(["a", "b", "c"], toSection: "s")
        var model = ViewModel(snapshot: snapshot, version: 1, layout: LayoutDescription(), width: 20, height: 5)
        var next = snapshot
        try next.appendItems(["d"], toSection: "s")
        try next.moveItem("a", afterItem: "c")
        try model.apply(next.difference(from: snapshot), version: 2, reloadData: false)
        #expect(model.marked == ["d", "a"], "the insert and the move")
        for key in ["a", "b", "c", "d"] { model.store(["item": .string(key), "cell": .string("c-\(key)"), "content": ["type": "cell", "text": .string(key)]]) }
        var canvas = Canvas(width: 20, height: 5)
        model.draw(model.layout(), visible: model.visibleElements(in: model.layout()), on: &canvas, showCursor: false)
        let frame = canvas.terminalFrame(colors: true)
        #expect(frame.contains("\u{1B}[0;1;33md") && !frame.contains("\u{1B}[0;1;33mb"), "\(frame.debugDescription)")
        model.clearMarks()
        #expect(model.marked.isEmpty)
        var third = next
        try third.appendItems(["e"], toSection: "s")
        try model.apply(third.difference(from: next), version: 3, reloadData: false, animatingDifferences: false)
        #expect(model.marked.isEmpty, "without animation: nothing marked")
    }
}
