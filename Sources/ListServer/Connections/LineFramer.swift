import NIOCore

/// One framed input line, the news that a line was too long, or how many bytes of an unfinished line
/// the framer holds.
enum FramedLine {
    /// A line without its `\n` (and without a `\r` before it).
    case line(ByteBuffer)
    /// More than the maximum number of bytes arrived without a newline; nothing more is framed.
    case tooLong
    /// The bytes of the unfinished line the framer now holds (0: none). Sent at the end of a decoding
    /// pass when the count changed, or when a line was framed in it and another one is unfinished (so a
    /// `.partial(n)` with `n > 0` after a `.line` is the start of a new unfinished line).
    case partial(Int)
}

/// Splits the byte stream into lines, enforcing a strict per-line limit.
///
/// ```
/// {"cmd":"ping"}\n{"cmd":"stats"}\r\n   →   .line({"cmd":"ping"}), .line({"cmd":"stats"})
/// <limit + 1 bytes without \n>          →   .tooLong, then nothing
/// ```
/// A last line without a newline before end of input is framed too. After each pass over the received
/// bytes the framer reports what it holds of an unfinished line (`.partial`), for the connection's
/// partial-line timeout and the server's cap on unfinished lines.
struct LineFramer: ByteToMessageDecoder {
    typealias InboundOut = FramedLine

    let maximumLineBytes: Int
    private var searchedUpTo = 0
    private var failed = false
    /// The unfinished-line size last reported.
    private var reportedPartial = 0
    /// A line was framed since the last report: an unfinished line now is a new one.
    private var framedSinceReport = false

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
            framedSinceReport = true
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
            // An empty buffer is not decoded again: this is the end of the pass.
            if buffer.readableBytes == 0 { reportPartial(0, context: context) }
            return .continue
        }
        searchedUpTo = view.count
        if view.count > maximumLineBytes + 1 { return fail(context: context, buffer: &buffer) }
        reportPartial(view.count, context: context)
        return .needMoreData
    }

    /// Tells the connection how many bytes of an unfinished line are held, when that is news.
    private mutating func reportPartial(_ bytes: Int, context: ChannelHandlerContext) {
        guard reportedPartial != bytes || (framedSinceReport && bytes > 0) else {
            framedSinceReport = false
            return
        }
        reportedPartial = bytes
        framedSinceReport = false
        context.fireChannelRead(Self.wrapInboundOut(.partial(bytes)))
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
            framedSinceReport = true
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
            reportPartial(0, context: context)
        }
        return .needMoreData
    }

    private mutating func fail(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        failed = true
        buffer.moveReaderIndex(to: buffer.writerIndex)
        reportedPartial = 0  // nothing is held any more; `.tooLong` says so
        context.fireChannelRead(Self.wrapInboundOut(.tooLong))
        return .needMoreData
    }
}
