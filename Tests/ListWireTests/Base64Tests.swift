import ListWire
import Testing

@Suite("Base64")
struct Base64Tests {
    @Test func rfc4648Vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(String(decoding: Base64.encode(Array(plain.utf8)), as: UTF8.self) == encoded)
            #expect(Base64.decode(Array(encoded.utf8)) == Array(plain.utf8))
        }
    }

    @Test func everyByteRoundTrips() {
        for length in 0..<300 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
    }

    @Test func notBase64IsNil() {
        for text in ["Zg=", "Zg===", "Z!==", "Zm9v\n", "=Zm9"] { #expect(Base64.decode(Array(text.utf8)) == nil, "\(text)") }
    }
}
