import NIOCore

/// One framed input line, or the news that a line was too long.
enum FramedLine {
    /// A line without its `\n` (and without a `\r` before it).
    case line(ByteBuffer)
    /// More than the maximum number of bytes arrived without a newline; nothing more is framed.
    case tooLong
}

/// Splits the byte stream into lines, enforcing a strict per-line limit.
///
/// ```
/// {"cmd":"ping"}\n{"cmd":"stats"}\r\n   →   .line({"cmd":"ping"}), .line({"cmd":"stats"})
/// <limit + 1 bytes without \n>          →   .tooLong, then nothing
/// ```
/// A last line without a newline before end of input is framed too.
struct LineFramer: ByteToMessageDecoder {
    typealias InboundOut = FramedLine

    let maximumLineBytes: Int
    private var searchedUpTo = 0
    private var failed = false

    init(maximumLineBytes: Int) {
        self.maximumLineBytes = maximumLineBytes
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard !failed else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let start = view.startIndex + searchedUpTo
        if let newline = view[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var length = newline - view.startIndex
            searchedUpTo = 0
            if length > maximumLineBytes + 1 || (length == maximumLineBytes + 1 && view[newline - 1] != UInt8(ascii: "\r")) {
                return fail(context: context, buffer: &buffer)
            }
            if length > 0 && view[newline - 1] == UInt8(ascii: "\r") { length -= 1 }
            let line = buffer.getSlice(at: buffer.readerIndex, length: length)!
            buffer.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
            return .continue
        }
        searchedUpTo = view.count
        if view.count > maximumLineBytes + 1 { return fail(context: context, buffer: &buffer) }
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        let state = try decode(context: context, buffer: &buffer)
        if state == .needMoreData && !failed && buffer.readableBytes > 0 {
            var length = buffer.readableBytes
            if buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\r") { length -= 1 }
            // While the line was open, one byte over the limit could have been a `\r`; at the end it is not.
            if length > maximumLineBytes {
                _ = fail(context: context, buffer: &buffer)
                return .needMoreData
            }
            let line = buffer.readSlice(length: buffer.readableBytes)!.getSlice(at: 0, length: length)!
            searchedUpTo = 0
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }

    private mutating func fail(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        failed = true
        buffer.moveReaderIndex(to: buffer.writerIndex)
        context.fireChannelRead(Self.wrapInboundOut(.tooLong))
        return .needMoreData
    }
}
