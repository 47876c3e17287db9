import DiffableCore
import ListLayout
import Testing

@Suite("Layout descriptions")
struct LayoutDescriptionTests {
    /// The seed's Home screen: a list of consults, a row of company cards scrolling sideways, a grid of experts.
    static let home: JSONValue = [
        "default": ["list": ["appearance": "insetGrouped", "headerMode": "supplementary"]],
        "sections": [
            "company": [
                "group": ["axis": "horizontal", "width": ["fractionalWidth": 0.8], "height": ["absolute": 4], "item": ["width": ["fractionalWidth": 1], "height": ["fractionalHeight": 1]]],
                "interGroupSpacing": 2, "orthogonalScrollingBehavior": "groupPaging", "header": [:],
                "contentInsets": ["leading": 1, "trailing": 1],
            ],
            "expert": [
                "item": ["width": ["fractionalWidth": 0.5], "height": ["absolute": 3], "contentInsets": ["leading": 1, "trailing": 1]],
                "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 3]],
                "interGroupSpacing": 1, "header": ["elementKind": "header"],
            ],
        ],
    ]

    @Test func readsAndWritesTheVocabulary() throws {
        let layout = try LayoutDescription(json: Self.home)
        #expect(layout.defaultLayout == .list(ListSectionConfiguration(appearance: .insetGrouped, headerMode: .supplementary)))
        guard case .grid(let company) = layout.layout(ofSection: "company") else { Issue.record("company is a grid"); return }
        #expect(company.orthogonalScrollingBehavior == .groupPaging)
        #expect(company.group.width == .fractionalWidth(0.8) && company.group.height == .absolute(4))
        #expect(company.header == BoundaryItem(elementKind: "header", height: 1))
        #expect(company.contentInsets == EdgeInsets(leading: 1, trailing: 1))
        guard case .grid(let expert) = layout.layout(ofSection: "expert") else { Issue.record("expert is a grid"); return }
        #expect(expert.group.subitems.first?.width == .fractionalWidth(0.5), "the section's item fills the group")
        #expect(layout.layout(ofSection: "consult") == layout.defaultLayout)
        // What it writes, it reads back the same.
        #expect(try LayoutDescription(json: layout.json) == layout)
        #expect(try LayoutDescription(json: [:]) == LayoutDescription(), "a plain list by default")
    }

    /// A card with a badge over its top trailing corner (the sample's anchor and offset), a pinned header.
    static let badged: JSONValue = [
        "default": ["list": ["appearance": "plain", "headerMode": "supplementary", "pinsHeaderToVisibleBounds": true]],
        "sections": [
            "cards": [
                "item": [
                    "width": ["fractionalWidth": 0.5], "height": ["fractionalHeight": 1],
                    "supplementaryItems": [[
                        "elementKind": "badge", "width": ["absolute": 3], "height": ["absolute": 1],
                        "containerAnchor": ["edges": ["top", "trailing"], "fractionalOffset": ["x": 0.3, "y": -0.3]],
                    ]],
                ],
                "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 4]],
                "header": ["pinToVisibleBounds": true],
            ],
        ],
    ]

    @Test func readsAndWritesBadgesAndPinnedHeaders() throws {
        let layout = try LayoutDescription(json: Self.badged)
        guard case .grid(let cards) = layout.layout(ofSection: "cards"), case .list(let list) = layout.defaultLayout else {
            Issue.record("a grid and a list")
            return
        }
        #expect(list.pinsHeaderToVisibleBounds && cards.header?.pinToVisibleBounds == true)
        let badge = try #require(cards.group.subitems.first?.supplementaryItems.first)
        #expect(badge.elementKind == "badge" && badge.width == .absolute(3) && badge.anchor.edges == [.top, .trailing])
        #expect(badge.anchor.fractionalOffset == (0.3, -0.3) && badge.anchor.absoluteOffset == (0, 0))
        #expect(layout.anchorsToItems(elementKind: "badge", inSection: "cards"))
        #expect(!layout.anchorsToItems(elementKind: "badge", inSection: "other") && !layout.anchorsToItems(elementKind: "header", inSection: "cards"))
        #expect(layout.itemSupplementaryKinds == ["badge"])
        #expect(try LayoutDescription(json: layout.json) == layout)
    }

    static let invalid: [(json: JSONValue, path: String)] = {
        var cases: [(json: JSONValue, path: String)] = []
        func card(_ supplementary: JSONValue) -> JSONValue {
            ["sections": ["s": [
                "item": ["width": ["absolute": 2], "height": ["absolute": 1], "supplementaryItems": [supplementary]],
                "group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]],
            ]]]
        }
        let size: [String: JSONValue] = ["width": ["absolute": 1], "height": ["absolute": 1]]
        cases.append((json: card(.object(size.merging(["elementKind": "badge", "containerAnchor": ["edges": ["top", "bottom"]]]) { $1 })),
                      path: "layout.sections.s.item.supplementaryItems[0].containerAnchor.edges"))
        cases.append((json: card(.object(size.merging(["elementKind": "badge", "containerAnchor": ["edges": ["up"]]]) { $1 })),
                      path: "layout.sections.s.item.supplementaryItems[0].containerAnchor.edges[0]"))
        cases.append((json: card(.object(size.merging(["elementKind": "header", "containerAnchor": ["edges": ["top"]]]) { $1 })),
                      path: "layout.sections.s.item.supplementaryItems[0].elementKind"))
        cases.append((json: card(.object(size.merging(["elementKind": "badge"]) { $1 })), path: "layout.sections.s.item.supplementaryItems[0].containerAnchor"))
        cases.append((json: card(.object(size.merging(["elementKind": "badge", "containerAnchor": ["edges": [], "fractionalOffset": ["x": "far"]]]) { $1 })),
                      path: "layout.sections.s.item.supplementaryItems[0].containerAnchor.fractionalOffset.x"))
        cases.append((json: ["default": ["list": ["pinsHeaderToVisibleBounds": 1]]], path: "layout.default.list.pinsHeaderToVisibleBounds"))
        cases.append((json: card(.object(size.merging(["elementKind": "bad\u{1}", "containerAnchor": ["edges": ["top"]]]) { $1 })),
                      path: "layout.sections.s.item.supplementaryItems[0].elementKind"))
        cases.append((json: ["sections": ["s": [
            "item": ["width": ["absolute": 2], "height": ["absolute": 1], "supplementaryItems": [.object(size.merging(["elementKind": "badge", "containerAnchor": ["edges": ["top"]]]) { $1 })]],
            "group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]], "header": ["elementKind": "badge"],
        ]]], path: "layout.sections.s.header.elementKind"))
        cases.append((json: ["sections": ["s": ["item": ["width": ["absolute": 2], "height": ["absolute": 1]], "group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]], "footer": ["pinToVisibleBounds": true]]]], path: "layout.sections.s.footer.pinToVisibleBounds"))
        cases.append((json: ["default": ["list": ["appearance": "fancy"]]], path: "layout.default.list.appearance"))
        cases.append((json: ["default": ["list": [:], "group": [:]]], path: "layout.default"))
        cases.append((json: ["default": [:]], path: "layout.default"))
        cases.append((json: ["sections": ["s": ["group": ["axis": "diagonal", "width": ["absolute": 1], "height": ["absolute": 1], "count": 2]]]], path: "layout.sections.s.group.axis"))
        cases.append((json: ["sections": ["s": ["group": ["axis": "vertical", "height": ["absolute": 1], "count": 2]]]], path: "layout.sections.s.group.width"))
        cases.append((json: ["sections": ["s": ["group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]]]]], path: "layout.sections.s.group"))
        cases.append((json: ["sections": ["s": ["item": ["width": ["fractionalWidth": 1.5], "height": ["absolute": 1]], "group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]]]]], path: "layout.sections.s.item.width.fractionalWidth"))
        cases.append((json: ["sections": ["s": ["item": ["width": ["absolute": 2, "estimated": 1], "height": ["absolute": 1]], "group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]]]]], path: "layout.sections.s.item.width"))
        cases.append((json: ["sections": ["s": ["item": ["width": ["absolute": 2], "height": ["absolute": 1]], "group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]], "orthogonalScrollingBehavior": "sideways"]]], path: "layout.sections.s.orthogonalScrollingBehavior"))
        cases.append((json: ["default": ["list": [:]], "extra": 1], path: "layout.extra"))
        cases.append((json: ["sections": ["s": ["item": ["width": ["absolute": 2], "height": ["absolute": 1]], "group": ["axis": "vertical", "width": ["absolute": 1], "height": ["absolute": 1]], "contentInsets": ["top": -1]]]], path: "layout.sections.s.contentInsets.top"))
        return cases
    }()

    @Test(arguments: invalid)
    func rejectsWhatIsNotTheVocabulary(json: JSONValue, path: String) {
        #expect(throws: LayoutError.self) { try LayoutDescription(json: json) }
        do {
            _ = try LayoutDescription(json: json)
        } catch {
            #expect(error.path == path, "\(error)")
        }
    }
}
