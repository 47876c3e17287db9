import ListDurability
import ListEngine

extension ServerState {
    /// The server's part of undoing a failed write, once the engine's is done (`CommitPipeline(engine:…)`
    /// wires it): the views were sent none of the undone changes (a change is published once durable),
    /// so they need no event for them; the views of a data source the undone changes had created are
    /// told it is gone, views with an expansion of their own show the undone state again, and the
    /// views naming a registration the undone changes touched drop its cells and are told.
    package func react(to undone: UndoneChanges<DataSourceViews>) {
        for gone in undone.gone {
            for view in gone.attachedViews { view.connection.viewDropped(view) }
        }
        // What they show is what they were last sent.
        for name in undone.dataSources {
            guard let dataSource = dataSources[name] else { continue }
            for view in dataSource.viewsWithOwnExpansion { dataSource.reprojectExpansion(of: view) }
        }
        // A registration is as it was again: cells a view took of it meanwhile go, and the views are told.
        for (key, change) in undone.registrations {
            for dataSource in dataSources.values {
                for view in dataSource.attachedViews { view.cells.drain(registration: key) }
            }
            tellViews(registration: key, change: change)
        }
    }
}
