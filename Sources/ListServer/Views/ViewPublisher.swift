import CellCore
import ListEngine
import NIOCore

/// An event line for every view of a data source (one buffer, shared), published once the change that
/// made it is durable.
struct Broadcast {
    let dataSource: DataSource
    /// The line, with its newline.
    var event: ByteBuffer
    /// The lines of views that show an expansion of their own (`ViewExpansion`), whose changes differ.
    var ownEvents: [ObjectIdentifier: ByteBuffer] = [:]
}

/// Sends what views get: a change's event line to every view of its data source (a view with an
/// expansion of its own gets its own line), registration changes, and the flush at the end of the
/// loop's turn that writes them out, one task however many connections a change's events went to.
/// Confined to the server's event loop.
final class ViewPublisher {
    /// Connections whose output is flushed at the end of this turn of the loop.
    private var connectionsToFlush: [any ViewConnection] = []
    /// The loop the pending flush task runs on.
    private var flushLoop: EventLoop?

    /// Writes an event line to every view of the broadcast's data source (a view with an expansion of
    /// its own gets its own line, when it has one).
    func send(_ broadcast: Broadcast) {
        if broadcast.ownEvents.isEmpty {
            broadcast.dataSource.forEachAttachedView { $0.connection.sendEvent(broadcast.event) }
        } else {
            broadcast.dataSource.forEachAttachedView { attachment in
                attachment.connection.sendEvent(broadcast.ownEvents[ObjectIdentifier(attachment)] ?? broadcast.event)
            }
        }
    }

    /// Tells the views of every data source in `dataSources` whose cell or supplementary provider names
    /// the registration of this key (`Registration.key`) that it was made, deleted or replaced
    /// (`registrationChanged`, naming it by name): the cells that failed for want of it, or that it
    /// configured, are to be dequeued again.
    func tellViews(registration key: String, change: ViewEvent.RegistrationChange, in dataSources: [String: DataSource]) {
        let name = Registration.name(ofKey: key)
        for dataSource in dataSources.values where dataSource.hasViews && dataSource.names(registration: key) {
            for view in dataSource.attachedViews {
                view.connection.sendEvent(
                    ViewEvent.registrationChanged(dataSource: dataSource.name, view: view.name, registration: name, change: change))
            }
        }
    }

    /// Flushes `connection` at the end of this turn of the event loop, with every other connection that
    /// asked in this turn.
    func flushAtEndOfTurn(_ connection: any ViewConnection, on loop: EventLoop) {
        if let flushLoop, flushLoop !== loop {
            // A connection on another loop (listd has one; tests may not): a task of its own.
            let bound = NIOLoopBound(connection, eventLoop: loop)
            loop.execute { bound.value.flushScheduledOutput() }
            return
        }
        connectionsToFlush.append(connection)
        guard connectionsToFlush.count == 1 else { return }
        flushLoop = loop
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.execute {
            let publisher = bound.value
            // Flushing may make another connection ask again (a closed view's last words): those go next turn.
            let connections = publisher.connectionsToFlush
            publisher.connectionsToFlush = []
            publisher.flushLoop = nil
            for connection in connections { connection.flushScheduledOutput() }
        }
    }
}
