import ListEngine
import ListWire
import NIOCore

/// What the layers below see of a connection (`ServedConnection`, `ViewConnection`, `PluginConnection`),
/// read from the handler's machine, output and profile.
extension ConnectionHandler: ServedConnection {
    var isClosing: Bool { machine.isClosing }
    var isWritable: Bool { context?.channel.isWritable ?? false }
    var plugin: PluginSession? { client.plugin }
    var clientName: String? { client.name }

    /// Bytes of request lines waiting their turn and of the unfinished line the framer holds.
    var queuedBytes: Int {
        machine.heldRequestLines.reduce(machine.heldPartialBytes) { $0 + $1.readableBytes }
    }

    var liveBytes: (queues: Int, output: Int) {
        (queuedBytes, context.map { unsentBytes(context: $0) } ?? 0)
    }

    var heldPartialBytes: Int { machine.isClosing ? 0 : machine.heldPartialBytes }

    var heldOutputBytes: Int? {
        guard !machine.isClosing, let context, machine.isOutputPaused || !context.channel.isWritable else { return nil }
        return unsentBytes(context: context)
    }

    func mayHoldOutput(atLeast bytes: Int) -> Bool {
        guard let context else { return false }
        return channelMayHold(atLeast: bytes - (output.gathered?.readableBytes ?? 0), context: context)
    }

    func resumeWhenWritable(_ signals: DisplaySignals) {
        DisplayWatchResumer.resume(signals, when: self)
    }

    /// `hello` with `relay`: the connection relays for others from now on (before it attaches views, so
    /// that everything its views keep is charged to the relay's account).
    func becomeRelay(_ relay: Bool) throws(WireError) {
        guard relay != client.isRelay else { return }
        guard relay, views.isEmpty else {
            throw WireError(
                .invalidArgument,
                relay ? "relay: say it in hello before attaching views." : "relay: a relay stays one for the connection's life.")
        }
        client.isRelay = true
    }
}
