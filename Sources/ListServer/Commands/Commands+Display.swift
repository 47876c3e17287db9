import DiffableCore
import ListEngine
import ListWire

/// `watchDisplay`: this connection gets a data source's display events (its owner's signal).
struct WatchDisplayCommand: CommandDeclaration {
    static let about = CommandAbout("watchDisplay", "Sends this connection display events: what a data source's views show now, then the items they will display (their dequeues) and prefetch.", result: "{dataSource, watching}")
    @Arg("The data source (the caller needs write access: it is its owner's signal).") var dataSource: String
    @Arg("true: stop sending them.") var stop: Bool?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (name, stop) = (self.dataSource, stop ?? false)
        let dataSource = try context.dataSource(name)
        let reply: (inout JSONWriter) -> Void = { writer in
            writer.key("dataSource")
            writer.string(name)
            writer.key("watching")
            writer.bool(!stop)
        }
        // Stopping needs no right (it only takes events away).
        if stop {
            dataSource.display.unwatch(context.connection)
            return CommandResult(reply: .members(reply))
        }
        try context.state.require(.write, on: dataSource.model, by: context.connection.identity, to: "watch what its views display")
        // What the views show now comes first, to this watcher alone and after the reply (as
        // attach gives the snapshot before the changes), through its queue like every signal.
        let current = dataSource.attachedViews.map { view -> (view: String, items: [String]) in
            let snapshot = view.snapshot(in: dataSource)
            let shown = view.cells.displayedKeys.compactMap { key in snapshot.indexPath(ofItem: key).map { (key, $0) } }
            return (view.name, shown.sorted { $0.1 < $1.1 }.map(\.0))
        }
        let connection = context.connection
        let display = dataSource.display
        let dataSourceName = dataSource.name
        let (accounts, viewQueueLimit, logger) = (context.state.model.accounts, context.state.configuration.maximumViewQueueBytes, context.state.logger)
        return CommandResult(
            reply: .members(reply),
            afterReply: [
                {
                    display.watch(
                        connection, dataSource: dataSourceName, current: current, accounts: accounts, viewQueueLimit: viewQueueLimit, logger: logger)
                    display.deliverHeld()
                }
            ])
    }
}

/// `prefetch`: a view says what it is about to show.
struct PrefetchCommand: CommandDeclaration {
    static let about = CommandAbout("prefetch", "A view says which index paths it is about to show (UIKit's prefetchItemsAt): watchers get them as prefetch.", result: "{version, prefetched}")
    var target: ViewTarget
    @Arg("Positions about to show (ones out of range are left out).") var indexPaths: [IndexPath]

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let view = try target.view(context)
        let dataSource = try context.dataSource(view.dataSource)
        let perSecond = context.state.configuration.maximumDisplaySignalsPerViewPerSecond
        if let retryAfter = dataSource.display.admitSignal(view: view.name, perSecond: perSecond) {
            throw WireError(
                .limitExceeded,
                "View \"\(view.name)\" signals what it displays more than \(perSecond) times a second (maxDisplaySignalsPerViewPerSecond: prefetch requests, and dequeues while the data source is watched); try again in \(retryAfter) ms.",
                details: ["limit": "maxDisplaySignalsPerViewPerSecond", "perSecond": .int(perSecond), "retryAfterMilliseconds": .int(retryAfter)])
        }
        // A view a change just overtook may name positions that are gone: they are skipped.
        let snapshot = view.snapshot(in: dataSource)
        let items = indexPaths.compactMap { snapshot.itemIdentifier(at: $0) }
        dataSource.display.note(
            view: view.name, items: items, prefetch: true, dataSource: dataSource.name, eventLoop: context.connection.eventLoop, perSecond: perSecond,
            viewQueueLimit: context.state.configuration.maximumViewQueueBytes)
        let version = dataSource.version
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key("prefetched")
            writer.int(items.count)
        }
    }
}

extension CommandRouter {
    /// Display signals: a data source's owner learns what its views show (`willDisplay`, from their
    /// dequeues) and are about to show (`prefetch`), as UIKit's delegate and prefetching data source do:
    /// what an infinite scroll appends on.
    static var displayCommands: [Command] {
        [Command(WatchDisplayCommand.self), Command(PrefetchCommand.self), Command(ReorderCommand.self)] + viewExpansionCommands
    }
}
