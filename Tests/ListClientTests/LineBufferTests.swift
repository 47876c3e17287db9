@testable import ListClient
import TestSupport
import Testing

@Suite("Line buffer")
struct LineBufferTests {
    /// Feeds `bytes` in chunks of `chunkSize`, collecting every line as soon as it is complete.
    private func lines(of bytes: [UInt8], chunkSize: Int, buffer: inout LineBuffer) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunkSize, bytes.count)
            buffer.append(Array(bytes[offset..<end]))
            // A reader asks after every chunk, as LineConnection does after every read.
            while buffer.hasLine(), let line = buffer.nextLine() { lines.append(line) }
            let none = buffer.nextLine()
            #expect(none == nil)
            offset = end
        }
        return lines
    }

    @Test func splitsLinesWhateverTheChunkBoundaries() {
        let text = Array("{\"ok\":true}\n\n{\"event\":\"changes\"}\nlast".utf8)
        for chunkSize in 1...text.count {
            var buffer = LineBuffer()
            let got = lines(of: text, chunkSize: chunkSize, buffer: &buffer)
            #expect(got == [Array("{\"ok\":true}".utf8), [], Array("{\"event\":\"changes\"}".utf8)], "chunks of \(chunkSize)")
            #expect(buffer.pendingByteCount == 4, "the unterminated 'last' stays pending")
        }
    }

    @Test func manyLinesInRandomChunksComeOutWhole() {
        var generator = SeededGenerator(seed: 17)
        var expected: [[UInt8]] = []
        var stream: [UInt8] = []
        for index in 0..<20_000 {
            let line = Array("line \(index) ".utf8) + [UInt8](repeating: 0x61, count: Int.random(in: 0..<300, using: &generator))
            expected.append(line)
            stream += line + [0x0A]
        }
        var buffer = LineBuffer()
        var got: [[UInt8]] = []
        var offset = 0
        while offset < stream.count {
            let end = min(offset + Int.random(in: 1..<9_000, using: &generator), stream.count)
            buffer.append(Array(stream[offset..<end]))
            while let line = buffer.nextLine() { got.append(line) }
            offset = end
        }
        #expect(got == expected)
        #expect(buffer.pendingByteCount == 0)
        #expect(buffer.scannedByteCount == stream.count, "each byte is searched exactly once")
    }

    /// One line of `megabytes` MB in 1 KB chunks, with a reader asking for a line after every chunk: the
    /// bytes searched for a newline, which were O(n·k) when each search began at the line's start.
    private func bytesScanned(forALineOf megabytes: Int) -> Int {
        let size = megabytes << 20
        var line = [UInt8](repeating: 0x78, count: size)
        line.append(0x0A)
        var buffer = LineBuffer()
        let got = lines(of: line, chunkSize: 1_024, buffer: &buffer)
        #expect(got.count == 1 && got[0].count == size)
        return buffer.scannedByteCount
    }

    @Test func readingOneLongLineInSmallChunksIsLinear() {
        let small = bytesScanned(forALineOf: 1)
        let large = bytesScanned(forALineOf: 8)
        #expect(small == (1 << 20) + 1, "every byte searched once, however many chunks")
        #expect(large == (8 << 20) + 1)
        // Quadratic scanning would make this ratio about 64.
        #expect(Double(large) / Double(small) < 8.5)
    }

    @Test func askingWhetherALineIsWaitingDoesNotSearchAgain() {
        var buffer = LineBuffer()
        buffer.append([UInt8](repeating: 0x78, count: 10_000))
        for _ in 0..<100 {
            let waiting = buffer.hasLine()
            #expect(!waiting)
        }
        #expect(buffer.scannedByteCount == 10_000)
        buffer.append([0x0A, 0x79])
        let asked = (buffer.hasLine(), buffer.hasLine())
        #expect(asked == (true, true))
        #expect(buffer.scannedByteCount == 10_001)
        let line = buffer.nextLine()
        #expect(line?.count == 10_000)
        let more = buffer.hasLine()
        #expect(!more)
        #expect(buffer.pendingByteCount == 1)
    }

    @Test func handedOutLinesAreDroppedFromTheFront() {
        var buffer = LineBuffer()
        let line = [UInt8](repeating: 0x7A, count: 1_000) + [0x0A]
        // Each chunk ends a line and starts the next: a line is always pending when bytes arrive.
        let chunk = Array(line[500...]) + line[0..<500]
        buffer.append(Array(line[0..<500]))
        var largest = 0
        for _ in 0..<2_000 {
            buffer.append(chunk)
            largest = max(largest, buffer.storedByteCount)
            let line = buffer.nextLine()
            #expect(line?.count == 1_000)
        }
        let none = buffer.nextLine()
        #expect(none == nil)
        #expect(largest < 200_000, "2 MB went through; the buffer keeps only about one compaction threshold's worth")
        #expect(buffer.pendingByteCount == 500)
        buffer.append(Array(line[500...]))
        let last = buffer.nextLine()
        #expect(last == Array(line.dropLast()))
    }
}
