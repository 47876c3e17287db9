import NIOCore

/// Splits listd's byte stream into lines (without their newline). A line longer than `maximumBytes`
/// is an error: the connection is closed rather than buffered without bound.
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    let maximumBytes: Int
    /// How much of the buffer is known to hold no newline (a long line is scanned once, not per read).
    private var scanned = 0

    init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    struct LineTooLong: Error, CustomStringConvertible {
        let limit: Int
        var description: String { "listd sent a line longer than \(limit) bytes" }
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maximumBytes { throw LineTooLong(limit: maximumBytes) }
            scanned = buffer.readableBytes
            return .needMoreData
        }
        scanned = 0
        let length = newline - buffer.readerIndex
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last line without its newline is not a whole line: dropped.
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}
