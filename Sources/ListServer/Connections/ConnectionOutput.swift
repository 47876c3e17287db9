import NIOCore

/// The limits one connection was opened with (a reload changes only new connections').
struct ConnectionLimits {
    /// The line limit its framer was made with.
    let maximumLineBytes: Int
    /// Unsent output above this pauses the connection (the write buffer's high water mark).
    let maximumOutputBytes: Int
    /// Unsent output reaching this closes the connection.
    let maximumOutputBytesHard: Int
    /// How long a line may stay unfinished.
    let partialLineTimeout: TimeAmount

    init(_ configuration: ServerConfiguration) {
        maximumLineBytes = configuration.maximumLineBytes
        maximumOutputBytes = configuration.maximumOutputBytes
        maximumOutputBytesHard = max(configuration.maximumOutputBytesHard, configuration.maximumOutputBytes)
        partialLineTimeout = .seconds(Int64(configuration.partialLineTimeoutSeconds))
    }
}

/// What one connection has written and not yet seen leave: the replies gathered in the current read
/// burst, an upper bound of what its channel holds unsent, and its flush at the end of the loop's turn.
/// Pure accounting; `ConnectionHandler` asks the channel and writes.
struct ConnectionOutput {
    /// Gathered output handed to the channel before the read burst ends.
    static let handOffBytes = 64 << 10

    /// Replies of the current read burst, written as one buffer at the end of the burst (or before
    /// anything else is written, so the order of lines never changes).
    var gathered: ByteBuffer?
    /// At least the bytes the channel holds unsent: raised by every write to it, set exactly whenever
    /// the channel is asked (`ConnectionHandler.bufferedBytes`).
    var channelBytesBound = 0
    /// `channelBytesBound` when this connection's held output was last weighed against `maxOutputBytesTotal`.
    var heldOutputChecked = 0
    /// A flush at the end of this turn of the event loop is asked for (`ServerState.flushAtEndOfTurn`).
    var flushScheduled = false

    /// Bytes gathered and not yet handed to the channel.
    var gatheredBytes: Int { gathered?.readableBytes ?? 0 }

    /// Whether `count` more bytes surely stay below `hardLimit` (the bound only overestimates: below the
    /// limit, the unsent output is); if not, the channel must be asked.
    func surelyAdmits(_ count: Int, hardLimit: Int) -> Bool {
        channelBytesBound + gatheredBytes + count < hardLimit
    }

    /// Whether the gathered replies are a chunk's worth: handed to the channel (whose water marks pause
    /// the connection) now rather than at the end of the read burst.
    func shouldHandOff(maximumOutputBytes: Int) -> Bool {
        gatheredBytes >= min(Self.handOffBytes, maximumOutputBytes)
    }

    /// Takes the gathered buffer to hand to the channel, counting it as held there.
    mutating func takeGathered() -> ByteBuffer? {
        guard let buffer = gathered else { return nil }
        gathered = nil
        channelBytesBound += buffer.readableBytes
        return buffer
    }

    /// A view whose peer does not read keeps growing past the moment it stopped being writable: its
    /// share of `maxOutputBytesTotal` is weighed again for every `maximumOutputBytes` more. True (and
    /// noted) when it is due.
    mutating func isDueForReweighing(every maximumOutputBytes: Int) -> Bool {
        guard channelBytesBound >= heldOutputChecked + maximumOutputBytes else { return false }
        heldOutputChecked = channelBytesBound
        return true
    }
}

/// What a client said about itself in `hello`, and the request it is running (for the audit and
/// request logs).
struct ClientProfile {
    /// What the client said it is.
    var name: String?
    /// It relays for others (listweb's pages): charged like any user, root's included (see `AccountHolder`).
    var isRelay = false
    /// Set when it said `hello` as a plugin.
    var plugin: PluginSession?
    /// The command being run.
    var currentCommand = ""
    /// The error code the last request was answered with (nil: it succeeded).
    var lastErrorCode: String?
}
