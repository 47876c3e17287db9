import DiffableCore
import Testing

/// The DiffableCore example of docs/diffablecore.md, line for line.
@Test func readmeExample() throws {
    var snapshot = Snapshot()
    try snapshot.appendSections(["smileys", "numbers"])
    try snapshot.appendItems(
        [Item("😀", data: ["title": "Happy"]), Item("😂", data: ["title": "Laughing"])], toSection: "smileys")
    try snapshot.appendItems(["1", "2", "3"])
    #expect(snapshot.indexPath(ofItem: "2") == IndexPath(section: 1, item: 1))
    #expect(snapshot.index(ofItem: "2") == 3)

    var next = snapshot
    try next.moveItem("😂", beforeItem: "😀")
    try next.updateItems([Item("1", data: ["even": false])])
    let changes = next.difference(from: snapshot)
    #expect(changes.description == "itemReconfigures [1, 0] 1\nitemMoves [0, 1]→[0, 0]")
    var copy = snapshot
    try copy.apply(changes)
    #expect(copy == next)
}
