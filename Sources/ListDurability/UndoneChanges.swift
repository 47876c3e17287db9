import ListEngine

/// What undoing a failed write did to the engine (`StateEngine.undoFailedWrite`): what the server reacts
/// to with its views. The views were sent none of the undone changes (a change is published once
/// durable), so they need no event for them; only what depends on the state as it is now.
package struct UndoneChanges<Attachment: DataSourceAttachment> {
    /// The data sources the undone changes touched: served as they are again, or no longer served.
    package var dataSources: Set<String>
    /// The data sources no longer served (the undone changes had created them): their views are to be told.
    package var gone: [ServedDataSource<Attachment>]
    /// The registrations the undone changes touched (by `Registration.key`, in the order of the changes),
    /// each with what undoing did to it: deleted (the undone change had made it), made again, or given
    /// its earlier definition back (`replaced`).
    package var registrations: [(key: String, change: ViewEvent.RegistrationChange)]
}

extension StateEngine {
    /// `undo(_:dataSources:)` after a failed write (`undos` oldest first), reporting what it did for the
    /// server's views.
    package func undoFailedWrite(_ undos: [ChangeUndo], dataSources touched: Set<String>) -> UndoneChanges<Attachment> {
        var keys: [String] = []
        var seen = Set<String>()
        for key in undos.lazy.compactMap(\.registration) where seen.insert(key).inserted { keys.append(key) }
        let existedBefore = Set(keys.filter { model.registrations[$0] != nil })
        let gone = undo(undos, dataSources: touched)
        let registrations = keys.map { key -> (key: String, change: ViewEvent.RegistrationChange) in
            let exists = model.registrations[key] != nil
            return (key, !exists ? .deleted : existedBefore.contains(key) ? .replaced : .created)
        }
        return UndoneChanges(dataSources: touched, gone: gone, registrations: registrations)
    }
}
