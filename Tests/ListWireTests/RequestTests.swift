import DiffableCore
import ListWire
import TestSupport
import Testing

@Suite("Requests and model coding")
struct RequestTests {
    @Test func requestShape() throws {
        let request = try Request(JSONParser.parse(#"{"id":"r1","cmd":"appendItems","items":["a"]}"#))
        #expect(request.id == "r1" && request.command == "appendItems")
        #expect(request.arguments.members.keys.sorted() == ["items"])
        for (text, expected) in [
            ("[1]", "object"), (#"{"id":1}"#, "no \"cmd\""), (#"{"cmd":3}"#, "must be a string"),
        ] {
            #expect { try Request(JSONParser.parse(text)) } throws: {
                ($0 as? WireError)?.code == .invalidRequest && ($0 as! WireError).message.contains(expected)
            }
        }
        // Any JSON value is an id, echoed exactly as sent (numbers too big for a double's digits included).
        for (line, id) in [
            (#"{"id":5,"cmd":7}"#, "5"), (#"{"cmd":"x", "id" : 123456789012345678901234567890 }"#, "123456789012345678901234567890"),
            (#"{"id":[1, {"a":"\u00e9"}],"cmd":"ping"}"#, #"[1, {"a":"\u00e9"}]"#), (#"{"id":1.50e3,"cmd":"ping"}"#, "1.50e3"),
            (#"{"cmd":"ping"}"#, ""), ("[1]", ""),
        ] {
            let raw = Array(line.utf8).withUnsafeBytes { Request.rawID(in: $0) }
            #expect(raw.map { String(decoding: $0, as: UTF8.self) } ?? "" == id, "\(line)")
            if line.contains(#""cmd":"ping""#) {
                let decoded = Array(line.utf8).withUnsafeBytes { Request.decode(line: $0) }
                #expect(decoded?.rawID.map { String(decoding: $0, as: UTF8.self) } ?? "" == id, "one-pass: \(line)")
            }
        }
    }

    @Test func argumentsAreStrict() throws {
        var arguments = Arguments(["dataSource": "home", "items": ["a", ["id": "b", "data": 1]], "ifVersion": 3, "typo": true])
        #expect(try arguments.string("dataSource") == "home")
        #expect(try arguments.optionalInt("ifVersion") == 3)
        #expect(try WireDecoding.items(arguments.array("items"), field: "items") == [Item("a"), Item("b", data: 1)])
        #expect { try arguments.finish() } throws: { ($0 as? WireError)?.message == #"Unknown argument "typo"."# }
        #expect { try arguments.string("missing") } throws: { ($0 as? WireError)?.message == #"Missing argument "missing"."# }
        #expect { try arguments.optionalBool("dataSource") } throws: {
            ($0 as? WireError)?.message == #"Argument "dataSource" must be a boolean."#
        }
        var both = Arguments(["beforeItem": "a", "afterItem": "b"])
        #expect(throws: WireError.self) { try both.oneOf("beforeItem", "afterItem") }
        var one = Arguments(["afterItem": "b"])
        #expect(try one.oneOf("beforeItem", "afterItem") == ("afterItem", "b"))
    }

    /// Of several unknown members the first by name is the one named, whatever order a dictionary keeps
    /// them in (the same request always gets the same error; the fuzzer found it varying).
    @Test func theUnknownMemberNamedIsTheFirstByName() {
        let names = (0..<12).map { "m\($0)" }
        for seed in 0..<8 {
            var snapshot: [String: JSONValue] = ["sections": []]
            for name in names.shuffled() { snapshot[name] = .int(seed) }
            #expect { try WireDecoding.snapshot(.object(snapshot), field: "snapshot") } throws: {
                ($0 as? WireError)?.message == #"Unknown member "m0" in "snapshot"."#
            }
            var item: [String: JSONValue] = ["id": "a"]
            for name in names.shuffled() { item[name] = .int(seed) }
            #expect { try WireDecoding.items([.object(item)], field: "items") } throws: {
                ($0 as? WireError)?.message.contains(#"Unknown member "m0" in "items[0]""#) == true
            }
        }
    }

    @Test func modelDecodingNamesTheField() throws {
        #expect { try WireDecoding.items([.string("a"), .int(3)], field: "items") } throws: {
            ($0 as? WireError)?.message.contains("items[1]") == true
        }
        #expect { try WireDecoding.items([["id": "a", "colour": 1]], field: "items") } throws: {
            ($0 as? WireError)?.message.contains(#"Unknown member "colour" in "items[0]""#) == true
        }
        let sections = try WireDecoding.snapshot(
            ["sections": [["id": "A", "data": ["t": 1], "items": ["a", ["id": "b", "data": 2]]], ["id": "B"]]], field: "snapshot")
        #expect(sections.map(\.section) == [Section("A", data: ["t": 1]), Section("B")])
        #expect(sections.map(\.items) == [[Item("a"), Item("b", data: 2)], []])
        #expect { try WireDecoding.snapshot(["sections": [["id": "A", "items": "x"]]], field: "snapshot") } throws: {
            ($0 as? WireError)?.message.contains("snapshot.sections[0].items") == true
        }
        #expect(try WireDecoding.indexPath([1, 2], field: "indexPath") == IndexPath(section: 1, item: 2))
        #expect(throws: WireError.self) { try WireDecoding.indexPath([1], field: "indexPath") }
    }

    @Test func sectionSnapshotDecoding() throws {
        let value: JSONValue = [
            "items": [
                ["id": "smileys", "expanded": true, "children": ["😀", ["id": "😂", "children": ["🤣"]]]],
                "nature",
            ]
        ]
        let outline = try WireDecoding.sectionSnapshot(value, field: "snapshot")
        #expect(outline.items.map(\.id) == ["smileys", "😀", "😂", "🤣", "nature"])
        #expect(outline.visibleItems.map(\.id) == ["smileys", "😀", "😂", "nature"])
        #expect { try WireDecoding.sectionSnapshot(["items": ["a", ["id": "b", "children": ["a"]]]], field: "snapshot") } throws: {
            ($0 as? WireError)?.code == .duplicateItem
        }
    }

    /// Changes written in the protocol's shape decode to stages that, applied to an identifier-only copy
    /// of the old snapshot, give the new one's identifiers.
    @Test func changesRoundTripThroughTheWire() throws {
        var random = SeededGenerator(seed: 42)
        for _ in 0..<300 {
            let sectionIDs = (0..<Int.random(in: 1...5, using: &random)).map { "S\($0)" }
            var old = Snapshot()
            try old.appendSections(sectionIDs.map { Section($0) })
            for index in 0..<Int.random(in: 0...60, using: &random) {
                try old.appendItems([Item("i\(index)")], toSection: sectionIDs.randomElement(using: &random)!)
            }
            var new = old
            for _ in 0..<Int.random(in: 0...10, using: &random) {
                let items = new.itemIdentifiers
                switch Int.random(in: 0..<5, using: &random) {
                case 0: new.deleteItems(Array(items.shuffled(using: &random).prefix(3)))
                case 1 where new.numberOfSections > 0: try new.appendItems([Item("n\(Int.random(in: 0...1_000_000, using: &random))")], toSection: new.sectionIdentifiers.randomElement(using: &random))
                case 2 where items.count > 1: try new.moveItem(items[0], afterItem: items.last!)
                case 3: new.deleteSections([new.sectionIdentifiers.randomElement(using: &random) ?? "none"])
                default: try new.appendSections([Section("T\(Int.random(in: 0...1_000_000, using: &random))")])
                }
            }
            let changes = new.difference(from: old)
            var writer = JSONWriter()
            writer.changes(changes)
            let decoded = try WireDecoding.changes(JSONParser.parse(writer.bytes))
            var mirror = old
            try mirror.apply(decoded)
            #expect(mirror.sectionIdentifiers == new.sectionIdentifiers)
            #expect(mirror.itemIdentifiers == new.itemIdentifiers)
        }
    }

    @Test func changesShape() throws {
        let old = try Snapshot([(Section("A"), ["a", "b"]), (Section("B"), ["c"])])
        var new = old
        try new.moveItem("a", afterItem: "c")
        try new.updateItems([Item("b", data: 1)])
        try new.appendSections(["C"])
        var writer = JSONWriter()
        writer.changes(new.difference(from: old))
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"stages":[{"itemReconfigures":[{"indexPath":[0,1],"item":"b"}]},{"sectionInserts":[{"index":2,"section":"C","items":[]}]},{"itemMoves":[{"from":[0,0],"to":[1,1]}]}]}"#)
    }

    @Test func everyCoreErrorHasAWireCode() {
        for code in SnapshotError.Code.allCases {
            let wire = WireError(SnapshotError(code, "m", identifiers: []))
            #expect(wire.code.rawValue == code.rawValue)
        }
    }
}
