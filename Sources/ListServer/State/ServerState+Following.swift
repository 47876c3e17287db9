import CellCore
import DiffableCore
import ListDurability
import ListEngine
import ListStore
import ListWire
import NIOCore

/// Changes other instances committed to a shared store, applied to this instance's state (see
/// `StoreFollower`, which decides what to apply when).
extension ServerState {
    /// Starts following the other instances that share `store`.
    func follow(_ store: SharedStore, pipeline: CommitPipeline, loop: EventLoop) {
        let follower = StoreFollower(store: store, state: self, pipeline: pipeline, loop: loop, logger: logger)
        self.storage.follower = follower
        follower.start()
    }

    /// Applies a change another instance committed, through the commit path (without storing it), and
    /// publishes it to this instance's views at once as a local change is once stored: with the event
    /// line the committing instance stored (`storedEvent`), else one made here.
    func publishFollowed(_ change: StateChange, storedEvent: [UInt8]?) throws(WireError) {
        let published = try commit(change, connection: nil, followed: true, storedEvent: storedEvent)
        if let broadcast = published.broadcast { publisher.send(broadcast) }
        for action in published.afterReply { action() }
    }

    /// Serves a data source as another instance stored it, read whole (see `StateEngine.serve(stored:)`).
    /// Views of the same incarnation reload (a `changes` event with `reloadData`); views of another
    /// incarnation are told it was dropped. Returns false when nothing changed (the version held here
    /// is as new).
    func serveFollowed(_ stored: StoredDataSource) -> Bool {
        let serving: StateEngine<DataSourceViews>.StoredServing
        do {
            serving = try engine.serve(stored: stored)
        } catch {
            logger.error("cannot serve a data source another instance stored", metadata: ["dataSource": "\(stored.name)", "error": "\(error)"])
            return false
        }
        switch serving {
        case .unchanged:
            return false
        case .reloaded(let served):
            publishReload(of: served)
        case .replaced(let previous, _):
            if let previous {
                for view in previous.attachedViews { view.connection.viewDropped(view, reason: "made again by another listd") }
            }
        }
        return true
    }

    /// Drops a data source another instance dropped; its views are told.
    func dropFollowed(_ name: String) {
        guard let dropped = engine.forget(dataSource: name) else { return }
        for view in dropped.attachedViews { view.connection.viewDropped(view) }
    }

    /// Makes the registrations the stored ones; the reuse pools of registrations deleted or defined
    /// otherwise drain, as after `unregister`, and views whose providers name a changed one are told.
    func restoreFollowedRegistrations(_ stored: [Registration]) {
        let before = Set(model.registrations.keys)
        guard let changed = engine.restoreRegistrations(stored) else { return }
        for key in changed {
            for dataSource in dataSources.values {
                for view in dataSource.attachedViews { view.cells.drain(registration: key) }
            }
            let now = model.registrations[key] != nil
            tellViews(registration: key, change: !now ? .deleted : before.contains(key) ? .replaced : .created)
        }
    }

    /// Tells the views of a data source to reload everything (a `changes` event with `reloadData`, at
    /// its current version): its state was read whole rather than followed change by change.
    func publishReload(of dataSource: DataSource) {
        var changes = JSONWriter(capacity: 64)
        changes.changes(StagedChanges(), reloadData: true)
        let event = dataSource.changesEvent(changesJSON: changes.bytes)
        var buffer = ByteBufferAllocator().buffer(capacity: event.count + 1)
        buffer.writeBytes(event)
        buffer.writeInteger(UInt8(ascii: "\n"))
        // Views with an expansion of their own reload what they show too: their projections anew.
        for view in dataSource.viewsWithOwnExpansion {
            dataSource.reprojectExpansion(of: view)
            dataSource.settleExpansion(of: view)
        }
        publisher.send(Broadcast(dataSource: dataSource, event: buffer))
        ViewPublisher.updateDisplayedCells(of: dataSource, after: StagedChanges(), reloadData: true, sources: cellSources)
    }
}
