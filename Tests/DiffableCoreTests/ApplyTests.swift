import DiffableCore
import Testing

@Suite("Applying staged changes")
struct ApplyTests {
    static func stage(_ build: (inout ChangeStage) -> Void) -> StagedChanges {
        var stage = ChangeStage()
        build(&stage)
        return StagedChanges(stages: [stage])
    }

    static let inconsistent: [(String, StagedChanges)] = [
        ("section delete out of range", stage { $0.sectionDeletes = [2] }),
        ("item delete out of range", stage { $0.itemDeletes = [IndexPath(section: 0, item: 3)] }),
        ("item deleted twice", stage { $0.itemDeletes = [IndexPath(section: 0, item: 0), IndexPath(section: 0, item: 0)] }),
        ("item deleted and moved", stage {
            $0.itemDeletes = [IndexPath(section: 0, item: 0)]
            $0.itemMoves = [Move(from: IndexPath(section: 0, item: 0), to: IndexPath(section: 0, item: 1))]
        }),
        ("insert past the end", stage { $0.itemInserts = [ItemChange(indexPath: IndexPath(section: 0, item: 4), item: "x")] }),
        ("insert into a missing section", stage { $0.itemInserts = [ItemChange(indexPath: IndexPath(section: 5, item: 0), item: "x")] }),
        ("insert an existing item", stage { $0.itemInserts = [ItemChange(indexPath: IndexPath(section: 0, item: 0), item: "b")] }),
        ("insert a section that exists", stage { $0.sectionInserts = [SectionInsert(index: 0, section: "A", items: [])] }),
        ("section insert past the end", stage { $0.sectionInserts = [SectionInsert(index: 3, section: "C", items: [])] }),
        ("reload out of range", stage { $0.itemReloads = [ItemChange(indexPath: IndexPath(section: 1, item: 2), item: "x")] }),
        ("reconfigure out of range", stage { $0.itemReconfigures = [ItemChange(indexPath: IndexPath(section: 0, item: 9), item: "x")] }),
        ("two moves to one place", stage {
            $0.sectionMoves = [Move(from: 0, to: 1), Move(from: 1, to: 1)]
        }),
    ]

    @Test func inconsistentChangesThrowAndChangeNothing() throws {
        let original = try makeSnapshot(["A": ["a", "b", "c"], "B": ["d", "e"]])
        for (name, changes) in Self.inconsistent {
            var snapshot = original
            #expect(throws: InconsistentChangesError.self, "\(name)") { try snapshot.apply(changes) }
            #expect(snapshot == original, "\(name)")
            #expect(snapshot.invariantViolations() == [], "\(name)")
            #expect(throws: InconsistentChangesError.self, "\(name)") { _ = try original.applying(changes) }
        }
    }

    @Test func deleteAndInsertTheSameIdentifierInOneStage() throws {
        var snapshot = try makeSnapshot(["A": ["a", "b"]])
        try snapshot.apply(Self.stage {
            $0.itemDeletes = [IndexPath(section: 0, item: 0)]
            $0.itemInserts = [ItemChange(indexPath: IndexPath(section: 0, item: 1), item: Item("a", data: 1))]
        })
        #expect(layout(snapshot) == "A: b, a")
        #expect(snapshot.data(ofItem: "a") == 1)
    }

    @Test func movesAndInsertsFollowBatchSemantics() throws {
        // Before: A: a b c d. Delete b, move d to the front, insert x at 2: after, A: d a x c.
        var snapshot = try makeSnapshot(["A": ["a", "b", "c", "d"]])
        try snapshot.apply(Self.stage {
            $0.itemDeletes = [IndexPath(section: 0, item: 1)]
            $0.itemMoves = [Move(from: IndexPath(section: 0, item: 3), to: IndexPath(section: 0, item: 0))]
            $0.itemInserts = [ItemChange(indexPath: IndexPath(section: 0, item: 2), item: "x")]
        })
        #expect(layout(snapshot) == "A: d, a, x, c")
    }

    @Test func aLaterStageFailingKeepsEarlierStages() throws {
        var snapshot = try makeSnapshot(["A": ["a", "b"]])
        var first = ChangeStage()
        first.itemDeletes = [IndexPath(section: 0, item: 0)]
        var second = ChangeStage()
        second.itemDeletes = [IndexPath(section: 0, item: 5)]
        #expect {
            try snapshot.apply(StagedChanges(stages: [first, second]))
        } throws: { ($0 as? InconsistentChangesError)?.stage == 1 }
        #expect(layout(snapshot) == "A: b")
    }
}

@Suite("JSON values")
struct JSONValueTests {
    @Test func literalsAndText() {
        let value: JSONValue = ["b": [1, 2.5, "x\n\"", nil, true], "a": ["nested": [:]]]
        #expect(value.description == #"{"a":{"nested":{}},"b":[1,2.5,"x\n\"",null,true]}"#)
        #expect(JSONValue.string("\u{01}").description == #""\u0001""#)
        #expect(JSONValue.double(.infinity).description == "null")
    }

    @Test func pathsAndAccessors() {
        let consult: JSONValue = ["title": "감기", "lastAnswer": ["content": "안녕하세요"], "tags": ["a", "b"]]
        #expect(consult.value(atPath: "lastAnswer.content") == "안녕하세요")
        #expect(consult.value(atPath: "tags.1") == "b")
        #expect(consult.value(atPath: "tags.7") == nil)
        #expect(consult.value(atPath: "missing.x") == nil)
        #expect(consult["title"]?.stringValue == "감기")
        #expect(JSONValue.int(1)["x"] == nil)
        #expect(JSONValue.null.isNull && !JSONValue.int(0).isNull)
    }

    @Test func equalityIsStructural() {
        #expect(JSONValue.object(["a": 1, "b": 2]) == ["b": 2, "a": 1])
        #expect(JSONValue.int(1) != .double(1), "different JSON texts are different payloads")
        #expect(Set<JSONValue>([["a": 1], ["a": 1]]).count == 1)
    }
}
