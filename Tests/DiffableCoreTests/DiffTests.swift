import DiffableCore
import Testing

/// One diff with the exact stages it must produce (in `ChangeStage.description` form).
struct DiffCase: CustomTestStringConvertible, Sendable {
    let name: String
    let old: @Sendable () throws -> Snapshot
    let new: @Sendable () throws -> Snapshot
    let stages: [String]

    var testDescription: String { name }
}

private func layoutCase(
    _ name: String, _ old: KeyValuePairs<String, [String]>, _ new: KeyValuePairs<String, [String]>, _ stages: [String]
) -> DiffCase {
    let oldPairs = Array(old)
    let newPairs = Array(new)
    return DiffCase(
        name: name,
        old: { try Snapshot(oldPairs.map { (Section($0.key), $0.value.map { Item($0) }) }) },
        new: { try Snapshot(newPairs.map { (Section($0.key), $0.value.map { Item($0) }) }) },
        stages: stages)
}

private func editCase(
    _ name: String, _ old: KeyValuePairs<String, [String]>, _ stages: [String],
    _ edit: @escaping @Sendable (inout Snapshot) throws -> Void
) -> DiffCase {
    let oldPairs = Array(old)
    let build: @Sendable () throws -> Snapshot = { try Snapshot(oldPairs.map { (Section($0.key), $0.value.map { Item($0) }) }) }
    return DiffCase(
        name: name, old: build,
        new: {
            var snapshot = try build()
            try edit(&snapshot)
            return snapshot
        }, stages: stages)
}

let diffCases: [DiffCase] = [
    layoutCase("identical", ["A": ["a", "b"], "B": ["c"]], ["A": ["a", "b"], "B": ["c"]], []),
    layoutCase("both empty", [:], [:], []),
    layoutCase("append items", ["A": ["a", "b"]], ["A": ["a", "b", "c", "d"]], ["itemInserts [0, 2] c, [0, 3] d"]),
    layoutCase("append a section", ["A": ["a"]], ["A": ["a"], "B": ["b", "c"]], ["sectionInserts 1 B(b c)"]),
    layoutCase("delete an item", ["A": ["a", "b", "c"]], ["A": ["a", "c"]], ["itemDeletes [0, 1]"]),
    layoutCase("delete a section", ["A": ["a"], "B": ["b"]], ["B": ["b"]], ["sectionDeletes 0"]),
    layoutCase("move the first item to the end", ["A": ["a", "b", "c", "d"]], ["A": ["b", "c", "d", "a"]], ["itemMoves [0, 0]→[0, 3]"]),
    layoutCase("move the last item to the front", ["A": ["a", "b", "c", "d"]], ["A": ["d", "a", "b", "c"]], ["itemMoves [0, 3]→[0, 0]"]),
    layoutCase("swap two items", ["A": ["a", "b"]], ["A": ["b", "a"]], ["itemMoves [0, 1]→[0, 0]"]),
    layoutCase("move an item across sections", ["A": ["a", "b"], "B": ["c"]], ["A": ["a"], "B": ["c", "b"]], ["itemMoves [0, 1]→[1, 1]"]),
    layoutCase(
        "move an item from the last section to the first", ["A": ["a"], "B": ["b"], "C": ["c", "d"]], ["A": ["a", "d"], "B": ["b"], "C": ["c"]],
        ["itemMoves [2, 1]→[0, 1]"]),
    layoutCase(
        "move items both ways between sections", ["A": ["a", "x"], "B": ["b", "y"]], ["A": ["a", "y"], "B": ["x", "b"]],
        ["itemMoves [1, 1]→[0, 1], [0, 1]→[1, 0]"]),
    layoutCase("move a section", ["A": ["a"], "B": ["b"], "C": ["c"]], ["C": ["c"], "A": ["a"], "B": ["b"]], ["sectionMoves 2→0"]),
    layoutCase(
        "items leave a deleted section", ["A": ["a", "b"], "B": ["c"]], ["B": ["c", "a"]],
        ["sectionDeletes 0", "itemInserts [0, 1] a"]),
    layoutCase(
        "an item moves into an inserted section", ["A": ["a", "b"]], ["A": ["a"], "C": ["b"]],
        ["itemDeletes [0, 1]", "sectionInserts 1 C(b)"]),
    layoutCase(
        "sections and items move together", ["A": ["a", "b", "c"], "B": ["d"]], ["B": ["d", "x"], "A": ["c", "a"]],
        ["itemDeletes [0, 1]", "sectionMoves 1→0", "itemInserts [0, 1] x; itemMoves [1, 1]→[1, 0]"]),
    editCase("a payload changes", ["A": ["a", "b"]], ["itemReconfigures [0, 1] b"]) { try $0.updateItems([Item("b", data: 1)]) },
    editCase("reconfigure mark", ["A": ["a", "b"]], ["itemReconfigures [0, 0] a"]) { try $0.reconfigureItems(["a"]) },
    editCase("reload mark", ["A": ["a", "b"]], ["itemReloads [0, 1] b"]) { try $0.reloadItems(["b"]) },
    editCase("reload wins over a payload change", ["A": ["a"]], ["itemReloads [0, 0] a"]) {
        try $0.updateItems([Item("a", data: 2)])
        try $0.reconfigureItems(["a"])
        try $0.reloadItems(["a"])
    },
    editCase("reload and move the same item", ["A": ["a", "b"]], ["itemReloads [0, 0] a", "itemMoves [0, 1]→[0, 0]"]) {
        try $0.reloadItems(["a"])
        try $0.moveItem("a", afterItem: "b")
    },
    editCase("section reload mark", ["A": ["a"], "B": []], ["sectionReloads 1"]) { try $0.reloadSections(["B"]) },
    editCase("a section payload changes", ["A": ["a"]], ["sectionReloads 0"]) { try $0.updateSections([Section("A", data: "x")]) },
    editCase(
        "a reloaded section also moves", ["A": ["a"], "B": ["b"]], ["sectionMoves 1→0", "sectionReloads 1"]
    ) {
        try $0.reloadSections(["A"])
        try $0.moveSection("B", beforeSection: "A")
    },
    editCase("deleteAllItems", ["A": ["a"], "B": ["b"]], ["sectionDeletes 0, 1"]) { $0.deleteAllItems() },
]

@Suite("Diff")
struct DiffTests {
    @Test(arguments: diffCases)
    func exactStages(_ testCase: DiffCase) throws {
        let old = try testCase.old()
        let new = try testCase.new()
        let changes = try expectRoundTrip(from: old, to: new)
        #expect(changes.stages.map(\.description) == testCase.stages)
    }

    @Test func payloadsTravelWithTheChanges() throws {
        let old = try Snapshot([(Section("A"), [Item("a", data: 1)])])
        let new = try Snapshot([(Section("A", data: "title"), [Item("a", data: 2), Item("b", data: ["k": "v"])])])
        let changes = try expectRoundTrip(from: old, to: new)
        let all = changes.stages
        #expect(all.flatMap(\.itemReconfigures).map(\.item) == [Item("a", data: 2)])
        #expect(all.flatMap(\.itemInserts).map(\.item) == [Item("b", data: ["k": "v"])])
        #expect(all.flatMap(\.sectionReloads).map(\.section) == [Section("A", data: "title")])
    }

    @Test func equalSnapshotsBuiltDifferentlyHaveNoChanges() throws {
        var a = try makeSnapshot(["A": ["a", "b", "c"], "B": ["d"]])
        try a.moveItem("c", beforeItem: "a")
        try a.moveItem("c", afterItem: "b")
        let b = try makeSnapshot(["A": ["a", "b", "c"], "B": ["d"]])
        #expect(b.difference(from: a).isEmpty)
        #expect(a.difference(from: b).isEmpty)
    }
}

@Suite("Diff on the seed screens")
struct SeedDiffTests {
    static let smileys: [Item] = [
        Item("😀", data: ["title": "Happy", "category": "smileys"]),
        Item("😂", data: ["title": "Laughing", "category": "smileys"]),
        Item("🤣", data: ["title": "Rolling on the floor laughing", "category": "smileys"]),
    ]

    static func consult(_ readCount: Int) -> Item {
        Item(
            "consult-1",
            data: [
                "regDate": 1_635_472_394_000, "readCnt": .int(readCount), "title": "감기에 걸렸을때 어느 병원으로 가야할까요?",
                "lastAnswer": ["content": "안녕하세요, 닥톡-네이버 지식iN 상담한의사 박지혜입니다.\n", "profileImg": ""],
            ])
    }

    static func home(readCount: Int = 22) throws -> Snapshot {
        try Snapshot([
            (Section("consult"), [consult(readCount)]),
            (Section("company"), [Item("company-1", data: ["companyName": "닥프렌즈 병원", "addrRoad": "서울 특별시", "introPath": ""])]),
            (Section("expert"), [Item("expert-1", data: ["expertInfo": ["expertTypeName": "한의사", "name": "박지혜", "profilePath": ""]])]),
        ])
    }

    @Test func emojiAndNumbers() throws {
        let old = try Snapshot([(Section("smileys"), Self.smileys), (Section("numbers"), (1...10).map { Item(String($0)) })])
        var new = old
        // Filter the numbers down to the even ones, and move the last smiley first.
        new.deleteItems((1...10).filter { $0 % 2 == 1 }.map(String.init))
        try new.moveItem("🤣", beforeItem: "😀")
        let changes = try expectRoundTrip(from: old, to: new)
        #expect(changes.stages.map(\.description) == [
            "itemDeletes [1, 0], [1, 2], [1, 4], [1, 6], [1, 8]", "itemMoves [0, 2]→[0, 0]",
        ])
    }

    @Test func homeReadCountChangeIsAReconfigure() throws {
        let changes = try expectRoundTrip(from: Self.home(readCount: 22), to: Self.home(readCount: 23))
        #expect(changes.stages.map(\.description) == ["itemReconfigures [0, 0] consult-1"])
        #expect(changes.stages[0].itemReconfigures[0].item.data["readCnt"] == 23)
    }

    @Test func homeNewConsultAndCompanyFirst() throws {
        let old = try Self.home()
        var new = old
        try new.insertItems([Item("consult-2", data: ["title": "두통", "readCnt": 0])], beforeItem: "consult-1")
        try new.moveSection("company", beforeSection: "consult")
        let changes = try expectRoundTrip(from: old, to: new)
        #expect(changes.stages.map(\.description) == ["sectionMoves 1→0", "itemInserts [1, 0] consult-2"])
    }

    @Test func emojiOutlineExpandAndCollapse() throws {
        var outline = SectionSnapshot()
        try outline.append([Item("smileys", data: ["title": "Smileys"]), Item("nature", data: ["title": "Nature"])])
        try outline.append(Self.smileys, to: "smileys")
        try outline.append([Item("🐶", data: ["title": "Dog"])], to: "nature")
        var collapsed = Snapshot()
        collapsed.apply(outline, to: "outline")
        #expect(layout(collapsed) == "outline: smileys, nature")

        outline.expand(["smileys"])
        var expanded = collapsed
        expanded.apply(outline, to: "outline")
        #expect(layout(expanded) == "outline: smileys, 😀, 😂, 🤣, nature")
        let expanding = try expectRoundTrip(from: collapsed, to: expanded)
        #expect(expanding.stages.map(\.description) == ["itemInserts [0, 1] 😀, [0, 2] 😂, [0, 3] 🤣"])
        let collapsing = try expectRoundTrip(from: expanded, to: collapsed)
        #expect(collapsing.stages.map(\.description) == ["itemDeletes [0, 1], [0, 2], [0, 3]"])
    }
}
