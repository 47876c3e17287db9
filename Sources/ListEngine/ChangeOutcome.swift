import DiffableCore
import ListStore

/// What applying a change did, for the reply and for publishing it to views.
public struct ChangeOutcome: Sendable {
    /// The data source's version after the change (data-source changes and creation).
    public var version: Int?
    /// The staged changes views apply (empty for layout and cell provider changes).
    public var changes = StagedChanges()
    /// Views reload everything instead of applying `changes`.
    public var reloadData = false
    public var warnings: [SnapshotWarning] = []
    /// The data source did not exist before this change.
    public var createdDataSource = false
    /// `register` made a new registration (false when an identical one existed).
    public var createdRegistration = false
    /// `register` with `replace` gave a registration another definition.
    public var replacedRegistration = false
    /// A replaced snapshot: freeing a large one takes time the caller need not wait for.
    public var retired: Snapshot?
    /// What undoes the change (only when `apply` was asked to record it).
    public var undo: ChangeUndo?
    /// The change changed nothing (deleting unknown items, moving an item to where it is, applying the
    /// same snapshot, setting the same layout): no new version was made, nothing is stored or sent, and
    /// `version` is the current one.
    public var unchanged = false
    /// The change changed what `changes` does not show (an outline, a collapsed item, a layout, rules,
    /// the expansion scope).
    var changedUnseen = false

    public init() {}

    /// Whether the change left the data source as it was (nothing in `changes`, nothing else changed).
    var changesNothing: Bool { changes.isEmpty && !reloadData && !changedUnseen && !createdDataSource }
}

/// The limits a live change is checked against. Replaying what was accepted before checks none.
public struct ChangeLimits: Sendable {
    public var maximumDataSources: Int
    public var maximumItemsPerDataSource: Int
    public var maximumIdentifierBytes: Int
    public var maximumRegistrations: Int
    /// Per-user quotas, counted against the owner of what a change creates or fills.
    public var quota = OwnerQuota.unlimited
    /// Whether a cell provider must name existing registrations. Replaying does not check: a
    /// registration may have been deleted since (the provider then names one that is gone, as it did live).
    public var checksRegistrations = true
    /// Whether a change that changes nothing keeps the current version (live changes). Replaying what
    /// was stored makes every stored version again.
    public var omitsEmptyVersions = true

    public init(maximumDataSources: Int, maximumItemsPerDataSource: Int, maximumIdentifierBytes: Int, maximumRegistrations: Int) {
        self.maximumDataSources = maximumDataSources
        self.maximumItemsPerDataSource = maximumItemsPerDataSource
        self.maximumIdentifierBytes = maximumIdentifierBytes
        self.maximumRegistrations = maximumRegistrations
    }

    /// No limits: for replaying changes that were accepted under the limits of their time.
    public static let none: ChangeLimits = {
        var limits = ChangeLimits(maximumDataSources: .max, maximumItemsPerDataSource: .max, maximumIdentifierBytes: .max, maximumRegistrations: .max)
        limits.checksRegistrations = false
        limits.omitsEmptyVersions = false
        limits.quota = .unlimited
        return limits
    }()
}

/// How much one user may own: data sources, items in them, registrations. Root (uid 0) is exempt; the
/// global limits of `ChangeLimits` apply to everyone.
public struct OwnerQuota: Sendable, Equatable {
    public var maximumDataSources: Int
    public var maximumItems: Int
    public var maximumRegistrations: Int
    /// Bytes of identifiers and payloads stored in the user's data sources (`Snapshot.storedBytes`).
    /// A user at or past it may only remove; one change may carry it past by at most one request.
    public var maximumBytes: Int

    public init(maximumDataSources: Int, maximumItems: Int, maximumRegistrations: Int, maximumBytes: Int = .max) {
        self.maximumDataSources = maximumDataSources
        self.maximumItems = maximumItems
        self.maximumRegistrations = maximumRegistrations
        self.maximumBytes = maximumBytes
    }

    public static let unlimited = OwnerQuota(maximumDataSources: .max, maximumItems: .max, maximumRegistrations: .max)

    /// Whether the quota applies to `owner` (everyone but root).
    public static func applies(to owner: UInt32) -> Bool { owner != 0 }
}

/// What one user owns now (see `StateModel.usage(of:)`).
public struct OwnerUsage: Sendable, Equatable {
    public var dataSources = 0
    public var items = 0
    public var registrations = 0

    public init(dataSources: Int = 0, items: Int = 0, registrations: Int = 0) {
        self.dataSources = dataSources
        self.items = items
        self.registrations = registrations
    }
}
