import CellCore
import DiffableCore
import ListStore

/// Keeps every cell the registration its data source's rules pick now. UIKit configures a reconfigured
/// item's existing cell again and forbids dequeuing another registration while doing so; when a change
/// makes the rules (`CellProvider`) pick another registration for an item (a payload a rule matches on,
/// a move into a section a rule names, other rules), the item is reloaded instead: views put the old
/// cell back in its pool and dequeue a new one from the registration picked now.
///
/// Made before a change from the items it may repick (their registration then, O(items named)), and
/// asked after it.
struct CellPicks {
    private let provider: CellProvider
    /// The registration picked before the change, for each row the change may repick.
    private var picked: [String: RegistrationReference?] = [:]
    /// The snapshot a whole new one replaces (its reconfigured rows are the candidates).
    private var replaced: Snapshot?

    /// `nil` when the change cannot repick a row: the data source has no rules, or the change gives no
    /// row another payload or section.
    init?(before operation: DataSourceOperation, in dataSource: DataSourceModel) {
        guard let provider = dataSource.cellProvider, !provider.rules.isEmpty else { return nil }
        self.provider = provider
        switch operation {
        case .edit(let edit):
            record(edit.repickCandidates, of: dataSource.snapshot)
        case .batch(let edits):
            for edit in edits { record(edit.repickCandidates, of: dataSource.snapshot) }
        case .replaceSnapshot:
            replaced = dataSource.snapshot
        default:
            return nil
        }
        if picked.isEmpty && replaced == nil { return nil }
    }

    private mutating func record(_ ids: [String], of snapshot: Snapshot) {
        for id in ids where picked[id] == nil {
            guard let section = snapshot.sectionIdentifier(containingItem: id), let data = snapshot.data(ofItem: id) else { continue }
            picked[id] = provider.registration(for: Item(id, data: data), inSection: section)
        }
    }

    /// Turns the change's reconfigures of rows now picked otherwise into reloads, in a last stage of their
    /// own at their final positions (rows moved into another registration's reach too), with a
    /// `reconfigure-became-reload` warning naming them. O(candidates + changes).
    func reloadRepicked(_ outcome: inout ChangeOutcome, in dataSource: DataSourceModel) {
        guard !outcome.reloadData, dataSource.cellProvider == provider else { return }
        var candidates = picked
        let snapshot = dataSource.snapshot
        if let replaced {
            // The diff's reconfigured rows, and its moved ones (its moves come last: their targets are
            // final positions), as they were picked in the snapshot replaced.
            var ids: [String] = []
            for stage in outcome.changes.stages {
                ids.append(contentsOf: stage.itemReconfigures.map(\.item.id))
                ids.append(contentsOf: stage.itemMoves.compactMap { snapshot.itemIdentifier(at: $0.to) })
            }
            for id in ids where candidates[id] == nil {
                guard let section = replaced.sectionIdentifier(containingItem: id), let data = replaced.data(ofItem: id) else { continue }
                candidates[id] = provider.registration(for: Item(id, data: data), inSection: section)
            }
        }
        var reloads: [ItemChange] = []
        for (id, before) in candidates {
            guard let path = snapshot.indexPath(ofItem: id), let section = snapshot.sectionIdentifier(at: path.section),
                let data = snapshot.data(ofItem: id)
            else { continue }
            let item = Item(id, data: data)
            if provider.registration(for: item, inSection: section) != before { reloads.append(ItemChange(indexPath: path, item: item)) }
        }
        guard !reloads.isEmpty else { return }
        reloads.sort { $0.indexPath < $1.indexPath }
        let ids = Set(reloads.map(\.item.id))
        for index in outcome.changes.stages.indices { outcome.changes.stages[index].itemReconfigures.removeAll { ids.contains($0.item.id) } }
        outcome.changes.stages.removeAll(where: \.isEmpty)
        var stage = ChangeStage()
        stage.itemReloads = reloads
        outcome.changes.stages.append(stage)
        let names = reloads.map(\.item.id)
        outcome.warnings.append(
            SnapshotWarning(
                .reconfigureBecameReload,
                "The cell provider's rules pick another registration for \(quotedIdentifiers(names)) now: reloaded instead of reconfigured.",
                identifiers: names, details: ["items": .array(names.map { .string($0) })]))
    }

    /// The rows that `new` rules give another registration than `old` did, reloaded in one stage. Nothing
    /// when either is missing (without rules no cell was dequeued; without new ones none can be). O(rows).
    static func reloads(of dataSource: DataSourceModel, from old: CellProvider?, to new: CellProvider) -> StagedChanges {
        guard let old, old != new else { return StagedChanges() }
        let snapshot = dataSource.snapshot
        var stage = ChangeStage()
        for sectionIndex in 0..<snapshot.numberOfSections {
            guard let section = snapshot.sectionIdentifier(at: sectionIndex), let count = try? snapshot.numberOfItems(inSection: section) else { continue }
            for index in 0..<count {
                let path = IndexPath(section: sectionIndex, item: index)
                guard let (id, payload) = snapshot.packedItem(at: path) else { continue }
                let before = old.registration(forItem: id, payload: payload, inSection: section)
                guard new.registration(forItem: id, payload: payload, inSection: section) != before else { continue }
                stage.itemReloads.append(ItemChange(indexPath: path, item: Item(id, data: payload.value)))
            }
        }
        return StagedChanges(stages: stage.isEmpty ? [] : [stage])
    }
}

extension SnapshotEdit {
    /// The existing rows the edit may give another payload or section (and so another registration).
    fileprivate var repickCandidates: [String] {
        switch self {
        case .updateItems(let items), .appendItems(let items, _), .insertItems(let items, _), .replaceItems(_, let items): return items.map(\.id)
        case .moveItem(let id, _): return [id]
        default: return []
        }
    }
}
