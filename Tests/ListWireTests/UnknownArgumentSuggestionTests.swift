import DiffableCore
import Testing

@testable import ListWire

/// "Did you mean" in unknown-argument errors: the closest declared name, per unknown argument.
@Suite struct UnknownArgumentSuggestionTests {
    private func arguments(_ line: String) throws -> Arguments {
        try Request(JSONParser.parse(Array(line.utf8))).arguments
    }

    private func message(_ line: String, declared: [String]) throws -> String? {
        var given = try arguments(line)
        _ = try Sample(arguments: &given)
        do {
            try given.finish(declared: declared)
            return nil
        } catch {
            return error.message
        }
    }

    private let sampleNames = ArgumentDocumentation.of(Sample()).map(\.name)

    @Test func aMisspeltArgumentGetsTheDeclaredNameMeant() throws {
        #expect(try message(#"{"cmd":"x","dataSource":"d","cuont":1}"#, declared: sampleNames) == #"Unknown argument "cuont"; did you mean "count"?"#)
        // Case alone is no difference (as listctl's "did you mean").
        #expect(try message(#"{"cmd":"x","dataSource":"d","afteritem":"a"}"#, declared: sampleNames) == #"Unknown argument "afteritem"; did you mean "afterItem"?"#)
    }

    @Test func aMisspeltRequiredArgumentIsNamedBesideTheMissingOne() throws {
        var given = try arguments(#"{"cmd":"x","dataSorce":"d","toSection":"s"}"#)
        #expect { try given.string("dataSource") } throws: {
            ($0 as? WireError)?.message == #"Missing argument "dataSource"; "dataSorce" was given: did you mean "dataSource"?"#
        }
        // Nothing close: missing, as before (an argument read already is no candidate either).
        var other = try arguments(#"{"cmd":"x","items":[],"toSection":"s"}"#)
        _ = other.value("items")
        #expect { try other.int("item") } throws: { ($0 as? WireError)?.message == #"Missing argument "item"."# }
    }

    /// The hint for a missing argument is the same whichever path decoded the line and in whatever order
    /// the members came: every given name is a candidate (`items` decoded from the line too), the first
    /// by name wins a tie (two findings of `listd-fuzz-commands`'s twin).
    @Test func theMissingArgumentHintIsTheSameOnEveryPath() throws {
        func hints(_ line: String, missing name: String) throws -> (decoded: String?, reference: String?) {
            var decoded = try #require(Array(line.utf8).withUnsafeBytes { Request.decode(line: $0) }).arguments
            var reference = try arguments(line)
            func message(_ arguments: inout Arguments) -> String? {
                do {
                    _ = try arguments.string(name)
                    return nil
                } catch {
                    return error.message
                }
            }
            return (message(&decoded), message(&reference))
        }
        let items = try hints(#"{"cmd":"moveItem","dataSource":"d","items":["n"],"bmforeItem":"a"}"#, missing: "item")
        #expect(items.decoded == #"Missing argument "item"; "items" was given: did you mean "item"?"#)
        #expect(items.decoded == items.reference)
        for line in [#"{"cmd":"moveSection","segtion":"a","oSection":"b"}"#, #"{"cmd":"moveSection","oSection":"b","segtion":"a"}"#] {
            let tie = try hints(line, missing: "section")
            #expect(tie.decoded == #"Missing argument "section"; "oSection" was given: did you mean "section"?"#, "\(line)")
            #expect(tie.decoded == tie.reference, "\(line)")
        }
    }

    @Test func nothingCloseMeansNoSuggestion() throws {
        #expect(try message(#"{"cmd":"x","dataSource":"d","extra":true}"#, declared: sampleNames) == #"Unknown argument "extra"."#)
        #expect(try message(#"{"cmd":"x","dataSource":"d","cuont":1}"#, declared: []) == #"Unknown argument "cuont"."#)
    }

    @Test func severalUnknownEachGetTheirOwn() throws {
        #expect(
            try message(#"{"cmd":"x","dataSource":"d","extra":1,"itemz":[],"cuont":2}"#, declared: sampleNames)
                == #"Unknown arguments "cuont" (did you mean "count"?), "extra", "itemz" (did you mean "items"?)."#)
    }

    @Test func aNameTheRequestGivesIsNoSuggestion() throws {
        // "item" is closest to "items", which is given: suggesting it would point at what is already there.
        #expect(try message(#"{"cmd":"x","dataSource":"d","items":[],"item":"a"}"#, declared: sampleNames) == #"Unknown argument "item"."#)
    }

    @Test func aDeclaredNameLeftUnreadIsNoSuggestionForItself() throws {
        let given = try arguments(#"{"cmd":"x","items":[]}"#)
        #expect { try given.finish(declared: ["items", "snapshot"]) } throws: { ($0 as? WireError)?.message == #"Unknown argument "items"."# }
    }

    @Test func theNamesAreOnlyWorkedOutWhenAnArgumentIsUnknown() throws {
        var given = try arguments(#"{"cmd":"x","dataSource":"d"}"#)
        _ = try Sample(arguments: &given)
        var evaluated = false
        try given.finish(declared: {
            evaluated = true
            return sampleNames
        }())
        #expect(!evaluated)
    }

    @Test func everyEditKindSuggestsFromItsOwnDeclaration() throws {
        #expect(EditCodec.Kind.appendItems.argumentNames == ["items", "toSection"])
        #expect(EditCodec.Kind.moveItem.argumentNames == ["item", "beforeItem", "afterItem"])
        var given = try arguments(#"{"cmd":"appendItems","items":["a"],"tosection":"s"}"#)
        _ = try EditCodec.decode(.appendItems, &given)
        #expect { try given.finish(declared: EditCodec.Kind.appendItems.argumentNames) } throws: {
            ($0 as? WireError)?.message == #"Unknown argument "tosection"; did you mean "toSection"?"#
        }
    }
}
