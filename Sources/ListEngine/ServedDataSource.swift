import DiffableCore
import ListLayout
import ListStore
import CellCore

/// One named data source as the engine serves it: its state and the events of its recent versions,
/// both written only by `StateEngine` (their setters are internal to this module). The server
/// subclasses it to attach its views (see `StateEngine.init(retention:makeServed:)`).
open class ServedDataSource {
    /// The data source's state. Replaced (not only changed) when the engine serves it as read from
    /// the store, or undoes a failed write.
    public final internal(set) var model: DataSourceModel
    /// The events of recent versions, for views that resume (`attach` with `fromVersion`).
    public final internal(set) var retained: RetainedEvents

    public init(model: DataSourceModel, retained: RetainedEvents) {
        self.model = model
        self.retained = retained
    }

    /// Whether anything would receive this data source's events now. The engine does not encode the
    /// event of a huge change that nothing receives and that is too large to retain.
    open var hasViews: Bool { false }

    public final var name: String { model.name }
    public final var incarnation: String { model.incarnation }
    public final var snapshot: Snapshot { model.snapshot }
    public final var version: Int { model.version }
    public final var outlines: [String: SectionSnapshot] { model.outlines }
    public final var cellProvider: CellProvider? { model.cellProvider }
    public final var supplementaryProviders: [String: CellProvider] { model.supplementaryProviders }
    public final var layout: LayoutDescription { model.layout }
    public final var expansionScope: ExpansionScope { model.expansionScope }

    /// The `changes` event of this data source's current version (see `ViewEvent.changes`).
    public final func changesEvent(changesJSON: [UInt8]) -> [UInt8] {
        ViewEvent.changes(dataSource: name, version: version, changesJSON: changesJSON)
    }
}
