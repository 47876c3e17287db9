import DiffableCore
import Testing

/// One operation on a starting layout and the layout it must produce.
struct OperationCase: CustomTestStringConvertible, Sendable {
    let name: String
    let start: KeyValuePairs<String, [String]>
    let expected: String
    let warning: SnapshotWarning.Code?
    let operation: @Sendable (inout Snapshot) throws -> [SnapshotWarning]

    init(
        _ name: String, _ start: KeyValuePairs<String, [String]>, _ expected: String,
        warning: SnapshotWarning.Code? = nil, _ operation: @escaping @Sendable (inout Snapshot) throws -> [SnapshotWarning]
    ) {
        self.name = name
        self.start = start
        self.expected = expected
        self.warning = warning
        self.operation = operation
    }

    var testDescription: String { name }
}


let twoSections: KeyValuePairs<String, [String]> = ["A": ["a", "b", "c"], "B": ["d", "e"]]

let operationCases: [OperationCase] = [
    // Sections.
    .init("appendSections", twoSections, "A: a, b, c | B: d, e | C: | D:") { try $0.appendSections(["C", "D"]); return [] },
    .init("insertSections before", twoSections, "C: | A: a, b, c | B: d, e") { try $0.insertSections(["C"], beforeSection: "A"); return [] },
    .init("insertSections after", twoSections, "A: a, b, c | C: | D: | B: d, e") { try $0.insertSections(["C", "D"], afterSection: "A"); return [] },
    .init("insertSections after last", twoSections, "A: a, b, c | B: d, e | C:") { try $0.insertSections(["C"], afterSection: "B"); return [] },
    .init("deleteSections", twoSections, "B: d, e") { $0.deleteSections(["A"]) },
    .init("deleteSections ignores unknown", twoSections, "A: a, b, c", warning: .unknownSectionsIgnored) { $0.deleteSections(["B", "Z"]) },
    .init("deleteSections twice in one call", twoSections, "B: d, e") { $0.deleteSections(["A", "A"]) },
    .init("moveSection before", twoSections, "B: d, e | A: a, b, c") { try $0.moveSection("B", beforeSection: "A"); return [] },
    .init("moveSection after", twoSections, "B: d, e | A: a, b, c") { try $0.moveSection("A", afterSection: "B"); return [] },
    .init("moveSection to where it is", twoSections, "A: a, b, c | B: d, e") { try $0.moveSection("A", beforeSection: "B"); return [] },
    // Items.
    .init("appendItems to a section", twoSections, "A: a, b, c, x, y | B: d, e") { try $0.appendItems(["x", "y"], toSection: "A") },
    .init("appendItems to the last section", twoSections, "A: a, b, c | B: d, e, x") { try $0.appendItems(["x"]) },
    .init("appendItems nothing", twoSections, "A: a, b, c | B: d, e") { try $0.appendItems([]) },
    .init("appendItems moves an existing item", twoSections, "A: b, c | B: d, e, a", warning: .itemsAlreadyExisted) {
        try $0.appendItems(["a"])
    },
    .init("appendItems existing item already last", twoSections, "A: a, b, c | B: d, e", warning: .itemsAlreadyExisted) {
        try $0.appendItems(["e"])
    },
    .init("insertItems before", twoSections, "A: a, x, y, b, c | B: d, e") { try $0.insertItems(["x", "y"], beforeItem: "b") },
    .init("insertItems after", twoSections, "A: a, b, c | B: d, e, x") { try $0.insertItems(["x"], afterItem: "e") },
    .init("insertItems before first", twoSections, "A: x, a, b, c | B: d, e") { try $0.insertItems(["x"], beforeItem: "a") },
    .init("insertItems moves existing items", twoSections, "A: b, c | B: d, a, e", warning: .itemsAlreadyExisted) {
        try $0.insertItems(["a"], beforeItem: "e")
    },
    .init("insertItems existing next to destination", twoSections, "A: b, c, a | B: d, e", warning: .itemsAlreadyExisted) {
        try $0.insertItems(["a"], afterItem: "c")
    },
    .init("deleteItems", twoSections, "A: a, c | B: e") { $0.deleteItems(["b", "d"]) },
    .init("deleteItems ignores unknown", twoSections, "A: a, b | B: d, e", warning: .unknownItemsIgnored) { $0.deleteItems(["c", "zz"]) },
    .init("deleteItems empties a section, keeps it", twoSections, "A: a, b, c | B:") { $0.deleteItems(["d", "e"]) },
    .init("deleteAllItems removes sections too", twoSections, "") { $0.deleteAllItems(); return [] },
    .init("moveItem before, same section", twoSections, "A: c, a, b | B: d, e") { try $0.moveItem("c", beforeItem: "a"); return [] },
    .init("moveItem after, same section", twoSections, "A: b, c, a | B: d, e") { try $0.moveItem("a", afterItem: "c"); return [] },
    .init("moveItem across sections", twoSections, "A: a, c | B: d, b, e") { try $0.moveItem("b", beforeItem: "e"); return [] },
    .init("moveItem after, across sections", twoSections, "A: a, b, c, d | B: e") { try $0.moveItem("d", afterItem: "c"); return [] },
    .init("moveItem to where it is", twoSections, "A: a, b, c | B: d, e") { try $0.moveItem("a", beforeItem: "b"); return [] },
]

@Suite("Snapshot operations")
struct SnapshotOperationTests {
    @Test(arguments: operationCases)
    func operation(_ testCase: OperationCase) throws {
        var snapshot = try makeSnapshot(testCase.start)
        let warnings = try testCase.operation(&snapshot)
        #expect(layout(snapshot) == testCase.expected)
        #expect(warnings.map(\.code) == (testCase.warning.map { [$0] } ?? []))
        for warning in warnings { #expect(!warning.identifiers.isEmpty) }
        #expect(snapshot.invariantViolations() == [])
        #expect(snapshot.numberOfItems == snapshot.itemIdentifiers.count)
    }

    @Test func appendedExistingItemTakesTheNewPayload() throws {
        var snapshot = try makeSnapshot(twoSections)
        let warnings = try snapshot.appendItems([Item("a", data: ["n": 1])])
        #expect(warnings.first?.identifiers == ["a"])
        #expect(snapshot.data(ofItem: "a") == ["n": 1])
    }

    @Test func payloads() throws {
        var snapshot = Snapshot()
        try snapshot.appendSections([Section("S", data: ["title": "Smileys"])])
        try snapshot.appendItems([Item("😀", data: ["title": "Happy"]), "plain"])
        #expect(snapshot.data(ofSection: "S") == ["title": "Smileys"])
        #expect(snapshot.data(ofItem: "😀") == ["title": "Happy"])
        #expect(snapshot.data(ofItem: "plain") == .null)
        #expect(snapshot.data(ofItem: "missing") == nil)
        try snapshot.updateItems([Item("plain", data: 3)])
        #expect(snapshot.item(at: IndexPath(section: 0, item: 1)) == Item("plain", data: 3))
        try snapshot.updateSections([Section("S", data: nil)])
        #expect(snapshot.data(ofSection: "S") == .null)
    }

    @Test func queries() throws {
        let snapshot = try makeSnapshot(twoSections)
        #expect(snapshot.numberOfSections == 2)
        #expect(snapshot.numberOfItems == 5)
        #expect(try snapshot.numberOfItems(inSection: "B") == 2)
        #expect(snapshot.sectionIdentifiers == ["A", "B"])
        #expect(snapshot.itemIdentifiers == ["a", "b", "c", "d", "e"])
        #expect(try snapshot.itemIdentifiers(inSection: "A") == ["a", "b", "c"])
        #expect(snapshot.sectionIdentifier(containingItem: "e") == "B")
        #expect(snapshot.sectionIdentifier(containingItem: "zz") == nil)
        #expect(snapshot.index(ofSection: "B") == 1)
        #expect(snapshot.index(ofSection: "Z") == nil)
        #expect(snapshot.index(ofItem: "d") == 3, "global index, as UIKit")
        #expect(snapshot.index(ofItem: "zz") == nil)
        #expect(snapshot.indexPath(ofItem: "d") == IndexPath(section: 1, item: 0))
        #expect(snapshot.indexPath(ofItem: "zz") == nil)
        #expect(snapshot.itemIdentifier(at: IndexPath(section: 0, item: 2)) == "c")
        #expect(snapshot.itemIdentifier(at: IndexPath(section: 0, item: 3)) == nil)
        #expect(snapshot.itemIdentifier(at: IndexPath(section: 2, item: 0)) == nil)
        #expect(snapshot.itemIdentifier(at: IndexPath(section: -1, item: 0)) == nil)
        #expect(snapshot.sectionIdentifier(at: 1) == "B")
        #expect(snapshot.sectionIdentifier(at: 2) == nil)
        #expect(try snapshot.items(inSection: "A", range: 1..<10).map(\.id) == ["b", "c"])
        #expect(try snapshot.items(inSection: "A", range: 5..<10).isEmpty)
    }

    @Test func marks() throws {
        var snapshot = try makeSnapshot(twoSections)
        try snapshot.reloadItems(["c", "a", "c"])
        try snapshot.reconfigureItems(["d"])
        try snapshot.reloadSections(["B"])
        #expect(snapshot.reloadedItemIdentifiers == ["c", "a"])
        #expect(snapshot.reconfiguredItemIdentifiers == ["d"])
        #expect(snapshot.reloadedSectionIdentifiers == ["B"])
        #expect(snapshot.isReloaded(item: "a") && !snapshot.isReloaded(item: "b"))
        #expect(snapshot.isReconfigured(item: "d"))
        #expect(snapshot.isReloaded(section: "B"))
        // A deleted item loses its mark, and does not get it back when re-added.
        snapshot.deleteItems(["a"])
        try snapshot.appendItems(["a"])
        #expect(snapshot.reloadedItemIdentifiers == ["c"])
        // Marks are not part of equality.
        #expect(try snapshot == makeSnapshot(["A": ["b", "c"], "B": ["d", "e", "a"]]))
        snapshot.clearMarks()
        #expect(snapshot.reloadedItemIdentifiers.isEmpty && snapshot.reconfiguredItemIdentifiers.isEmpty)
        #expect(snapshot.reloadedSectionIdentifiers.isEmpty)
    }

    @Test func initializerWithSections() throws {
        let snapshot = try Snapshot([(Section("A"), ["a", "b"]), (Section("B", data: 1), [Item("c", data: "x")])])
        #expect(layout(snapshot) == "A: a, b | B: c")
        #expect(throws: SnapshotError.self) { try Snapshot([(Section("A"), ["a"]), (Section("B"), ["a"])]) }
        #expect(throws: SnapshotError.self) { try Snapshot([(Section("A"), ["a", "a"])]) }
        #expect(throws: SnapshotError.self) { try Snapshot([(Section("A"), []), (Section("A"), [])]) }
    }

    @Test func equality() throws {
        let a = try makeSnapshot(twoSections)
        var b = try makeSnapshot(twoSections)
        #expect(a == b)
        try b.updateItems([Item("a", data: true)])
        #expect(a != b, "payloads are content")
        #expect(try makeSnapshot(["A": ["a"], "B": []]) != makeSnapshot(["A": [], "B": ["a"]]))
        #expect(try makeSnapshot(["A": []]) != makeSnapshot(["B": []]))
    }
}

@Suite("Snapshot misuse")
struct SnapshotMisuseTests {
    @Test func duplicateSections() throws {
        var snapshot = try makeSnapshot(twoSections)
        expectError(.duplicateSection, naming: ["C"], in: &snapshot) { try $0.appendSections(["C", "D", "C"]) }
        expectError(.duplicateSection, naming: ["B"], in: &snapshot) { try $0.appendSections(["C", "B"]) }
        expectError(.duplicateSection, naming: ["A"], in: &snapshot) { try $0.insertSections(["A"], beforeSection: "B") }
        expectError(.duplicateSection, naming: ["X"], in: &snapshot) { try $0.insertSections(["X", "X"], afterSection: "B") }
    }

    @Test func duplicateItemsWithinOneCall() throws {
        var snapshot = try makeSnapshot(twoSections)
        expectError(.duplicateItem, naming: ["x"], in: &snapshot) { try $0.appendItems(["x", "y", "x"]) }
        expectError(.duplicateItem, naming: ["x"], in: &snapshot) { try $0.insertItems(["x", "x"], beforeItem: "a") }
        expectError(.duplicateItem, naming: ["a"], in: &snapshot) { try $0.updateItems([Item("a"), Item("a")]) }
        // A repeat of an existing item rolls back the new items resolved before it.
        expectError(.duplicateItem, naming: ["a", "x"], in: &snapshot) { try $0.appendItems(["x", "a", "y", "a", "x"]) }
        // The rolled-back identifiers are free again.
        try snapshot.appendItems(["x", "y"])
        #expect(layout(snapshot) == "A: a, b, c | B: d, e, x, y")
    }

    @Test func initializerRejectsRepeatsAcrossSections() {
        #expect {
            try Snapshot([(Section("A"), ["a", "b"]), (Section("B"), ["c", "a"])])
        } throws: { ($0 as? SnapshotError)?.code == .duplicateItem && ($0 as! SnapshotError).identifiers == ["a"] }
    }

    @Test func unknownDestinations() throws {
        var snapshot = try makeSnapshot(twoSections)
        expectError(.sectionNotFound, naming: ["Z"], in: &snapshot) { try $0.insertSections(["C"], beforeSection: "Z") }
        expectError(.sectionNotFound, naming: ["Z"], in: &snapshot) { try $0.insertSections(["C"], afterSection: "Z") }
        expectError(.sectionNotFound, naming: ["Z"], in: &snapshot) { try $0.appendItems(["x"], toSection: "Z") }
        expectError(.itemNotFound, naming: ["zz"], in: &snapshot) { try $0.insertItems(["x"], beforeItem: "zz") }
        expectError(.itemNotFound, naming: ["zz"], in: &snapshot) { try $0.insertItems(["x"], afterItem: "zz") }
        expectError(.sectionNotFound, naming: ["Z"], in: &snapshot) { try $0.moveSection("Z", beforeSection: "A") }
        expectError(.sectionNotFound, naming: ["Z"], in: &snapshot) { try $0.moveSection("A", afterSection: "Z") }
        expectError(.itemNotFound, naming: ["zz"], in: &snapshot) { try $0.moveItem("zz", beforeItem: "a") }
        expectError(.itemNotFound, naming: ["zz"], in: &snapshot) { try $0.moveItem("a", afterItem: "zz") }
    }

    @Test func destinationAmongTheInserted() throws {
        var snapshot = try makeSnapshot(twoSections)
        expectError(.invalidArgument, naming: ["A"], in: &snapshot) { try $0.insertSections(["X", "A"], beforeSection: "A") }
        expectError(.invalidArgument, naming: ["b"], in: &snapshot) { try $0.insertItems(["x", "b"], afterItem: "b") }
    }

    @Test func noSectionsToAppendTo() {
        var snapshot = Snapshot()
        expectError(.noSections, in: &snapshot) { try $0.appendItems(["x"]) }
    }

    @Test func moveRelativeToItself() throws {
        var snapshot = try makeSnapshot(twoSections)
        expectError(.invalidMove, naming: ["A"], in: &snapshot) { try $0.moveSection("A", beforeSection: "A") }
        expectError(.invalidMove, naming: ["A"], in: &snapshot) { try $0.moveSection("A", afterSection: "A") }
        expectError(.invalidMove, naming: ["b"], in: &snapshot) { try $0.moveItem("b", beforeItem: "b") }
        expectError(.invalidMove, naming: ["b"], in: &snapshot) { try $0.moveItem("b", afterItem: "b") }
    }

    @Test func reloadOrReconfigureOfUnknownIdentifiers() throws {
        var snapshot = try makeSnapshot(twoSections)
        expectError(.itemNotFound, naming: ["x", "y"], in: &snapshot) { try $0.reloadItems(["a", "x", "y"]) }
        expectError(.itemNotFound, naming: ["x"], in: &snapshot) { try $0.reconfigureItems(["x", "a"]) }
        expectError(.sectionNotFound, naming: ["Z"], in: &snapshot) { try $0.reloadSections(["A", "Z"]) }
        expectError(.itemNotFound, naming: ["x"], in: &snapshot) { try $0.updateItems([Item("a", data: 1), Item("x")]) }
        expectError(.sectionNotFound, naming: ["Z"], in: &snapshot) { try $0.updateSections([Section("Z")]) }
    }

    @Test func perSectionQueriesOfAnUnknownSection() throws {
        let snapshot = try makeSnapshot(twoSections)
        for query in [
            { _ = try snapshot.numberOfItems(inSection: "Z") },
            { _ = try snapshot.itemIdentifiers(inSection: "Z") },
            { _ = try snapshot.items(inSection: "Z") },
            { _ = try snapshot.sectionSnapshot(of: "Z") },
        ] as [() throws -> Void] {
            #expect {
                try query()
            } throws: { error in
                (error as? SnapshotError)?.code == .sectionNotFound && (error as! SnapshotError).identifiers == ["Z"]
            }
        }
    }

    @Test func errorsCarryStableCodes() {
        #expect(SnapshotError.Code.allCases.map(\.rawValue) == [
            "duplicate-section", "duplicate-item", "section-not-found", "item-not-found", "no-sections",
            "invalid-move", "invalid-argument",
        ])
    }
}
