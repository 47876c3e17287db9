@testable import ListWeb
import Testing

@Suite("listweb: where a request head ends")
struct RequestHeadTests {
    /// The header deadline ends at the first empty line, however the head arrived in pieces.
    @Test func aHeadEndsAtTheFirstEmptyLine() {
        let head = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY".utf8)
        #expect(RequestHeadDeadline.headEnd(in: head) == head.count - 4)
        #expect(RequestHeadDeadline.headEnd(in: Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)) == nil)
        // Searched from where the last piece ended, less the three bytes an end may begin with.
        let first = Array("GET / HTTP/1.1\r\nHost: x\r\n\r".utf8)
        #expect(RequestHeadDeadline.headEnd(in: first) == nil)
        #expect(RequestHeadDeadline.headEnd(in: first + [10], from: first.count) == first.count + 1)
    }

    @Test func imageOriginsAreOriginsOnly() {
        #expect(ImageOrigin("https://img.example")?.value == "https://img.example")
        #expect(ImageOrigin("http://127.0.0.1:9999/")?.value == "http://127.0.0.1:9999")
        for bad in ["*", "https://img.example/path", "https://a.example; script-src *", "ftp://x", "https://*.example", "'self'", "https://u@x.example"] {
            #expect(ImageOrigin(bad) == nil, "\(bad)")
        }
    }
}
