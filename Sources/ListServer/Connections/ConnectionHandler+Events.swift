import DiffableCore
import ListEngine
import ListWire
import NIOCore

/// The events of the views attached on a connection, and the lines written to a plugin.
extension ConnectionHandler {
    /// Detaches every view of this connection from its data source.
    private func detachAllViews() {
        for attachment in views {
            state.dataSources[attachment.dataSource]?.detach(view: attachment.name)
            attachment.releaseCharges()
        }
        views.removeAll()
    }

    /// The one way an event reaches this connection's views (every kind: changes, reloads,
    /// `layoutChanged`, `cellUpdated`, `selectionChanged`, `dropped`, a resumed view's backlog): written
    /// at once and flushed at the end of the loop's turn, counted in `stats` (`events.sent`), unless this connection's unsent output
    /// would pass the view queue limit (`maxViewQueueBytes`): then its views get a last `overflow` event
    /// and the connection is closed. `event` is one line with its newline (a broadcast shares one buffer
    /// among its views).
    func sendEvent(_ event: ByteBuffer) {
        guard let context, !machine.isClosing else { return }
        if !views.isEmpty, fellBehind(adding: event.readableBytes, context: context) { return }
        guard admitOutput(event.readableBytes, context: context) else { return }
        writePending(context: context)
        output.channelBytesBound += event.readableBytes
        // Flushed at the end of this turn of the event loop: the events of a burst of changes (a writer's
        // pipelined requests) leave in one write.
        context.write(wrapOutboundOut(event), promise: nil)
        flushLater(context: context)
        state.stats.eventsSent += 1
        // A view whose peer does not read keeps growing past the moment it stopped being writable: its
        // share of maxOutputBytesTotal is looked at again for every maxOutputBytes more.
        if !context.channel.isWritable, output.isDueForReweighing(every: limits.maximumOutputBytes) { state.shedHeldOutput() }
        perform(machine.outputSent(hasViews: !views.isEmpty), context: context)
    }

    /// `sendEvent` for an event line built for this connection alone (without its newline).
    func sendEvent(_ bytes: [UInt8]) {
        guard let context, !machine.isClosing else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 1)
        buffer.writeBytes(bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        sendEvent(buffer)
    }

    /// Whether `count` more bytes of events would put this connection's views `maxViewQueueBytes` behind:
    /// then they get `overflow` and are disconnected (counted in `stats`), and nothing more is sent.
    private func fellBehind(adding count: Int, context: ChannelHandlerContext) -> Bool {
        let limit = state.configuration.maximumViewQueueBytes
        if channelMayHold(atLeast: limit - count + 1, context: context) {
            let buffered = output.channelBytesBound
            state.stats.viewsOverflowed += 1
            state.logger.warning(
                "view fell behind; disconnecting", metadata: ["connection": "\(id)", "user": "\(identity.displayName)", "bufferedBytes": "\(buffered)"])
            detachAllViews()
            write(context: context, reply: ViewEvent.overflow(limit: state.configuration.maximumViewQueueBytes))
            perform(machine.viewsFellBehind(), context: context)
            return true
        }
        return false
    }

    /// Tells the client the server is stopping (views get a `shutdown` event), then closes.
    func shutDown() {
        guard let context else { return }
        perform(machine.shutDown(), context: context)
    }

    /// Closes at once, logging why (a plugin that broke the protocol).
    func disconnect(reason: String) {
        guard let context, !machine.isClosing else { return }
        state.logger.warning("disconnecting", metadata: ["connection": "\(id)", "user": "\(identity.displayName)", "plugin": "\(client.plugin?.name ?? "-")", "reason": "\(reason)"])
        perform(machine.disconnect(), context: context)
    }

    /// Forgets a view of this connection that its data source no longer serves and tells the client:
    /// `{"event": "dropped", "dataSource", "view", "reason"?}` (the data source was dropped, or with
    /// `reason`, e.g. `access`, why else).
    func viewDropped(_ view: ViewSession, reason: String?) {
        views.remove(view)
        view.releaseCharges()
        sendEvent(ViewEvent.dropped(dataSource: view.dataSource, view: view.name, reason: reason))
    }

    /// Writes a line that is not an event of this connection's views (a configure request to a plugin,
    /// whose own limits apply), flushed at once.
    func sendLine(_ bytes: [UInt8]) {
        guard let context, !machine.isClosing else { return }
        write(context: context, reply: bytes)
        writePending(context: context)
        context.flush()
        // A one-shot client that just lost its last view: close once its replies are out.
        perform(machine.outputSent(hasViews: !views.isEmpty), context: context)
    }
}
