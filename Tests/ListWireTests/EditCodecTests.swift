import DiffableCore
import ListWire
import Testing

/// The one edit codec: every edit written and read back is the same edit, and what it writes is
/// what a request for it says (so a stored record reads like the request that made it).
@Suite struct EditCodecTests {
    static let edits: [SnapshotEdit] = [
        .appendSections([Section("a"), Section("b", data: ["title": "B"])]),
        .insertSections([Section("c")], .before("a")),
        .insertSections([Section("d")], .after("a")),
        .deleteSections(["a", "zz"]),
        .moveSection("b", .before("c")),
        .moveSection("b", .after("c")),
        .reloadSections(["b"]),
        .updateSections([Section("b", data: ["n": 2])]),
        .appendItems([Item("x"), Item("y", data: ["n": 1])], toSection: "b"),
        .appendItems([Item("z")], toSection: nil),
        .insertItems([Item("w")], .before("x")),
        .insertItems([Item("v")], .after("x")),
        .deleteItems(["x"]),
        .deleteAllItems,
        .moveItem("y", .after("z")),
        .moveItem("y", .before("z")),
        .reloadItems(["y"]),
        .reconfigureItems(["y", "z"]),
        .updateItems([Item("y", data: ["n": 3])]),
        .replaceItems(inSection: "b", with: [Item("q"), Item("r", data: [1, 2])]),
    ]

    @Test(arguments: edits) func writtenThenReadIsTheSameEdit(edit: SnapshotEdit) throws {
        var writer = JSONWriter()
        writer.beginObject()
        EditCodec.write(edit, to: &writer)
        writer.endObject()
        let value = try JSONParser.parse(writer.bytes)
        guard case .object(var members) = value, case .string(let name)? = members.removeValue(forKey: "cmd") else {
            Issue.record("not an object with cmd: \(value)")
            return
        }
        var arguments = Arguments(members)
        #expect(try EditCodec.decode(name, &arguments) == edit)
        try arguments.finish()  // every member written is one the request reads
    }

    @Test func otherCommandsAreNotEdits() throws {
        var arguments = Arguments([:])
        #expect(try EditCodec.decode("apply", &arguments) == nil)
        #expect(try EditCodec.decode("ping", &arguments) == nil)
    }
}
