import DiffableCore
import ListWire
import Testing

/// "An argument given as `null` counts as absent" (PROTOCOL.md), at the readers every command uses.
@Suite("Null arguments read as absent")
struct NullArgumentReadingTests {
    /// The same arguments as a parsed line and as the one-pass decoder reads them.
    static func bothWays(_ line: String) throws -> [Arguments] {
        let parsed = try Request(JSONParser.parse(line)).arguments
        let decoded = try #require(Array(line.utf8).withUnsafeBytes { Request.decode(line: $0) }).arguments
        return [parsed, decoded]
    }

    @Test func everyOptionalReaderTakesNullAsAbsent() throws {
        let line = #"{"cmd":"x","text":null,"number":null,"flag":null,"list":null,"raw":null,"items":null,"snapshot":null}"#
        for var arguments in try Self.bothWays(line) {
            #expect(arguments.value("raw") == nil)
            #expect(try arguments.optionalString("text") == nil)
            #expect(try arguments.optionalInt("number") == nil)
            #expect(try arguments.optionalBool("flag") == nil)
            #expect(try arguments.optionalArray("list") == nil)
            #expect(arguments.value("items") == nil)
            #expect(arguments.value("snapshot") == nil)
            // Read, so not unknown.
            try arguments.finish()
        }
    }

    @Test func requiredReadersCallNullMissing() throws {
        for var arguments in try Self.bothWays(#"{"cmd":"x","dataSource":null,"count":null}"#) {
            #expect { try arguments.string("dataSource") } throws: { ($0 as? WireError)?.message == #"Missing argument "dataSource"."# }
            #expect { try arguments.int("count") } throws: { ($0 as? WireError)?.message == #"Missing argument "count"."# }
        }
    }

    @Test func oneOfIgnoresTheNullAlternative() throws {
        for var arguments in try Self.bothWays(#"{"cmd":"insertItems","beforeItem":null,"afterItem":"x"}"#) {
            #expect(try arguments.oneOf("beforeItem", "afterItem") == ("afterItem", "x"))
            try arguments.finish()
        }
    }

    @Test func nullOptionalArgumentsOfAnEditDecodeAsAbsent() throws {
        let line = #"{"cmd":"appendItems","items":["a"],"toSection":null}"#
        for var arguments in try Self.bothWays(line) {
            let edit = try EditCodec.decode("appendItems", &arguments)
            guard case .appendItems(let items, let section)? = edit else {
                Issue.record("not an append: \(String(describing: edit))")
                continue
            }
            #expect(items == [Item("a")] && section == nil)
            try arguments.finish()
        }
    }

    @Test func anUnknownArgumentIsRefusedEvenWhenNull() throws {
        for arguments in try Self.bothWays(#"{"cmd":"x","tosection":null}"#) {
            #expect { try arguments.finish() } throws: { ($0 as? WireError)?.message == #"Unknown argument "tosection"."# }
        }
    }
}
