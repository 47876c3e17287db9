import DiffableCore
import ListEngine
import ListStore

/// Item edits through the engine (`StateEngine.commit`, the event made as for an attached view) on a data
/// source with a flat section of `flat` items and an outline of `parents` × `children` collapsed items:
/// what keeping the outline costs per edit (a diff of the outline's rows and a write of the outline),
/// beside the same edits of the flat section, which touch no outline. With `recordingUndo` (a durable
/// store) the outline is copied once per edit too.
func outlineEditBenchmark(flat: Int, parents: Int, children: Int, recordingUndo: Bool) {
    let engine = StateEngine(retention: (100, 1 << 20))
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 10_000_000, maximumIdentifierBytes: 256, maximumRegistrations: 10)
    func commit(_ operation: DataSourceOperation, create: Bool = false) {
        let creation = create ? DataSourceCreation(incarnation: "bench", owner: 0) : nil
        _ = try! engine.commit(.dataSource(name: "d", ifVersion: nil, createAs: creation, operation), limits: limits, recordingUndo: recordingUndo)
    }
    commit(.edit(.appendSections(["flat"])), create: true)
    commit(.edit(.appendItems((0..<flat).map { Item("f\($0)", data: ["title": .string("flat \($0)")]) }, toSection: "flat")))
    var outline = SectionSnapshot()
    try! outline.append((0..<parents).map { Item("p\($0)", data: ["title": .string("parent \($0)")]) })
    for parent in 0..<parents {
        try! outline.append((0..<children).map { Item("p\(parent)c\($0)", data: ["title": .string("child \($0)")]) }, to: "p\(parent)")
    }
    commit(.replaceOutline(section: "tree", outline))
    let clock = ContinuousClock()
    let rounds = 200
    func perEdit(_ body: (Int) -> Void) -> String {
        let elapsed = clock.measure { for round in 0..<rounds { body(round) } }
        return format((Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)) / Double(rounds))
    }
    let flatAppend = perEdit { commit(.edit(.appendItems([Item("fa\($0)")], toSection: "flat"))) }
    let flatMove = perEdit { _ in commit(.edit(.moveItem("f0", .after("f\(flat / 2)")))) }
    let rootAppend = perEdit { commit(.edit(.appendItems([Item("ra\($0)")], toSection: "tree"))) }
    let siblingInsert = perEdit { commit(.edit(.insertItems([Item("si\($0)")], .after("p\(parents / 2)")))) }
    let subtreeMove = perEdit { commit(.edit(.moveItem("p\($0 % parents)", .after("p\(($0 + parents / 2) % parents)")))) }
    let hiddenUpdate = perEdit { commit(.edit(.updateItems([Item("p\($0 % parents)c0", data: ["title": .string("edited \($0)")])]))) }
    let hiddenDelete = perEdit { commit(.edit(.deleteItems(["p\($0 % parents)c\(children - 1 - $0 / parents)"]))) }
    print("outline edits (\(flat / 1000)k flat rows, outline of \(parents)×\(children) collapsed, \(recordingUndo ? "recording undo" : "ephemeral")): "
        + "flat append \(flatAppend), flat move \(flatMove); root append \(rootAppend), sibling insert \(siblingInsert), "
        + "subtree move \(subtreeMove), collapsed update \(hiddenUpdate), collapsed delete \(hiddenDelete)")
}
