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
    /// The events of recent versions, for views that resume (`attach` with `fromVersion`), charged to the
    /// owner's account (`changeLog`) as they grow and shrink.
    public final internal(set) var retained: RetainedEvents {
        didSet { chargeChangeLog() }
    }
    /// The account the retained events are charged to (the engine sets it when it serves the data source).
    final var accounts: UserAccounts? {
        didSet { chargeChangeLog() }
    }
    /// The bytes of retained events charged so far.
    private final var chargedChangeLogBytes = 0

    public init(model: DataSourceModel, retained: RetainedEvents) {
        self.model = model
        self.retained = retained
    }

    private final func chargeChangeLog() {
        guard let accounts, retained.byteCount != chargedChangeLogBytes else { return }
        accounts.charge(AccountHolder(uid: model.owner), .changeLog, retained.byteCount - chargedChangeLogBytes)
        chargedChangeLogBytes = retained.byteCount
    }

    /// Drops the oldest retained events while the owner's account is past `limit` (views resuming from
    /// before them get the whole snapshot); the newest version's event is dropped last.
    final func trimChangeLog(toQuota limit: Int) {
        let owner = AccountHolder(uid: model.owner)
        guard owner.isCharged, let accounts, limit < .max else { return }
        while retained.byteCount > 0, accounts.chargedBytes(of: owner).total > limit, retained.dropOldestVersion() {}
    }

    /// Stops charging the retained events (the data source is no longer served).
    final func releaseChangeLog() {
        retained.removeAll()
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
