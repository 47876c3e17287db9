import NIOCore

/// Sits at the end of a watching connection's pipeline and, once its output has drained below the low
/// water mark (the channel is writable again), sends the display events that waited for it
/// (`DisplayWatchQueue`). Added the first time a data source holds events for the connection.
/// Confined to the event loop.
final class DisplayWatchResumer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private final class WeakSignals {
        weak var signals: DisplaySignals?
        init(_ signals: DisplaySignals) { self.signals = signals }
    }

    /// The data sources holding events for this connection.
    private var waiting: [ObjectIdentifier: WeakSignals] = [:]

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !waiting.isEmpty {
            let resumed = waiting.values.compactMap(\.signals)
            waiting = [:]
            for signals in resumed { signals.deliverHeld() }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Has `signals` deliver what it holds for `connection` once its output drains.
    static func resume(_ signals: DisplaySignals, when connection: ConnectionHandler) {
        guard let pipeline = connection.context?.pipeline else { return }
        let resumer: DisplayWatchResumer
        if let existing = try? pipeline.syncOperations.handler(type: DisplayWatchResumer.self) {
            resumer = existing
        } else {
            resumer = DisplayWatchResumer()
            guard (try? pipeline.syncOperations.addHandler(resumer)) != nil else { return }
        }
        resumer.waiting[ObjectIdentifier(signals)] = WeakSignals(signals)
    }
}
