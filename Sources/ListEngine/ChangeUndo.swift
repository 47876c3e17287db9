import CellCore
import DiffableCore
import ListLayout
import ListStore

/// What undoes one change `StateModel.apply(_:limits:recordingUndo:)` made: the inverse the core
/// recorded while it made the change (for snapshot edits), or what the change replaced (a whole
/// snapshot, a layout, a provider, a dropped data source, a registration).
///
/// A durable server keeps one for every change that is not durable yet, so that when a write fails it
/// undoes the failed changes in memory, newest first, without reading the store: reads go on through
/// an outage. `StateModel.undo(_:)` applies them; each is valid only while every later change was
/// undone before it.
public struct ChangeUndo: Sendable {
    /// Indirect: an undo is one reference wherever an outcome is copied.
    indirect enum Step: @unchecked Sendable {
        /// Nothing changed (an identical registration existed).
        case nothing
        /// The change created the data source: undoing it forgets it.
        case created(dataSource: String)
        /// The change dropped this data source.
        case dropped(DataSourceModel)
        /// The change changed this data source, which was like `before`.
        case changed(DataSourceModel, before: DataSourceBefore)
        case registered(key: String)
        case unregistered(Registration, position: Int)
        /// The change gave this registration another definition.
        case replaced(Registration)
    }

    /// A data source's parts as they were before a change, with what undoes its snapshot.
    struct DataSourceBefore {
        var version: Int
        var snapshot: SnapshotBefore
        var outlines: [String: SectionSnapshot]
        var cellProvider: CellProvider?
        var supplementaryProviders: [String: CellProvider]
        var layout: LayoutDescription
        var expansionScope: ExpansionScope
    }

    enum SnapshotBefore {
        case unchanged
        /// The edits' inverses (an edit, a batch, an outline's items).
        case edited(SnapshotUndo)
        /// The snapshot a whole new one replaced.
        case replaced(Snapshot)
    }

    let step: Step

    /// The key (`Registration.key`) of the registration undoing this change gives back its earlier state
    /// (made, deleted or redefined), `nil` for data-source changes: the server drains its cells and tells the views.
    public var registration: String? {
        switch step {
        case .registered(let key): return key
        case .unregistered(let registration, _), .replaced(let registration): return registration.key
        default: return nil
        }
    }
}

extension DataSourceModel {
    /// The parts a change may set, captured before it (O(1): values shared until changed).
    func before(snapshot: ChangeUndo.SnapshotBefore) -> ChangeUndo.DataSourceBefore {
        ChangeUndo.DataSourceBefore(
            version: version, snapshot: snapshot, outlines: outlines, cellProvider: cellProvider,
            supplementaryProviders: supplementaryProviders, layout: layout, expansionScope: expansionScope)
    }

    /// Makes the data source what it was (see `before(snapshot:)`).
    func restore(_ before: ChangeUndo.DataSourceBefore) {
        version = before.version
        switch before.snapshot {
        case .unchanged: break
        case .edited(let undo): snapshot.undo(undo)
        case .replaced(let previous): snapshot = previous
        }
        if !outlines.isEmpty || !before.outlines.isEmpty {
            for section in outlines.keys where before.outlines[section] == nil { setOutline(nil, for: section) }
            for (section, outline) in before.outlines { setOutline(outline, for: section) }
        }
        cellProvider = before.cellProvider
        supplementaryProviders = before.supplementaryProviders
        layout = before.layout
        expansionScope = before.expansionScope
    }
}

extension StateModel {
    /// Undoes changes newest first (`undos` in the order they were made): the state becomes what it was
    /// before the oldest. Usage is recounted once. O(what the changes did + data sources).
    func undo(_ undos: [ChangeUndo]) {
        guard !undos.isEmpty else { return }
        for undo in undos.reversed() {
            switch undo.step {
            case .nothing:
                break
            case .created(let name):
                dataSources[name] = nil
            case .dropped(let model):
                dataSources[model.name] = model
            case .changed(let model, let before):
                model.restore(before)
            case .registered(let key):
                registrations[key] = nil
                registrationOrder.removeAll { $0 == key }
            case .unregistered(let registration, let position):
                registrations[registration.key] = registration
                registrationOrder.insert(registration.key, at: min(position, registrationOrder.count))
            case .replaced(let registration):
                registrations[registration.key] = registration
            }
        }
        recountUsage()
    }
}
