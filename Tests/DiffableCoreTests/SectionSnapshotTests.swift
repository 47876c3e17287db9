import DiffableCore
import Testing

@Suite("Section snapshots")
struct SectionSnapshotTests {
    /// smileys(😀, 😂(🤣)), nature(🐶), food
    static func emojiOutline() throws -> SectionSnapshot {
        var outline = SectionSnapshot()
        try outline.append(["smileys", "nature", "food"])
        try outline.append(["😀", "😂"], to: "smileys")
        try outline.append(["🤣"], to: "😂")
        try outline.append([Item("🐶", data: ["title": "Dog"])], to: "nature")
        return outline
    }

    @Test func treeQueries() throws {
        var outline = try Self.emojiOutline()
        #expect(outline.items.map(\.id) == ["smileys", "😀", "😂", "🤣", "nature", "🐶", "food"])
        #expect(outline.rootItems.map(\.id) == ["smileys", "nature", "food"])
        #expect(outline.visibleItems.map(\.id) == ["smileys", "nature", "food"])
        outline.expand(["smileys", "nature", "unknown"])
        #expect(outline.visibleItems.map(\.id) == ["smileys", "😀", "😂", "nature", "🐶", "food"])
        #expect(outline.expandedItems == ["smileys", "nature"])
        #expect(try outline.level(of: "🤣") == 2)
        #expect(try outline.parent(of: "🤣") == "😂")
        #expect(try outline.parent(of: "smileys") == nil)
        #expect(try outline.children(of: "smileys") == ["😀", "😂"])
        #expect(try outline.isExpanded("smileys") && !outline.isExpanded("😂"))
        #expect(try outline.isVisible("😂") && !outline.isVisible("🤣"))
        #expect(outline.index(of: "nature") == 4)
        #expect(outline.index(of: "missing") == nil)
        #expect(outline.contains("🐶") && outline.count == 7)
        #expect(outline.data(of: "🐶") == ["title": "Dog"])
        outline.collapse(["nature"])
        #expect(outline.visibleItems.map(\.id) == ["smileys", "😀", "😂", "nature", "food"])
        outline.expand(["food"])
        #expect(try outline.isExpanded("food"), "a childless item can be expanded")
    }

    @Test func visibleLevelsFollowExpansion() throws {
        var outline = try Self.emojiOutline()
        #expect(outline.visibleLevels.map(\.level) == [0, 0, 0])
        outline.expand(["smileys", "😂"])
        #expect(outline.visibleLevels.map(\.id) == outline.visibleItems.map(\.id))
        #expect(outline.visibleLevels.map(\.level) == [0, 1, 1, 2, 0, 0])
        #expect(try outline.visibleLevels.allSatisfy { try outline.level(of: $0.id) == $0.level })
    }

    @Test func insertBeforeAndAfter() throws {
        var outline = try Self.emojiOutline()
        try outline.insert(["😎"], before: "😂")
        try outline.insert(["🌲"], after: "nature")  // past nature's whole subtree
        try outline.insert(["🥲"], after: "😂")
        #expect(outline.items.map(\.id) == ["smileys", "😀", "😎", "😂", "🤣", "🥲", "nature", "🐶", "🌲", "food"])
        #expect(try outline.parent(of: "🥲") == "smileys")
        #expect(try outline.parent(of: "🌲") == nil)
    }

    @Test func deleteTakesDescendants() throws {
        var outline = try Self.emojiOutline()
        outline.expand(["😂"])
        try outline.delete(["smileys", "😂", "smileys"])
        #expect(outline.items.map(\.id) == ["nature", "🐶", "food"])
        #expect(!outline.contains("🤣"))
        #expect(outline.expandedItems.isEmpty)
        outline.deleteAll()
        #expect(outline.count == 0 && outline.items.isEmpty)
    }

    @Test func subtreeSnapshotsAndReplace() throws {
        var outline = try Self.emojiOutline()
        outline.expand(["😂"])
        let children = try outline.snapshot(of: "smileys")
        #expect(children.rootItems.map(\.id) == ["😀", "😂"])
        #expect(children.items.map(\.id) == ["😀", "😂", "🤣"])
        #expect(children.expandedItems == ["😂"])
        let withParent = try outline.snapshot(of: "smileys", includingParent: true)
        #expect(withParent.rootItems.map(\.id) == ["smileys"])
        #expect(try withParent.level(of: "🤣") == 2)

        var replacement = SectionSnapshot()
        try replacement.append(["🙂", "🙃"])
        try outline.replace(childrenOf: "smileys", using: replacement)
        #expect(outline.items.map(\.id) == ["smileys", "🙂", "🙃", "nature", "🐶", "food"])
        #expect(!outline.contains("🤣"))
        // Replacing with the same children is fine; with an item from elsewhere it is not.
        try outline.replace(childrenOf: "smileys", using: replacement)
        var clash = SectionSnapshot()
        try clash.append(["🐶"])
        #expect(throws: SnapshotError.self) { try outline.replace(childrenOf: "smileys", using: clash) }

        var grafted = SectionSnapshot()
        try grafted.append(["drinks"])
        try grafted.append(["☕️"], to: "drinks")
        try outline.insert(grafted, after: "nature")
        #expect(outline.rootItems.map(\.id) == ["smileys", "nature", "drinks", "food"])
        #expect(try outline.parent(of: "☕️") == "drinks")
        try outline.insert(try SectionSnapshot(items: ["sports"]), before: "smileys")
        #expect(outline.rootItems.first?.id == "sports")
    }

    @Test func misuse() throws {
        var outline = try Self.emojiOutline()
        let before = outline
        func expectCode(_ code: SnapshotError.Code, _ body: (inout SectionSnapshot) throws -> Void) {
            #expect {
                try body(&outline)
            } throws: { ($0 as? SnapshotError)?.code == code }
            #expect(outline == before)
        }
        expectCode(.itemNotFound) { try $0.append(["x"], to: "missing") }
        expectCode(.duplicateItem) { try $0.append(["x", "x"]) }
        expectCode(.duplicateItem) { try $0.append(["😀"], to: "nature") }
        expectCode(.itemNotFound) { try $0.insert(["x"], before: "missing") }
        expectCode(.itemNotFound) { try $0.insert(["x"], after: "missing") }
        expectCode(.duplicateItem) { try $0.insert(["food"], after: "nature") }
        expectCode(.itemNotFound) { try $0.delete(["nature", "missing"]) }
        expectCode(.itemNotFound) { _ = try $0.level(of: "missing") }
        expectCode(.itemNotFound) { _ = try $0.parent(of: "missing") }
        expectCode(.itemNotFound) { _ = try $0.isExpanded("missing") }
        expectCode(.itemNotFound) { _ = try $0.isVisible("missing") }
        expectCode(.itemNotFound) { _ = try $0.snapshot(of: "missing") }
        expectCode(.itemNotFound) { try $0.replace(childrenOf: "missing", using: SectionSnapshot()) }
        expectCode(.duplicateItem) { try $0.insert(try SectionSnapshot(items: ["food"]), before: "nature") }
    }

    @Test func visualDescription() throws {
        var outline = try Self.emojiOutline()
        outline.expand(["smileys"])
        #expect(outline.visualDescription == """
            <SectionSnapshot: 7 items
            +* smileys
              -* 😀
              -* 😂
                -  🤣
            -* nature
              -  🐶
            -* food
            >
            """)
    }

    @Test func deepTreesDoNotRecurse() throws {
        var outline = SectionSnapshot()
        try outline.append(["0"])
        for level in 1..<20_000 { try outline.append([Item(String(level))], to: String(level - 1)) }
        #expect(outline.items.count == 20_000)
        #expect(try outline.level(of: "19999") == 19_999)
        try outline.delete(["0"])
        #expect(outline.count == 0)
    }

    @Test func applyingToAFullSnapshotKeepsOnlyVisibleItems() throws {
        var outline = try Self.emojiOutline()
        var snapshot = try makeSnapshot(["numbers": ["1", "2"]])
        // Missing section: appended at the end.
        #expect(snapshot.apply(outline, to: "emoji").isEmpty)
        #expect(layout(snapshot) == "numbers: 1, 2 | emoji: smileys, nature, food")
        outline.expand(["smileys"])
        snapshot.apply(outline, to: "emoji")
        #expect(layout(snapshot) == "numbers: 1, 2 | emoji: smileys, 😀, 😂, nature, food")
        // A visible item that lives in another section is moved here, with a warning.
        try outline.append(["1"], to: "food")
        outline.expand(["food"])
        let warnings = snapshot.apply(outline, to: "emoji")
        #expect(warnings.map(\.code) == [.itemsAlreadyExisted])
        #expect(layout(snapshot) == "numbers: 2 | emoji: smileys, 😀, 😂, nature, food, 1")
        #expect(try snapshot.sectionSnapshot(of: "numbers").items.map(\.id) == ["2"])
    }
}
