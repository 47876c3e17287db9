import DiffableCore
import ListLayout
import Testing

@Suite("Compositional layout in a terminal")
struct CollectionLayoutTests {
    func layout(_ json: JSONValue, _ sections: [(String, Int)], width: Int = 40, measured: @escaping (Int, Int) -> Int? = { _, _ in nil }) throws -> CollectionLayout {
        CollectionLayout(
            try LayoutDescription(json: json), sections: sections.map { SectionInput(identifier: $0.0, itemCount: $0.1) }, width: width,
            viewportHeight: 20, measuredHeight: measured)
    }

    @Test func plainListsStackRowsAndMeasuredRowsGrow() throws {
        let list = try layout([:], [("a", 3), ("b", 2)], measured: { section, item in section == 0 && item == 1 ? 2 : nil })
        #expect(list.sections[0].items == [Frame(x: 0, y: 0, width: 40, height: 1), Frame(x: 0, y: 1, width: 40, height: 2), Frame(x: 0, y: 3, width: 40, height: 1)])
        #expect(list.sections[1].frame == Frame(x: 0, y: 4, width: 40, height: 2))
        #expect(list.contentHeight == 6)
    }

    @Test func groupedAndInsetGroupedListsHaveBoxesHeadersAndSpacing() throws {
        let grouped = try layout(["default": ["list": ["appearance": "insetGrouped", "headerMode": "supplementary", "footerMode": "supplementary"]]], [("a", 2), ("b", 1)])
        let first = grouped.sections[0]
        #expect(first.supplementaries.map(\.kind) == ["header", "footer"])
        #expect(first.supplementaries[0].frame == Frame(x: 2, y: 0, width: 36, height: 1))
        #expect(first.box == Frame(x: 2, y: 1, width: 36, height: 4), "top border, two rows, bottom border")
        #expect(first.items[0] == Frame(x: 3, y: 2, width: 34, height: 1))
        #expect(first.supplementaries[1].frame.y == 5)
        #expect(grouped.sections[1].frame.y == 7, "a blank row between grouped sections")
        // No header when the data source has no supplementary provider for it.
        let bare = CollectionLayout(
            try LayoutDescription(json: ["default": ["list": ["appearance": "grouped", "headerMode": "supplementary"]]]),
            sections: [SectionInput(identifier: "a", itemCount: 1)], width: 20, viewportHeight: 10, hasSupplementary: { _, _ in false })
        #expect(bare.sections[0].supplementaries.isEmpty && bare.sections[0].box == Frame(x: 0, y: 0, width: 20, height: 3))
    }

    @Test func gridsFillGroupsAndStackThem() throws {
        // Two columns of 3-row tiles with a one-row gap: 5 items make 3 rows of groups.
        let grid = try layout([
            "default": [
                "item": ["width": ["fractionalWidth": 0.5], "height": ["fractionalHeight": 1]],
                "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 3]], "interGroupSpacing": 1,
                "header": [:],
            ]
        ], [("experts", 5)])
        let section = grid.sections[0]
        #expect(section.itemsPerGroup == 2)
        #expect(section.supplementaries[0].frame == Frame(x: 0, y: 0, width: 40, height: 1))
        #expect(section.items == [
            Frame(x: 0, y: 1, width: 20, height: 3), Frame(x: 20, y: 1, width: 20, height: 3),
            Frame(x: 0, y: 5, width: 20, height: 3), Frame(x: 20, y: 5, width: 20, height: 3),
            Frame(x: 0, y: 9, width: 20, height: 3),
        ])
        #expect(section.frame.height == 12)
        // `count` shares the group evenly (the remainder goes to the first items), with spacing.
        let counted = try layout([
            "default": ["group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 1], "count": 3, "interItemSpacing": 1, "item": ["width": ["absolute": 1], "height": ["absolute": 1]]]]
        ], [("s", 3)], width: 20)
        #expect(counted.sections[0].items.map(\.width) == [6, 6, 6] && counted.sections[0].items.map(\.x) == [0, 7, 14])
        // A vertical group stacks its items.
        let vertical = try layout([
            "default": ["group": ["axis": "vertical", "width": ["fractionalWidth": 0.5], "height": ["absolute": 4], "subitems": [["width": ["fractionalWidth": 1], "height": ["absolute": 2]]]]]
        ], [("s", 3)], width: 20)
        #expect(vertical.sections[0].items == [Frame(x: 0, y: 0, width: 10, height: 2), Frame(x: 0, y: 2, width: 10, height: 2), Frame(x: 0, y: 4, width: 10, height: 2)])
    }

    @Test func orthogonalSectionsScrollSideways() throws {
        let row = try layout([
            "default": [
                "item": ["width": ["fractionalWidth": 1], "height": ["fractionalHeight": 1]],
                "group": ["axis": "horizontal", "width": ["fractionalWidth": 0.8], "height": ["absolute": 4]],
                "interGroupSpacing": 2, "orthogonalScrollingBehavior": "groupPaging",
            ]
        ], [("cards", 4), ("after", 0)], width: 40)
        let section = row.sections[0]
        #expect(section.frame.height == 4, "one band, however many cards")
        #expect(section.items.map(\.x) == [0, 34, 68, 102] && section.items.allSatisfy { $0.y == 0 && $0.width == 32 })
        #expect(section.contentWidth == 134)
        #expect(row.visibleElements(top: 0, height: 10).map(\.kind) == [.item(0), .item(1)])
        // Paging by groups: to the next group's leading edge, clamped at the end.
        #expect(row.scrolled(section: 0, from: 0, direction: 1) == 34)
        #expect(row.scrolled(section: 0, from: 34, direction: 1) == 68)
        #expect(row.scrolled(section: 0, from: 68, direction: 1) == 94)
        #expect(row.scrolled(section: 0, from: 94, direction: -1) == 68)
        let visible = row.visibleElements(top: 0, height: 10, horizontalOffsets: [0: 68])
        #expect(visible.map(\.kind) == [.item(2), .item(3)] && visible[0].frame.x == 0 && visible[1].frame.x == 34)
    }

    /// A badge over each card's top trailing corner: anchored by edges, moved by a fraction of its own
    /// size (0.3 of 3 columns is 1 column out), listed after its section's items so it is drawn above them;
    /// in a sideways row it scrolls with its card.
    @Test func badgesSitOnTheirItemsCorners() throws {
        let badge: JSONValue = [
            "elementKind": "badge", "width": ["absolute": 3], "height": ["absolute": 1],
            "containerAnchor": ["edges": ["top", "trailing"], "fractionalOffset": ["x": 0.3, "y": -1]],
        ]
        let cards: JSONValue = [
            "item": ["width": ["fractionalWidth": 0.5], "height": ["fractionalHeight": 1], "supplementaryItems": [badge]],
            "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 4]],
            "interGroupSpacing": 1, "contentInsets": ["top": 1],
        ]
        let grid = try layout(["default": cards], [("s", 3)])
        let section = grid.sections[0]
        #expect(section.items[0] == Frame(x: 0, y: 1, width: 20, height: 4))
        #expect(section.supplementaries(ofItem: 0).map(\.frame) == [Frame(x: 18, y: 0, width: 3, height: 1)], "over the corner: 1 right, 1 up")
        #expect(section.supplementaries(ofItem: 2).map(\.frame) == [Frame(x: 18, y: 5, width: 3, height: 1)])
        let visible = grid.visibleElements(top: 0, height: 20)
        #expect(visible.map(\.kind) == [.item(0), .item(1), .item(2), .itemSupplementary("badge", item: 0), .itemSupplementary("badge", item: 1), .itemSupplementary("badge", item: 2)])
        // Only the badges of items on screen.
        #expect(grid.visibleElements(top: 5, height: 3).map(\.kind) == [.item(2), .itemSupplementary("badge", item: 2)])
        #expect(grid.visibleElements(top: 6, height: 3).map(\.kind) == [.item(2)], "its badge (row 5) is above the screen")
        // Centred along an axis without an edge; an absolute offset in cells.
        let anchor = LayoutAnchor(edges: [.bottom], absoluteOffset: (x: 0, y: 1))
        #expect(anchor.frame(width: 4, height: 1, in: Frame(x: 10, y: 10, width: 10, height: 3)) == Frame(x: 13, y: 13, width: 4, height: 1))
        // In a sideways row the badge moves with its card.
        var row = cards
        if case .object(var members) = row {
            members["orthogonalScrollingBehavior"] = "continuous"
            members["group"] = ["axis": "horizontal", "width": ["absolute": 10], "height": ["absolute": 3]]
            members["item"] = ["width": ["fractionalWidth": 1], "height": ["fractionalHeight": 1], "supplementaryItems": [badge]]
            row = .object(members)
        }
        let scrolled = try layout(["default": row], [("s", 5)]).visibleElements(top: 0, height: 10, horizontalOffsets: [0: 11])
        let badgeFrames = scrolled.filter { if case .itemSupplementary = $0.kind { return true } else { return false } }
        #expect(badgeFrames.first?.kind == .itemSupplementary("badge", item: 1) && badgeFrames.first?.frame.x == 8, "\(scrolled)")
    }

    /// A pinned header stays at the top while its section scrolls under it, and is pushed up by the
    /// section's end; unpinned headers scroll away.
    @Test func pinnedHeadersStayOnScreenWhileTheirSectionPasses() throws {
        let pinned = try layout(["default": ["list": ["headerMode": "supplementary", "pinsHeaderToVisibleBounds": true]]], [("a", 10), ("b", 10)])
        // Scrolled 5 rows into section a (header at 0, items 1…10): the header drawn at the top, last (above the rows).
        var visible = pinned.visibleElements(top: 5, height: 4)
        #expect(visible.last?.kind == .supplementary("header") && visible.last?.frame.y == 0 && visible.last?.section == 0)
        // a's last row (10) at the top: its header still covers it; one row further a is gone, b's header in place.
        visible = pinned.visibleElements(top: 10, height: 4)
        #expect(visible.first { $0.section == 0 && $0.kind == .supplementary("header") }?.frame.y == 0)
        visible = pinned.visibleElements(top: 11, height: 4)
        #expect(!visible.contains { $0.section == 0 } && visible.first { $0.section == 1 && $0.kind == .supplementary("header") }?.frame.y == 0)
        let plain = try layout(["default": ["list": ["headerMode": "supplementary"]]], [("a", 10)])
        #expect(!plain.visibleElements(top: 5, height: 4).contains { $0.kind == .supplementary("header") })
        let grid = try layout([
            "default": ["item": ["width": ["fractionalWidth": 1], "height": ["absolute": 1]], "group": ["axis": "vertical", "width": ["fractionalWidth": 1], "height": ["absolute": 1]],
                        "header": ["pinToVisibleBounds": true, "height": 2]],
        ], [("a", 6), ("b", 6)])
        // a spans rows 0…7 (header 2 + 6 rows); scrolled to 7, a's header can only show its last row.
        visible = grid.visibleElements(top: 7, height: 4)
        let header = visible.first { $0.section == 0 && $0.kind == .supplementary("header") }
        #expect(header?.frame == Frame(x: 0, y: -1, width: 40, height: 2), "pushed up by the end of its section: \(visible)")
    }

    @Test func visibleElementsOfAMillionRowsAreFoundBySearch() throws {
        let list = try layout([:], [("a", 10), ("big", 1_000_000), ("z", 5)])
        let visible = list.visibleElements(top: 500_000, height: 5)
        #expect(visible.map(\.kind) == (499_990..<499_995).map { .item($0) })
        #expect(visible.allSatisfy { $0.section == 1 } && visible.first?.frame.y == 0)
        let end = list.visibleElements(top: list.contentHeight - 3, height: 10)
        #expect(end.map(\.kind) == [.item(2), .item(3), .item(4)] && end.allSatisfy { $0.section == 2 })
    }
}
