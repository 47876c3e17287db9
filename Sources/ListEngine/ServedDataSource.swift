import DiffableCore
import ListLayout
import ListStore
import CellCore

/// What a server attaches to each data source it serves (its views), made by the engine when it starts
/// serving the data source (see `StateEngine.init(retention:attach:)`).
public protocol DataSourceAttachment: AnyObject {
    /// Whether anything would receive this data source's events now. The engine does not encode the
    /// event of a huge change that nothing receives and that is too large to retain.
    var hasViews: Bool { get }
}

/// The attachment of an engine that serves no views (tools, tests, benchmarks).
public final class NoViews: DataSourceAttachment {
    public init() {}
    public var hasViews: Bool { false }
}

/// One named data source as the engine serves it: its state and the events of its recent versions,
/// both written only by `StateEngine` (their setters are internal to this module), with what the
/// server attached to it (`attachment`: its views), typed, so that nothing is cast back.
public final class ServedDataSource<Attachment: DataSourceAttachment> {
    /// The data source's state. Replaced (not only changed) when the engine serves it as read from
    /// the store, or undoes a failed write.
    public internal(set) var model: DataSourceModel
    /// The events of recent versions, for views that resume (`attach` with `fromVersion`), charged to the
    /// owner's account (`changeLog`) as they grow and shrink.
    public internal(set) var retained: RetainedEvents {
        didSet { chargeChangeLog() }
    }
    /// The account the retained events are charged to (the engine sets it when it serves the data source).
    var accounts: UserAccounts? {
        didSet { chargeChangeLog() }
    }
    /// The bytes of retained events charged so far.
    private var chargedChangeLogBytes = 0

    /// What the server attached to this data source (its views).
    public let attachment: Attachment

    init(model: DataSourceModel, retained: RetainedEvents, attachment: Attachment) {
        self.model = model
        self.retained = retained
        self.attachment = attachment
    }

    private func chargeChangeLog() {
        guard let accounts, retained.byteCount != chargedChangeLogBytes else { return }
        accounts.charge(AccountHolder(uid: model.owner), .changeLog, retained.byteCount - chargedChangeLogBytes)
        chargedChangeLogBytes = retained.byteCount
    }

    /// Keeps the event of `version` for views that resume (`nil`: that version's event is not kept).
    @usableFromInline
    func retain(_ version: Int, _ event: [UInt8]?) {
        retained.append(version, event)
    }

    /// Drops the oldest retained events while the owner's account is past `limit` (views resuming from
    /// before them get the whole snapshot); the newest version's event is dropped last.
    @usableFromInline
    func trimChangeLog(toQuota limit: Int) {
        let owner = AccountHolder(uid: model.owner)
        guard owner.isCharged, let accounts, limit < .max else { return }
        while retained.byteCount > 0, accounts.chargedBytes(of: owner).total > limit, retained.dropOldestVersion() {}
    }

    /// Stops charging the retained events (the data source is no longer served).
    func releaseChangeLog() {
        retained.removeAll()
    }

    /// Whether anything would receive this data source's events now (see `DataSourceAttachment`).
    public var hasViews: Bool { attachment.hasViews }

    public var name: String { model.name }
    public var incarnation: String { model.incarnation }
    public var snapshot: Snapshot { model.snapshot }
    public var version: Int { model.version }
    public var outlines: [String: SectionSnapshot] { model.outlines }
    public var cellProvider: CellProvider? { model.cellProvider }
    public var supplementaryProviders: [String: CellProvider] { model.supplementaryProviders }
    public var layout: LayoutDescription { model.layout }
    public var expansionScope: ExpansionScope { model.expansionScope }

    /// The `changes` event of this data source's current version (see `ViewEvent.changes`).
    public func changesEvent(changesJSON: [UInt8]) -> [UInt8] {
        ViewEvent.changes(dataSource: name, version: version, changesJSON: changesJSON)
    }
}
