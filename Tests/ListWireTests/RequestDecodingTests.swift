import DiffableCore
import ListWire
import TestSupport
import Testing

/// `Request.decode(line:)` (one pass, items and snapshots straight into the model) against the
/// reference path (`JSONParser.parse`, `Request.init`): whatever it decodes means exactly the same.
@Suite("One-pass request decoding")
struct RequestDecodingTests {
    static func decode(_ line: String) -> Request? {
        Array(line.utf8).withUnsafeBytes { Request.decode(line: $0) }
    }

    static func reference(_ line: String) -> Request? {
        guard let value = try? JSONParser.parse(line) else { return nil }
        return try? Request(value)
    }

    /// The same id, command and arguments, read every way a command reads them.
    static func expectSameMeaning(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let decoded = decode(line)
        guard let expected = reference(line) else {
            #expect(decoded == nil, "decoded a line the reference path refuses: \(line)", sourceLocation: sourceLocation)
            return
        }
        guard let decoded else { return }  // not decoded: the reference path takes it
        let reference = expected
        #expect(decoded.id == reference.id && decoded.command == reference.command, "\(line)", sourceLocation: sourceLocation)
        for name in reference.arguments.members.keys {
            var a = decoded.arguments
            var b = reference.arguments
            if name == "items" {
                let decodedItems = Result { () throws(WireError) in try a.items("items") }
                let referenceItems = Result { () throws(WireError) in try b.items("items") }
                #expect(String(describing: decodedItems) == String(describing: referenceItems), "\(line)", sourceLocation: sourceLocation)
                var c = decoded.arguments
                var d = reference.arguments
                let strings = Result { () throws(WireError) in try c.strings("items") }
                let referenceStrings = Result { () throws(WireError) in try d.strings("items") }
                #expect(String(describing: strings) == String(describing: referenceStrings), "\(line)", sourceLocation: sourceLocation)
            } else if name == "snapshot" {
                let decodedSnapshot = Result { () throws(WireError) in try a.snapshot("snapshot") }
                let referenceSnapshot = Result { () throws(WireError) in try b.snapshot("snapshot") }
                #expect(String(describing: decodedSnapshot) == String(describing: referenceSnapshot), "\(line)", sourceLocation: sourceLocation)
            } else {
                #expect(a.value(name) == b.value(name), "\(name) in \(line)", sourceLocation: sourceLocation)
            }
        }
        // The same arguments: unread, they are refused as unknown; all read, none is left over.
        var unread = decoded.arguments
        #expect((try? unread.finish()) == nil || reference.arguments.members.isEmpty, "\(line)", sourceLocation: sourceLocation)
        #expect(throws: Never.self) {
            for name in reference.arguments.members.keys { _ = unread.value(name) }
            try unread.finish()
        }
    }

    @Test func theCommonShapesAreDecodedAndMeanTheSame() {
        let lines = [
            #"{"cmd":"appendItems","dataSource":"d","items":["a","b"]}"#,
            #"{"id":7,"cmd":"appendItems","dataSource":"d","items":[{"id":"a","data":{"title":"A","n":[1,2.5,null,true]}},"b"],"toSection":"S"}"#,
            #"  {"items":[],"cmd":"deleteItems","dataSource":"d"}  "#,
            #"{"cmd":"apply","dataSource":"d","snapshot":{"sections":[{"id":"S","data":{"t":"x"},"items":["a",{"id":"b","data":1}]},{"id":"T"},{"id":"U","items":null}]}}"#,
            #"{"cmd":"apply","dataSource":"d","snapshot":{"sections":[]},"reloadData":true,"id":"x"}"#,
            #"{"cmd":"updateItems","dataSource":"d","items":[{"data":{"k":"v"},"id":"a"},{"id":"b","data":null}]}"#,
            #"{"cmd":"ping"}"#,
            #"{"cmd":"appendItems","dataSource":"d","items":["\u00e9\ud83d\ude00","tab\tx","가"]}"#,
        ]
        for line in lines {
            #expect(Self.decode(line) != nil, "the decoder takes \(line)")
            Self.expectSameMeaning(line)
        }
    }

    /// Lines the decoder leaves to the reference path (which then explains them), or takes with the
    /// same meaning: duplicates, other shapes, bad JSON, trailing data.
    @Test func everythingElseFallsBackOrMeansTheSame() {
        let lines = [
            #"{"cmd":"appendItems","items":["a"],"items":["b"]}"#,
            #"{"cmd":"appendItems","items":[{"id":"a","id":"b"}]}"#,
            #"{"cmd":"appendItems","items":[{"id":"a","data":1,"data":2}]}"#,
            #"{"cmd":"appendItems","items":[{"id":"a","x":1}]}"#,
            #"{"cmd":"appendItems","items":[1,"a"]}"#,
            #"{"cmd":"appendItems","items":[{"id":3}]}"#,
            #"{"cmd":"appendItems","items":[{}]}"#,
            #"{"cmd":"appendItems","items":null}"#,
            #"{"cmd":"appendItems","items":"a"}"#,
            #"{"cmd":"appendItems","items":["a",]}"#,
            #"{"cmd":"appendItems","items":["a"]} x"#,
            #"{"cmd":"appendItems","items":["a\u0000"]}"#,
            #"{"cmd":7,"items":["a"]}"#,
            #"{"id":[1],"cmd":"ping"}"#,
            #"{"id":1,"id":2,"cmd":"ping"}"#,
            #"{"cmd":"ping","cmd":"ping"}"#,
            #"{"items":["a"]}"#,
            #"["cmd"]"#,
            #"{"cmd":"apply","snapshot":{"sections":[{"id":"S","items":[1]}]}}"#,
            #"{"cmd":"apply","snapshot":{"sections":[{"id":"S","extra":1}]}}"#,
            #"{"cmd":"apply","snapshot":{"sections":[],"other":1}}"#,
            #"{"cmd":"apply","snapshot":{"items":[]}}"#,
            #"{"cmd":"apply","snapshot":{"sections":[{"id":"S","items":["a"],"items":["b"]}]}}"#,
            #"{"cmd":"apply","snapshot":{"sections":[{"id":"S","data":1,"data":2}]}}"#,
            #"{"cmd":"apply","snapshot":{"sections":{}}}"#,
            // Envelope names spelt with escapes, and duplicates of those.
            #"{"cmd":"ping","\u0069d":5}"#,
            #"{"\u0063md":"ping"}"#,
            #"{"cmd":"appendItems","dataSource":"d","\u0069tems":["a"]}"#,
            #"{"cmd":"appendItems","items":["a"],"\u0069tems":["b"]}"#,
            #"{"cmd":"apply","snaps\u0068ot":{"sections":[]}}"#,
            #"{"cmd":"ping","id":1,"\u0069d":2}"#,
            #"{"cmd":"ping","data\u0053ource":"d","dataSource":"e"}"#,
            #"{"cmd":"ping", "id" : 3 , "dataSource" : "d" }"#,
            #"{"cmd":"ping","dataSource":"d","dataSource":"e"}"#,
            #"{"cmd":"appendItems","items":"x","items":["a"]}"#,
            #"{"cmd":"appendItems","items":["a"],"items":"x"}"#,
            // More members than the decoder keeps: the reference path takes them.
            "{\"cmd\":\"ping\"," + (0..<40).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}",
            "{\"cmd\":\"appendItems\",\"items\":[\"\u{7F}\"]}",
            "{\"cmd\":\"appendItems\",\"items\":[\"\\ud800\"]}",
            "{\"cmd\":\"appendItems\",\"items\":[{\"id\":\"a\",\"data\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}]}",
            "{\"cmd\":\"appendItems\",\"items\":[{\"id\":\"a\",\"data\":" + String(repeating: "[", count: 509) + String(repeating: "]", count: 509) + "}]}",
            "{\"cmd\":\"appendItems\",\"items\":[{\"id\":\"a\",\"data\":" + String(repeating: "[", count: 510) + String(repeating: "]", count: 510) + "}]}",
        ]
        for line in lines { Self.expectSameMeaning(line) }
    }

    /// Random requests built from pieces, some broken: never a different meaning.
    @Test func randomRequestsMeanTheSame() {
        var random = SeededGenerator(seed: 16)
        let ids = [#""a""#, #""b c""#, #""\u00e9""#, #""\n""#, "3", "null", #"{"id":"x"}"#, #"{"id":"y","data":{"t":[1,{"u":null}]}}"#, #"{"id":"z","data":null}"#, #"{"data":1,"id":"w"}"#, #"{"id":"v","q":1}"#, "[]"]
        for _ in 0..<3_000 {
            var members: [String] = [#""cmd":"appendItems""#]
            if Bool.random(using: &random) { members.append(#""dataSource":"d""#) }
            if Bool.random(using: &random) { members.append(#""id":\#(Int.random(in: 0...9, using: &random))"#) }
            let count = Int.random(in: 0...4, using: &random)
            let elements = (0..<count).map { _ in ids.randomElement(using: &random)! }
            members.append(#""items":[\#(elements.joined(separator: ","))]"#)
            if Int.random(in: 0..<4, using: &random) == 0 {
                let sections = (0..<Int.random(in: 0...2, using: &random)).map { index in
                    #"{"id":"s\#(index)","items":[\#(elements.joined(separator: ","))]}"#
                }
                members.append(#""snapshot":{"sections":[\#(sections.joined(separator: ","))]}"#)
            }
            if Int.random(in: 0..<10, using: &random) == 0 { members.append(members.randomElement(using: &random)!) }
            members.shuffle(using: &random)
            Self.expectSameMeaning("{" + members.joined(separator: ",") + "}")
        }
    }

    /// Buffers lent request after request (`RequestBuffers`) are filled again in place only once the
    /// request before is done with them: a request still held keeps its own arguments and items.
    @Test func reusedBuffersLeaveAnEarlierRequestIntact() throws {
        var buffers = RequestBuffers()
        func decode(_ line: String) -> Request? {
            Array(line.utf8).withUnsafeBytes { Request.decode(line: $0, reusing: &buffers) }
        }
        var first = try #require(decode(#"{"cmd":"appendItems","dataSource":"d","items":["a","b"],"toSection":"s"}"#))
        for index in 0..<3 {
            var next = try #require(decode(#"{"cmd":"appendItems","dataSource":"e\#(index)","items":["x\#(index)"]}"#))
            #expect(try next.arguments.items("items").map(\.id) == ["x\(index)"])
            #expect(next.arguments.members.keys == ["dataSource"])
            #expect(try next.arguments.string("dataSource") == "e\(index)")
        }
        #expect(try first.arguments.items("items").map(\.id) == ["a", "b"])
        #expect(first.arguments.members.keys == ["dataSource", "toSection"])
        #expect(try first.arguments.string("toSection") == "s")
        // Once nothing holds them, the next request fills them: the same meaning as without buffers.
        first = try #require(decode(#"{"cmd":"appendItems","dataSource":"f","items":[{"id":"y","data":1}]}"#))
        #expect(try first.arguments.items("items") == [Item("y", data: 1)])
    }
}
