import DiffableCore
import ListWire
import Testing

/// A reply echoes its request's `id` byte for byte: plain integers travel as numbers, anything else as
/// the bytes sent; and integers are written as Swift prints them.
@Suite("Echoed ids and integers")
struct EchoedIDTests {
    @Test(arguments: ["0", "7", "-7", "10", "123456789012345678", "-123456789012345678"])
    func canonicalIntegersAreKeptAsNumbers(raw: String) {
        let id = EchoedID(bytes: Array(raw.utf8))
        #expect(id == .integer(Int(raw)!))
        #expect(id.bytes == Array(raw.utf8))
    }

    @Test(arguments: ["-0", "007", "00", "1e3", "1.0", "-", "", "--1", "+1", " 1", "1234567890123456789", "\"7\"", "null", "[1]"])
    func anythingElseIsKeptAsItsBytes(raw: String) {
        let id = EchoedID(bytes: Array(raw.utf8))
        #expect(id == .bytes(Array(raw.utf8)))
        #expect(id.bytes == Array(raw.utf8))
    }

    @Test func repliesEchoTheIDAsSent() throws {
        for raw in ["1", "-0", "1.50", "1e2", "\"a\"", "{\"x\":[1,2]}", "99999999999999999999999"] {
            let line = Array(#"{"id":\#(raw),"cmd":"ping"}"#.utf8)
            let request = try #require(line.withUnsafeBytes { Request.decode(line: $0) })
            var writer = JSONWriter()
            writer.echoedID(try #require(request.echoedID))
            #expect(String(decoding: writer.bytes, as: UTF8.self) == raw)
        }
    }

    @Test(arguments: [0, 9, 10, 99, 100, -1, -10, 1_000_000_007, Int.max, Int.min])
    func integersAreWrittenAsSwiftPrintsThem(value: Int) {
        var writer = JSONWriter()
        writer.int(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
    }
}
