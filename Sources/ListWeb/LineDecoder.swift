import NIOCore

/// Takes whole lines (without their newline) off the front of a buffer that a stream keeps appending to.
/// A line longer than `maximumBytes` is an error: the connection is closed rather than buffered without
/// bound. What it scanned without finding a newline is not scanned again (a long line is read once).
struct LineSplitter {
    let maximumBytes: Int
    private var scanned = 0

    init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    struct LineTooLong: Error, CustomStringConvertible {
        let limit: Int
        var description: String { "listd sent a line longer than \(limit) bytes" }
    }

    /// The next whole line of `buffer` (read off it, with its newline), or `nil` until more comes.
    mutating func nextLine(in buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let newline = buffer.readableBytesView.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maximumBytes { throw LineTooLong(limit: maximumBytes) }
            scanned = buffer.readableBytes
            return nil
        }
        scanned = 0
        let line = buffer.readSlice(length: newline - buffer.readerIndex)!
        buffer.moveReaderIndex(forwardBy: 1)
        return line
    }
}

/// Splits listd's byte stream into lines (without their newline), in a channel pipeline.
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    private var splitter: LineSplitter

    init(maximumBytes: Int) {
        splitter = LineSplitter(maximumBytes: maximumBytes)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let line = try splitter.nextLine(in: &buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last line without its newline is not a whole line: dropped.
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}
