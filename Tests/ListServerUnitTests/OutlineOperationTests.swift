import DiffableCore
import ListWire
import Testing

@testable import ListServer

/// `editSectionSnapshot`'s operations read through their declarations: what each reads, and the errors
/// a wrong one gets (named by its position, "did you mean" from the op's own arguments).
@Suite struct OutlineOperationTests {
    private func read(_ json: String) -> Result<SectionSnapshotEdit, WireError> {
        do throws(WireError) {
            let value: JSONValue
            do { value = try JSONParser.parse(Array(json.utf8)) } catch { return .failure(WireError(.invalidArgument, "bad test JSON")) }
            return .success(try SectionSnapshotEdit.read(value, field: "operations[2]"))
        } catch {
            return .failure(error)
        }
    }

    private func message(_ json: String) -> String? {
        if case .failure(let error) = read(json) { return error.message }
        return nil
    }

    @Test func eachOpReadsItsDeclaredArguments() throws {
        guard case .success(.append(let items, let parent)) = read(#"{"op":"append","items":["a",{"id":"b","data":1}],"parent":"p"}"#) else {
            Issue.record("append was not read")
            return
        }
        #expect(items.map(\.id) == ["a", "b"] && parent == "p")
        guard case .success(.insertItems(let inserted, "x", after: true)) = read(#"{"op":"insert","after":"x","items":["c"]}"#) else {
            Issue.record("insert of items was not read")
            return
        }
        #expect(inserted.map(\.id) == ["c"])
        guard case .success(.insertSnapshot(_, "x", after: false)) = read(#"{"op":"insert","before":"x","snapshot":{"items":["c"]}}"#) else {
            Issue.record("insert of a snapshot was not read")
            return
        }
        guard case .success(.collapse(["a", "b"])) = read(#"{"op":"collapse","items":["a","b"]}"#),
            case .success(.expand(["a"])) = read(#"{"op":"expand","items":["a"]}"#),
            case .success(.delete(["a"])) = read(#"{"op":"delete","items":["a"]}"#),
            case .success(.deleteAll) = read(#"{"op":"deleteAll"}"#),
            case .success(.replaceChildren(parent: "p", _)) = read(#"{"op":"replaceChildren","parent":"p","snapshot":{"items":[]}}"#)
        else {
            Issue.record("an op was read as another")
            return
        }
    }

    @Test func wrongOperationsGetErrorsNamingThem() {
        #expect(message(#"{"op":"append","items":["a"],"parnet":"p"}"#) == #"operations[2]: Unknown argument "parnet"; did you mean "parent"?"#)
        #expect(message(#"{"op":"deleteAll","items":["a"]}"#) == #"operations[2]: Unknown argument "items"."#)
        #expect(message(#"{"op":"insert","after":"x","itemz":["c"]}"#) == #"operations[2]: Missing argument "items"; "itemz" was given: did you mean "items"?"#)
        #expect(message(#"{"op":"insert","after":"x","items":["c"],"snapshot":{"items":[]}}"#) == #"operations[2]: Give either "items" or "snapshot", not both."#)
        #expect(message(#"{"op":"insert","items":["c"]}"#) == #"operations[2]: insert needs exactly one of "before" and "after"."#)
        #expect(message(#"{"op":"expand"}"#) == #"operations[2]: Missing argument "items"."#)
        #expect(message(#"{"op":"fold","items":[]}"#)?.hasPrefix(#"operations[2]: unknown op "fold""#) == true)
        #expect(message(#"{"items":[]}"#) == #"operations[2] must be an object with a string "op"."#)
    }
}
