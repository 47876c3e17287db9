import DiffableCore
import Testing

@testable import ListWire

/// A declaration as commands declare theirs: arguments, a group decoded flat, optional ones.
struct Sample: ArgumentDecodable {
    @Arg("The data source.") var dataSource: String
    var placement: ItemPlacement
    @Arg("How many.") var count: Count?
    @Arg("Items.") var items: [Item]?

    init() { placement = ItemPlacement(verb: "Put") }
}

@Suite struct ArgumentDeclarationTests {
    private func arguments(_ line: String) throws -> Arguments {
        try Request(JSONParser.parse(Array(line.utf8))).arguments
    }

    @Test func documentationComesFromTheDeclarationInOrderWithGroupsFlattened() {
        let documented = ArgumentDocumentation.of(Sample())
        #expect(documented.map(\.name) == ["dataSource", "beforeItem", "afterItem", "count", "items"])
        #expect(documented.map(\.required) == [true, false, false, false, false])
        #expect(documented.map(\.type) == ["string", "string", "string", "integer", "[item]"])
        #expect(documented[1].summary == "Put before this item (or give afterItem).")
    }

    @Test func decodesInOnePassAndMarksWhatItRead() throws {
        var given = try arguments(#"{"cmd":"x","dataSource":"d","afterItem":"a","count":3,"items":["i",{"id":"j","data":1}]}"#)
        let sample = try Sample(arguments: &given)
        #expect(sample.dataSource == "d" && sample.count?.value == 3 && sample.items?.map(\.id) == ["i", "j"])
        #expect(try sample.placement.placement() == .after("a"))
        try given.finish()
    }

    @Test func nullIsAbsentAndNotUnknown() throws {
        var given = try arguments(#"{"cmd":"x","dataSource":"d","count":null,"items":null,"beforeItem":"b"}"#)
        let sample = try Sample(arguments: &given)
        #expect(sample.count == nil && sample.items == nil)
        try given.finish()
    }

    @Test func theFirstBadArgumentInDeclarationOrderIsTheError() throws {
        var given = try arguments(#"{"cmd":"x","count":-1}"#)
        #expect { try Sample(arguments: &given) } throws: {
            ($0 as? WireError)?.message == #"Missing argument "dataSource"."#
        }
        var negative = try arguments(#"{"cmd":"x","dataSource":"d","count":-1,"items":5}"#)
        #expect { try Sample(arguments: &negative) } throws: {
            ($0 as? WireError)?.message == #"Argument "count" must be an integer from 0 to 9007199254740991."#
        }
    }

    @Test func anArgumentNobodyDeclaredStaysUnread() throws {
        var given = try arguments(#"{"cmd":"x","dataSource":"d","tosection":"s"}"#)
        _ = try Sample(arguments: &given)
        #expect { try given.finish() } throws: { ($0 as? WireError)?.message == #"Unknown argument "tosection"."# }
    }

    @Test func everyEditKindDecodesThroughItsDeclaration() throws {
        for kind in EditCodec.Kind.allCases {
            #expect(kind.declaration.kind == kind)
        }
        var given = try arguments(#"{"cmd":"moveItem","item":"a","beforeItem":"b","afterItem":"c"}"#)
        #expect { try EditCodec.decode(.moveItem, &given) } throws: {
            ($0 as? WireError)?.message == #"Give either "beforeItem" or "afterItem", not both."#
        }
    }
}
