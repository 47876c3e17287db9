import CellCore
import DiffableCore
import ListLayout
import ListStore
import ListWire

/// listd's state that lasts: the data sources and the cell registrations.
///
/// `apply(_:limits:)` is the only way to change it: it validates a change against the current state and
/// either applies all of it or throws and changes nothing. Confined to one thread (the server's event
/// loop); no I/O.
public final class StateModel {
    public internal(set) var dataSources: [String: DataSourceModel] = [:]
    /// Cell registrations, by key (owner and name: `Registration.key`), and their keys in creation order.
    public internal(set) var registrations: [String: Registration] = [:]
    public internal(set) var registrationOrder: [String] = []
    /// What each user owns, by uid (kept up to date by every change; recounted on load).
    private(set) var usageByOwner: [UInt32: OwnerUsage] = [:]
    /// The bytes listd holds because of each user, by part (`maxBytesPerUser` counts all of them): the
    /// model charges its own parts with every change; the engine the change log; the server views' cells
    /// and expansion copies.
    public let accounts = UserAccounts()

    public init() {}

    /// What `owner` owns now: data sources, the items in them, registrations.
    ///
    /// - Complexity: O(1).
    public func usage(of owner: UInt32) -> OwnerUsage { usageByOwner[owner] ?? OwnerUsage() }

    /// The bytes of identifiers and payloads `owner`'s data sources store (the account's `data` part).
    ///
    /// - Complexity: O(1).
    public func storedBytes(of owner: UInt32) -> Int { accounts.chargedBytes(of: AccountHolder(uid: owner))[.data] }

    /// Every user's stored bytes of identifiers and payloads, by uid (users storing nothing left out).
    public var storedBytesByOwner: [UInt32: Int] {
        var bytes: [UInt32: Int] = [:]
        for (holder, account) in accounts.all where !holder.isRelay && account[.data] > 0 { bytes[holder.uid] = account[.data] }
        return bytes
    }

    /// Recounts every owner's usage from the state (after the state was replaced wholesale).
    func recountUsage() {
        var usage: [UInt32: OwnerUsage] = [:]
        accounts.resetModelParts()
        for dataSource in dataSources.values {
            chargeParts(of: dataSource, sign: 1)
            usage[dataSource.owner, default: OwnerUsage()].dataSources += 1
            usage[dataSource.owner, default: OwnerUsage()].items += dataSource.storedItemCount
        }
        for registration in registrations.values {
            usage[registration.owner, default: OwnerUsage()].registrations += 1
            accounts.charge(AccountHolder(uid: registration.owner), .registrations, registration.storedBytes)
        }
        usageByOwner = usage
    }

    /// Adds (`sign` 1) or removes (-1) what `dataSource` holds to its owner's account.
    func chargeParts(of dataSource: DataSourceModel, sign: Int) {
        let owner = AccountHolder(uid: dataSource.owner)
        accounts.charge(owner, .data, sign * dataSource.storedBytes)
        accounts.charge(owner, .layouts, sign * dataSource.layoutBytes)
        accounts.charge(owner, .cellProviders, sign * dataSource.providerBytes)
    }

    func adjustBytes(of owner: UInt32, by delta: Int) {
        accounts.charge(AccountHolder(uid: owner), .data, delta)
    }

    func adjustUsage(of owner: UInt32, dataSources: Int = 0, items: Int = 0, registrations: Int = 0) {
        var usage = usageByOwner[owner] ?? OwnerUsage()
        usage.dataSources += dataSources
        usage.items += items
        usage.registrations += registrations
        usageByOwner[owner] = usage == OwnerUsage() ? nil : usage
    }

    /// The error for a data source that does not exist (for a change, with how to make one). The access
    /// policy answers the same for one a user may not even read, so that user cannot tell the two apart.
    public static func notFound(_ name: String, forChange: Bool) -> WireError {
        WireError(
            .dataSourceNotFound,
            forChange
                ? "Data source \"\(name)\" does not exist; apply, appendSections and applySectionSnapshot create one, other changes need it to exist."
                : "Data source \"\(name)\" does not exist.")
    }

    /// Validates `change` against the state and applies it, all or nothing. With `recordingUndo`, the
    /// outcome carries what undoes the change (`ChangeUndo`, for `undo(_:)`). `knownChanges` is the diff
    /// of a `replaceSnapshot` computed beforehand against the data source as it is now (the caller
    /// checked its version): it is taken as the outcome's changes instead of diffing again.
    ///
    /// - Complexity: that of the operation (an edit costs what `Snapshot.perform` costs; no whole-state
    ///   copy, also when recording its undo).
    @usableFromInline
    func apply(_ change: StateChange, limits: ChangeLimits, recordingUndo: Bool = false, knownChanges: StagedChanges? = nil) throws(WireError)
        -> ChangeOutcome
    {
        switch change {
        case .createDataSource(let name, let incarnation, let content):
            if dataSources[name] != nil { throw WireError(.dataSourceExists, "Data source \"\(name)\" already exists.") }
            try checkCanCreate(name, owner: content.owner, limits)
            try checkQuota(addingItems: content.snapshot.numberOfItems, owner: content.owner, limits)
            let bytes = content.snapshot.storedBytes + DataSourceModel.storedBytes(of: content.outlines)
            try checkBytes(replacing: 0, with: bytes, owner: content.owner, limits)
            let dataSource = DataSourceModel(name: name, incarnation: incarnation, content: content)
            try accounts.check(
                AccountHolder(uid: content.owner), adding: dataSource.layoutBytes + dataSource.providerBytes, to: .layouts,
                limit: limits.quota.maximumBytes)
            dataSources[name] = dataSource
            adjustUsage(of: content.owner, dataSources: 1, items: content.snapshot.numberOfItems)
            chargeParts(of: dataSource, sign: 1)
            var outcome = ChangeOutcome()
            outcome.version = content.version
            outcome.createdDataSource = true
            if recordingUndo { outcome.undo = ChangeUndo(step: .created(dataSource: name)) }
            return outcome
        case .dropDataSource(let name):
            guard let dropped = dataSources.removeValue(forKey: name) else {
                throw WireError(.dataSourceNotFound, "Data source \"\(name)\" does not exist.")
            }
            adjustUsage(of: dropped.owner, dataSources: -1, items: -dropped.storedItemCount)
            chargeParts(of: dropped, sign: -1)
            var outcome = ChangeOutcome()
            outcome.version = dropped.version
            if recordingUndo { outcome.undo = ChangeUndo(step: .dropped(dropped)) }
            return outcome
        case .dataSource(let name, let ifVersion, let creation, let operation):
            return try apply(
                operation, to: name, ifVersion: ifVersion, createAs: creation, limits: limits, recordingUndo: recordingUndo, knownChanges: knownChanges)
        case .register(let registration):
            return try applyRegister(registration, limits: limits, recordingUndo: recordingUndo)
        case .replaceRegistration(let registration):
            return try applyReplace(registration, limits: limits, recordingUndo: recordingUndo)
        case .unregister(let name, let owner):
            return try applyUnregister(name: name, owner: owner, recordingUndo: recordingUndo)
        }
    }

    // MARK: Data sources

    private func apply(
        _ operation: DataSourceOperation, to name: String, ifVersion: Int?, createAs creation: DataSourceCreation?, limits: ChangeLimits,
        recordingUndo: Bool, knownChanges: StagedChanges?
    ) throws(WireError) -> ChangeOutcome {
        try checkIdentifiers(of: operation, limits)
        let dataSource: DataSourceModel
        var created = false
        if let existing = dataSources[name] {
            dataSource = existing
        } else if let creation {
            try checkCanCreate(name, owner: creation.owner, limits)
            dataSource = DataSourceModel(name: name, incarnation: creation.incarnation, content: DataSourceContent(owner: creation.owner))
            created = true
        } else {
            // Only changes that make sense on an empty data source create one: the others name a
            // section or an item a new data source would not have (and a typo must not make a new one).
            throw Self.notFound(name, forChange: true)
        }
        if let ifVersion, ifVersion != dataSource.version {
            throw WireError(.versionConflict, "Data source \"\(name)\" is at version \(dataSource.version), not \(ifVersion).")
        }
        let itemsBefore = dataSource.storedItemCount
        let bytesBefore = dataSource.storedBytes
        let (layoutBytesBefore, providerBytesBefore) = (dataSource.layoutBytes, dataSource.providerBytes)
        let picks = CellPicks(before: operation, in: dataSource)
        if case .replaceSnapshot(let new, _) = operation {
            try checkBytes(replacing: dataSource.snapshot.storedBytes, with: new.storedBytes, owner: dataSource.owner, limits)
        } else if operation.mayAddBytes {
            try checkBytes(replacing: 0, with: 1, owner: dataSource.owner, limits)
        }
        var outcome: ChangeOutcome
        if recordingUndo && !created {
            outcome = try performRecordingUndo(operation, on: dataSource, limits: limits, knownChanges: knownChanges)
        } else {
            outcome = try perform(operation, on: dataSource, limits: limits, knownChanges: knownChanges)
            if recordingUndo { outcome.undo = ChangeUndo(step: .created(dataSource: name)) }
        }
        if created { dataSources[name] = dataSource }
        if case .replaceSnapshot = operation {
            let (warnings, changed) = dataSource.reconcileOutlinesWithSnapshot()
            outcome.warnings.append(contentsOf: warnings)
            outcome.changedUnseen = outcome.changedUnseen || changed
        }
        picks?.reloadRepicked(&outcome, in: dataSource)
        if limits.omitsEmptyVersions, !created, outcome.changesNothing {
            // Nothing to store or send: the current version answers, marked unchanged.
            outcome.unchanged = true
            outcome.version = dataSource.version
            return outcome
        }
        dataSource.version += 1
        adjustUsage(of: dataSource.owner, dataSources: created ? 1 : 0, items: dataSource.storedItemCount - itemsBefore)
        adjustBytes(of: dataSource.owner, by: dataSource.storedBytes - bytesBefore)
        accounts.charge(AccountHolder(uid: dataSource.owner), .layouts, dataSource.layoutBytes - layoutBytesBefore)
        accounts.charge(AccountHolder(uid: dataSource.owner), .cellProviders, dataSource.providerBytes - providerBytesBefore)
        outcome.version = dataSource.version
        outcome.createdDataSource = created
        return outcome
    }

    /// `perform`, keeping in the outcome what undoes it: the inverses of its snapshot edits (recorded
    /// as they are made), or the snapshot it replaced, and the parts it may set.
    private func performRecordingUndo(
        _ operation: DataSourceOperation, on dataSource: DataSourceModel, limits: ChangeLimits, knownChanges: StagedChanges?
    ) throws(WireError) -> ChangeOutcome {
        let snapshot: ChangeUndo.SnapshotBefore
        switch operation {
        case .replaceSnapshot: snapshot = .replaced(dataSource.snapshot)
        case .setLayout, .setCellProvider, .setExpansionScope: snapshot = .unchanged
        case .edit, .batch, .replaceOutline, .setExpansion: snapshot = .edited(SnapshotUndo())
        }
        var before = dataSource.before(snapshot: snapshot)
        guard case .edited = snapshot else {
            var outcome = try perform(operation, on: dataSource, limits: limits, knownChanges: knownChanges)
            outcome.undo = ChangeUndo(step: .changed(dataSource, before: before))
            return outcome
        }
        dataSource.snapshot.beginRecordingUndo()
        do {
            var outcome = try perform(operation, on: dataSource, limits: limits)
            before.snapshot = .edited(dataSource.snapshot.endRecordingUndo())
            outcome.undo = ChangeUndo(step: .changed(dataSource, before: before))
            return outcome
        } catch {
            // Whatever a failing operation did is undone too (an operation checks before it changes
            // anything, so this is normally empty).
            let partial = dataSource.snapshot.endRecordingUndo()
            dataSource.snapshot.undo(partial)
            throw error
        }
    }

    /// Performs one operation on `dataSource`; a failing operation changes nothing.
    private func perform(
        _ operation: DataSourceOperation, on dataSource: DataSourceModel, limits: ChangeLimits, knownChanges: StagedChanges? = nil
    ) throws(WireError) -> ChangeOutcome {
        var outcome = ChangeOutcome()
        switch operation {
        case .edit(let edit):
            try checkRoom(for: edit.addedItemCount, in: dataSource, limits)
            // The result comes back as a value (a captured `var` would be boxed on the heap per edit).
            let result = try snapshotOperation { () throws in try dataSource.performKeepingOutlines(edit) }
            outcome.changes = result.outcome.changes
            outcome.warnings = result.outcome.warnings
            outcome.changedUnseen = result.outlinesChanged
        case .batch(let edits):
            try checkRoom(for: edits.reduce(0) { $0 + $1.addedItemCount }, in: dataSource, limits)
            do {
                let result = try dataSource.performKeepingOutlines(edits, asBatch: true)
                outcome.changes = result.outcome.changes
                outcome.warnings = result.outcome.warnings
                outcome.changedUnseen = result.outlinesChanged
            } catch let error as BatchError {
                let wire = WireError(error.error)
                throw WireError(wire.code, "operations[\(error.index)]: \(wire.message)")
            } catch {
                throw WireError(.internal, "\(error)")
            }
        case .replaceSnapshot(let new, let reloadData):
            if new.numberOfItems > limits.maximumItemsPerDataSource {
                throw WireError(.limitExceeded, "The snapshot has \(new.numberOfItems) items; the limit is \(limits.maximumItemsPerDataSource).")
            }
            try checkQuota(addingItems: new.numberOfItems - dataSource.snapshot.numberOfItems, owner: dataSource.owner, limits)
            outcome.changes = reloadData ? StagedChanges() : knownChanges ?? new.difference(from: dataSource.snapshot)
            outcome.reloadData = reloadData
            outcome.changedUnseen = reloadData
            outcome.retired = dataSource.snapshot
            dataSource.snapshot = new
        case .replaceOutline(let section, let outline):
            try checkItemsHeldElsewhere(outline, section: section, in: dataSource)
            outcome = try replaceOutline(of: section, in: dataSource, limits: limits) { _ in outline }
        case .setExpansion(let section, let items, let expanded):
            outcome = try replaceOutline(of: section, in: dataSource, limits: limits) { current throws(WireError) in
                guard var outline = current else { throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.") }
                let unknown = items.filter { !outline.contains($0) }
                if !unknown.isEmpty {
                    throw WireError(
                        .itemNotFound,
                        "Items \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")) are not in the outline of section \"\(section)\".")
                }
                if expanded { outline.expand(items) } else { outline.collapse(items) }
                return outline
            }
        case .setLayout(let layout):
            try checkBytes(
                replacing: dataSource.layoutBytes, with: DataSourceModel.layoutBytes(of: layout), owner: dataSource.owner, limits, part: .layouts)
            outcome.changedUnseen = dataSource.layout != layout
            dataSource.layout = layout
        case .setCellProvider(let provider, let elementKind):
            // Names are looked up in the data source owner's namespace (or the one a reference names).
            if limits.checksRegistrations { try checkRegistrations(of: provider, elementKind: elementKind, dataSourceOwner: dataSource.owner) }
            let replaced = elementKind.map { dataSource.supplementaryProviders[$0] } ?? dataSource.cellProvider
            try checkBytes(
                replacing: DataSourceModel.providerBytes(of: replaced, elementKind: elementKind),
                with: DataSourceModel.providerBytes(of: provider, elementKind: elementKind), owner: dataSource.owner, limits, part: .cellProviders)
            if let elementKind {
                outcome.changedUnseen = dataSource.supplementaryProviders[elementKind] != provider
                dataSource.supplementaryProviders[elementKind] = provider
            } else {
                outcome.changedUnseen = dataSource.cellProvider != provider
                // Items the new rules give another registration are reloaded (their cells come from it);
                // views keep the others, and what they dequeue from now on follows the new rules.
                outcome.changes = CellPicks.reloads(of: dataSource, from: dataSource.cellProvider, to: provider)
                dataSource.cellProvider = provider
            }
        case .setExpansionScope(let scope):
            // The data source's snapshot stays; views with an expansion of their own are brought to the
            // shared one by the server when the scope becomes shared.
            outcome.changedUnseen = dataSource.expansionScope != scope
            dataSource.expansionScope = scope
        }
        return outcome
    }

    /// Replaces a section's outline with `transform(current)` and its items with the outline's visible
    /// items. Items visible before and after whose expansion or depth changed are reconfigured in a last
    /// stage (their disclosure or indentation shows it).
    private func replaceOutline(
        of section: String, in dataSource: DataSourceModel, limits: ChangeLimits,
        _ transform: (SectionSnapshot?) throws(WireError) -> SectionSnapshot
    ) throws(WireError) -> ChangeOutcome {
        let previous = dataSource.outline(of: section)
        let outline = try transform(previous)
        // Collapsed items are held too: the whole outline counts against the limits.
        try checkRoom(for: outline.count, in: dataSource, limits)
        var result = try snapshotOperation { () throws in
            try dataSource.snapshot.perform(.replaceItems(inSection: section, with: outline.visibleItems))
        }
        let outlineChanged = dataSource.outlines[section] != outline
        if outlineChanged { dataSource.setOutline(outline, for: section) }
        var reconfigures = ChangeStage()
        if let previous {
            let previousLevels = Dictionary(previous.visibleLevels, uniquingKeysWith: { first, _ in first })
            for (item, level) in outline.visibleLevels {
                guard let previousLevel = previousLevels[item],
                    previousLevel != level || (try? previous.isExpanded(item)) != (try? outline.isExpanded(item)),
                    let path = dataSource.snapshot.indexPath(ofItem: item)
                else { continue }
                reconfigures.itemReconfigures.append(ItemChange(indexPath: path, item: Item(item, data: outline.data(of: item) ?? .null)))
            }
        }
        reconfigures.itemReconfigures.sort { $0.indexPath < $1.indexPath }
        if !reconfigures.isEmpty { result.changes.stages.append(reconfigures) }
        var outcome = ChangeOutcome()
        outcome.changes = result.changes
        outcome.warnings = result.warnings
        outcome.changedUnseen = outlineChanged
        return outcome
    }

    /// Runs a snapshot operation, turning its errors into wire errors.
    private func snapshotOperation<Value>(_ body: () throws -> Value) throws(WireError) -> Value {
        do {
            return try body()
        } catch let error as SnapshotError {
            throw WireError(error)
        } catch {
            throw WireError(.internal, "\(error)")
        }
    }

    /// The data source has room for `addedItems` more (at most), and its owner's quota too.
    private func checkRoom(for addedItems: Int, in dataSource: DataSourceModel, _ limits: ChangeLimits) throws(WireError) {
        let limit = limits.maximumItemsPerDataSource
        if addedItems > 0 && dataSource.storedItemCount > limit - addedItems {
            throw WireError(.limitExceeded, "Data source \"\(dataSource.name)\" would pass its limit of \(limit) items.")
        }
        try checkQuota(addingItems: addedItems, owner: dataSource.owner, limits)
    }

    /// Refuses a change that would store `new` bytes where `old` are now, for a user whose stored bytes
    /// would pass `maxBytesPerUser` (only growing is refused; a change whose size is not known before it
    /// runs passes `1` for "some", so a user at the quota may only remove).
    func checkBytes(replacing old: Int, with new: Int, owner: UInt32, _ limits: ChangeLimits, part: AccountPart = .data) throws(WireError) {
        guard OwnerQuota.applies(to: owner) else { return }
        try accounts.check(AccountHolder(uid: owner), adding: new, releasing: old, to: part, limit: limits.quota.maximumBytes)
    }

    /// `owner` may own `addedItems` more items (`maxItemsPerUser`).
    func checkQuota(addingItems addedItems: Int, owner: UInt32, _ limits: ChangeLimits) throws(WireError) {
        let limit = limits.quota.maximumItems
        guard addedItems > 0, limit < .max, OwnerQuota.applies(to: owner) else { return }
        let owned = usage(of: owner).items
        if owned > limit - addedItems {
            throw WireError(
                .quotaExceeded,
                "User \(owner) owns \(owned) items; \(addedItems) more would pass the per-user quota of \(limit) (maxItemsPerUser).",
                details: ["quota": "maxItemsPerUser", "uid": .int(Int(owner)), "limit": .int(limit)])
        }
    }

    private func checkCanCreate(_ name: String, owner: UInt32, _ limits: ChangeLimits) throws(WireError) {
        if name.isEmpty || name.utf8.count > limits.maximumIdentifierBytes {
            throw WireError(.invalidArgument, "A data source name must have 1 to \(limits.maximumIdentifierBytes) bytes.")
        }
        if limits.maximumIdentifierBytes < .max, let error = ControlCharacters.error("data source", name) { throw error }
        if dataSources.count >= limits.maximumDataSources {
            throw WireError(.limitExceeded, "listd already holds \(dataSources.count) data sources, its limit.")
        }
        let owned = usage(of: owner).dataSources
        if OwnerQuota.applies(to: owner), owned >= limits.quota.maximumDataSources {
            throw WireError(
                .quotaExceeded, "User \(owner) owns \(owned) data sources, the per-user quota (maxDataSourcesPerUser).",
                details: ["quota": "maxDataSourcesPerUser", "uid": .int(Int(owner)), "limit": .int(limits.quota.maximumDataSources)])
        }
    }

    /// New identifiers: at most the byte limit, and no control characters.
    private func checkIdentifiers(_ ids: some Sequence<String>, _ limits: ChangeLimits, kind: String) throws(WireError) {
        for id in ids {
            if let error = Self.identifierError(id, limits, kind: kind) { throw error }
        }
    }

    /// Why an identifier is refused (longer than the limit, or holding a control character), or `nil`.
    private static func identifierError(_ id: String, _ limits: ChangeLimits, kind: String) -> WireError? {
        let limit = limits.maximumIdentifierBytes
        if id.utf8.count > limit {
            return WireError(.limitExceeded, "Identifier \"\(ControlCharacters.escaped(id.prefix(40)))…\" is longer than \(limit) bytes.")
        }
        return ControlCharacters.error(kind, id)
    }

    private func checkIdentifiers(of operation: DataSourceOperation, _ limits: ChangeLimits) throws(WireError) {
        guard limits.maximumIdentifierBytes < .max else { return }
        switch operation {
        case .edit(let edit): try checkIdentifiers(of: edit, limits)
        case .batch(let edits): for edit in edits { try checkIdentifiers(of: edit, limits) }
        case .replaceSnapshot(let snapshot, _):
            try checkIdentifiers(snapshot.sectionIdentifiers, limits, kind: "section")
            // The first unacceptable item (in order) fails as the whole list would: no copy of 100k ids.
            var refusal: WireError?
            _ = snapshot.firstItemIdentifier { id in
                refusal = Self.identifierError(id, limits, kind: "item")
                return refusal != nil
            }
            if let refusal { throw refusal }
        case .replaceOutline(let section, let outline):
            try checkIdentifiers([section], limits, kind: "section")
            try checkIdentifiers(outline.items.lazy.map(\.id), limits, kind: "item")
        case .setExpansion, .setLayout, .setCellProvider, .setExpansionScope:
            break
        }
    }

    private func checkIdentifiers(of edit: SnapshotEdit, _ limits: ChangeLimits) throws(WireError) {
        switch edit {
        case .appendSections(let sections), .insertSections(let sections, _), .updateSections(let sections):
            try checkIdentifiers(sections.lazy.map(\.id), limits, kind: "section")
        case .appendItems(let items, _), .insertItems(let items, _), .updateItems(let items), .replaceItems(_, let items):
            try checkIdentifiers(items.lazy.map(\.id), limits, kind: "item")
        default:
            break  // these only name identifiers that must already exist
        }
    }
}

extension SnapshotEdit {
    /// How many items the edit may add (for the item limit).
    var addedItemCount: Int {
        switch self {
        case .appendItems(let items, _), .insertItems(let items, _): return items.count
        default: return 0
        }
    }
}
