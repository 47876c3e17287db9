import NIOCore
import NIOEmbedded
import Testing

@testable import ListServer

/// What the framer produced, in a form tests can compare and print.
enum Framed: Equatable, CustomStringConvertible {
    case line(String)
    case tooLong
    case partial(Int)

    init(_ framed: FramedLine) {
        switch framed {
        case .line(let buffer): self = .line(String(buffer: buffer))
        case .tooLong: self = .tooLong
        case .partial(let bytes): self = .partial(bytes)
        }
    }

    var isPartial: Bool {
        if case .partial = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .line(let text): return ".line(\(text.debugDescription))"
        case .tooLong: return ".tooLong"
        case .partial(let bytes): return ".partial(\(bytes))"
        }
    }
}

/// The line framer alone in an EmbeddedChannel, installed as the server installs it
/// (`ByteToMessageHandler(LineFramer(maximumLineBytes:))`). What it frames reaches the channel's
/// inbound buffer; everything runs synchronously on the test's thread.
struct FramerChannel {
    let channel = EmbeddedChannel()

    init(maximumLineBytes: Int) throws {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFramer(maximumLineBytes: maximumLineBytes)))
    }

    /// One read burst of `bytes`.
    func write(_ bytes: some Collection<UInt8>) throws {
        try channel.writeInbound(channel.allocator.buffer(bytes: bytes))
    }

    func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// The peer closed its sending side (what the server sees, with remote half-closure allowed).
    func closeInput() throws {
        channel.pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        try channel.throwIfErrorCaught()
    }

    /// The lines (and `.tooLong`) framed since the last call, in order; unfinished-line reports are left out.
    func framed() throws -> [Framed] { try everything().filter { !$0.isPartial } }

    /// Everything framed since the last call, unfinished-line reports included, in order.
    func everything() throws -> [Framed] {
        var framed: [Framed] = []
        while let value = try channel.readInbound(as: FramedLine.self) { framed.append(Framed(value)) }
        return framed
    }

    /// Closes the channel; true when nothing was left unread.
    func finish() throws -> Bool { try channel.finish(acceptAlreadyClosed: true).isClean }
}

/// A small deterministic generator (SplitMix64), for the irregular chunkings.
private struct SplitMix64 {
    var state: UInt64
    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// `LineFramer` through `ByteToMessageHandler`, as the server installs it: whole lines in order however
/// the bytes are cut, `\r\n` accepted, a strict per-line limit, and the last line at end of input.
@Suite("Line framer: lines out of a byte stream, with a strict limit")
struct LineFramerTests {
    /// Several lines with every kind of ending: `\n`, `\r\n`, a `\r` inside a line (kept), empty lines.
    static let input = Array("{\"cmd\":\"ping\"}\n{\"id\":1,\"cmd\":\"stats\"}\r\na\rb\n\n\r\nlast line\n".utf8)
    static let expected: [Framed] = [
        .line("{\"cmd\":\"ping\"}"), .line("{\"id\":1,\"cmd\":\"stats\"}"), .line("a\rb"), .line(""), .line(""),
        .line("last line"),
    ]

    /// Writes `input` cut at `cuts` (sorted offsets), one read burst per piece, and returns what was framed.
    func frame(_ input: [UInt8], cutAt cuts: [Int], maximumLineBytes: Int = 64) throws -> [Framed] {
        let framer = try FramerChannel(maximumLineBytes: maximumLineBytes)
        var start = 0
        for end in cuts + [input.count] where end > start {
            try framer.write(input[start..<end])
            start = end
        }
        let framed = try framer.framed()
        #expect(try framer.finish())
        return framed
    }

    @Test func linesSplitAcrossWritesComeOutWholeAndInOrder() throws {
        let input = Self.input
        // Every fixed chunk size, from one byte at a time to the whole input in one write…
        var chunkings = (1...input.count).map { size in Array(stride(from: size, to: input.count, by: size)) }
        // …every single cut (so each `\r` is separated from its `\n` once)…
        chunkings += (1..<input.count).map { [$0] }
        // …and irregular ones.
        var random = SplitMix64(state: 42)
        for _ in 0..<200 {
            let density = 1 + random.next(below: 8)
            chunkings.append((1..<input.count).filter { _ in random.next(below: density) == 0 })
        }
        for cuts in chunkings {
            let framed = try frame(input, cutAt: cuts)
            #expect(framed == Self.expected, "cut at \(cuts)")
        }
    }

    @Test func severalLinesInOneBufferGiveSeveralValues() throws {
        #expect(try frame(Self.input, cutAt: []) == Self.expected)
        let framer = try FramerChannel(maximumLineBytes: 64)
        try framer.write("a\nb\r\nc\n")
        #expect(try framer.framed() == [.line("a"), .line("b"), .line("c")])
        #expect(try framer.finish())
    }

    @Test func aLineIsFramedAsSoonAsItsNewlineArrives() throws {
        let framer = try FramerChannel(maximumLineBytes: 64)
        try framer.write("ab")
        #expect(try framer.framed() == [])
        try framer.write("c\r")
        #expect(try framer.framed() == [], "the \\r may still be followed by \\n")
        try framer.write("\nd")
        #expect(try framer.framed() == [.line("abc")])
        try framer.write("\n")
        #expect(try framer.framed() == [.line("d")])
        #expect(try framer.finish())
    }

    @Test func anOverlongLineIsReportedOnceAndNothingIsFramedAfterIt() throws {
        let framer = try FramerChannel(maximumLineBytes: 8)
        try framer.write("ok\n" + String(repeating: "x", count: 10))  // the limit + 2 bytes, no newline
        #expect(try framer.framed() == [.line("ok"), .tooLong])
        // The rest of the stream, complete lines included, is discarded.
        try framer.write("more\n")
        try framer.write(String(repeating: "y", count: 20) + "\n{\"cmd\":\"ping\"}\n")
        #expect(try framer.framed() == [])
        try framer.closeInput()
        #expect(try framer.framed() == [], "end of input frames nothing after .tooLong")
        #expect(try framer.finish())
    }

    @Test func anOverlongLineIsCaughtAtItsNewlineToo() throws {
        // In one buffer with a line after it: .tooLong only.
        let framer = try FramerChannel(maximumLineBytes: 8)
        try framer.write("123456789\nok\n")
        #expect(try framer.framed() == [.tooLong])
        #expect(try framer.finish())
        // One byte at a time: limit + 1 bytes wait (the last could be a \r), the newline decides.
        let bytewise = try FramerChannel(maximumLineBytes: 8)
        for byte in "123456789".utf8 { try bytewise.write([byte]) }
        #expect(try bytewise.framed() == [])
        try bytewise.write("\n")
        #expect(try bytewise.framed() == [.tooLong])
        try bytewise.write("ok\n")
        #expect(try bytewise.framed() == [])
        #expect(try bytewise.finish())
    }

    @Test(arguments: ["12345678\n", "12345678\r\n"])
    func aLineExactlyAtTheLimitIsAccepted(_ text: String) throws {
        let input = Array(text.utf8)
        // Whole, and one byte at a time.
        #expect(try frame(input, cutAt: [], maximumLineBytes: 8) == [.line("12345678")])
        #expect(try frame(input, cutAt: Array(1..<input.count), maximumLineBytes: 8) == [.line("12345678")])
        // One byte more is too long.
        #expect(try frame(Array(("9" + text).utf8), cutAt: [], maximumLineBytes: 8) == [.tooLong])
    }

    @Test func aLastLineWithoutNewlineIsFramedAtEndOfInput() throws {
        let framer = try FramerChannel(maximumLineBytes: 8)
        try framer.write("first\nla")
        try framer.write("st")
        #expect(try framer.framed() == [.line("first")])
        try framer.closeInput()
        #expect(try framer.framed() == [.line("last")])
        #expect(try framer.finish())
        // A trailing \r is dropped, as before a \n; a line of the limit plus its \r is accepted.
        let withReturn = try FramerChannel(maximumLineBytes: 8)
        try withReturn.write("12345678\r")
        try withReturn.closeInput()
        #expect(try withReturn.framed() == [.line("12345678")])
        #expect(try withReturn.finish())
        // The channel closing (not only its input) ends the input as well.
        let closed = try FramerChannel(maximumLineBytes: 8)
        try closed.write("tail")
        try closed.channel.close().wait()
        #expect(try closed.framed() == [.line("tail")])
        #expect(try closed.finish())
    }

    @Test func endOfInputAfterANewlineFramesNothingMore() throws {
        let framer = try FramerChannel(maximumLineBytes: 8)
        try framer.write("first\n")
        try framer.closeInput()
        #expect(try framer.framed() == [.line("first")], "no empty last line")
        #expect(try framer.finish())
        let empty = try FramerChannel(maximumLineBytes: 8)
        try empty.closeInput()
        #expect(try empty.framed() == [])
        #expect(try empty.finish())
    }

    @Test func aLastLineOverTheLimitIsTooLongAtEndOfInput() throws {
        // Far over the limit: .tooLong as soon as the bytes arrive, and nothing at end of input.
        let framer = try FramerChannel(maximumLineBytes: 8)
        try framer.write(String(repeating: "x", count: 20))
        #expect(try framer.framed() == [.tooLong])
        try framer.closeInput()
        #expect(try framer.framed() == [])
        #expect(try framer.finish())
        // Exactly one byte over (and not a \r): "more than the maximum number of bytes arrived without a newline".
        let oneOver = try FramerChannel(maximumLineBytes: 8)
        try oneOver.write("123456789")
        try oneOver.closeInput()
        let framed = try oneOver.framed()
        #expect(framed == [.tooLong])
        #expect(try oneOver.finish())
    }

    /// The framer reports what it holds of an unfinished line when that changes, and after each pass that
    /// framed a line while another is unfinished (a new line began), so the connection can time it.
    @Test func unfinishedLinesAreReported() throws {
        let framer = try FramerChannel(maximumLineBytes: 64)
        try framer.write("{\"cmd\"")
        #expect(try framer.everything() == [.partial(6)])
        try framer.write(":")
        #expect(try framer.everything() == [.partial(7)])
        try framer.write("\"ping\"}\n")
        #expect(try framer.everything() == [.line("{\"cmd\":\"ping\"}"), .partial(0)], "finished: nothing held")
        try framer.write("a\n")
        #expect(try framer.everything() == [.line("a")], "nothing was held, nothing is: no news")
        try framer.write("abc")
        #expect(try framer.everything() == [.partial(3)])
        try framer.write("\nxyz")
        #expect(try framer.everything() == [.line("abc"), .partial(3)], "the same size, but a new line")
        try framer.write(String(repeating: "x", count: 70))
        #expect(try framer.everything() == [.tooLong], "too long: nothing is held any more")
        #expect(try framer.finish())
        // At end of input the unfinished line becomes the last line.
        let last = try FramerChannel(maximumLineBytes: 64)
        try last.write("tail")
        try last.closeInput()
        #expect(try last.everything() == [.partial(4), .line("tail"), .partial(0)])
        #expect(try last.finish())
    }
}
