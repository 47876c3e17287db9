import DiffableCore
import ListEngine
import ListStore
import ListWire

/// `reorder`: a view moves an item (a user dragged it), as UIKit's reordering: allowed where the
/// cell provider's rule for the item says `reorderable` (canReorderItem), committed as `moveItem`,
/// and told to the data source's owner as `didReorder` with the transaction (its staged changes).
struct ReorderCommand: CommandDeclaration {
    static let about = CommandAbout("reorder", "A view moves an item before or after another (reorderable by its cell provider rule); the owner gets didReorder.", result: "{version, changes}")
    static var effect: Command.Effect { .mutates }
    var target: ViewTarget
    @Arg("The item to move.") var item: String
    var placement: ItemPlacement
    @Arg("false: the other views apply the move without animation; default true.") var animatingDifferences: Bool?

    init() {
        target = ViewTarget()
        placement = ItemPlacement(verb: "Move")
    }

    func validate(_ context: CommandContext) throws(WireError) {
        guard (placement.beforeItem == nil) != (placement.afterItem == nil) else {
            throw WireError(.invalidArgument, "Give exactly one of \"beforeItem\" and \"afterItem\".")
        }
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (before, destination) = (placement.beforeItem, placement.beforeItem ?? placement.afterItem ?? "")
        let animating = animatingDifferences ?? true
        let view = try target.view(context)
        let dataSource = try context.dataSource(view.dataSource)
        let snapshot = dataSource.snapshot
        for shownHereOnly in [item, destination] where !snapshot.contains(item: shownHereOnly) && view.expansion?.projection.contains(item: shownHereOnly) == true {
            throw WireError(
                .invalidMove,
                "Item \"\(shownHereOnly)\" shows only in view \"\(view.name)\"'s own expansion: reorder moves items of the data source's snapshot (an outline's are moved with editSectionSnapshot).")
        }
        guard let from = snapshot.sectionIdentifier(containingItem: item), let data = snapshot.data(ofItem: item) else {
            throw WireError(.itemNotFound, "Item \"\(item)\" was not found in the snapshot.")
        }
        guard let to = snapshot.sectionIdentifier(containingItem: destination) else {
            throw WireError(.itemNotFound, "Item \"\(destination)\" was not found in the snapshot.")
        }
        let provider = dataSource.cellProvider
        guard provider?.canReorder(Item(item, data: data), inSection: from) == true else {
            throw WireError(.invalidMove, "Item \"\(item)\" cannot be reordered: no cell provider rule for it says \"reorderable\".")
        }
        guard provider?.canReorder(Item(item, data: data), inSection: to) == true else {
            throw WireError(.invalidMove, "Item \"\(item)\" cannot be moved into section \"\(to)\": the rule there does not say \"reorderable\".")
        }
        let change = StateChange.dataSource(
            name: dataSource.name, ifVersion: nil, createAs: nil, .edit(.moveItem(item, before != nil ? .before(destination) : .after(destination))))
        let (user, display) = (context.connection.identity.displayName, dataSource.display)
        let viewQueueLimit = context.state.configuration.maximumViewQueueBytes
        return try context.state.commit(change, connection: context.connection, allocator: context.allocator, animatingDifferences: animating) {
            [item, viewQueueLimit] applied in
            let version = applied.outcome.version ?? 0
            let changesJSON = applied.changesJSON ?? Self.encoded(applied.outcome.changes, animatingDifferences: animating)
            // The owner's handler (reorderingHandlers.didReorder), once the move is stored.
            let event = ViewEvent.didReorder(
                dataSource: dataSource.name, view: view.name, user: user, item: item, version: version, changes: changesJSON)
            return CommandResult(
                reply: .members { writer in
                    writer.key(literal: "version")
                    writer.int(version)
                    writer.key(literal: "changes")
                    writer.raw(changesJSON)
                }, afterReply: [{ display.send(event, viewQueueLimit: viewQueueLimit) }])
        }
    }

    /// The `changes` object of a move whose event was not made (no view is attached).
    private static func encoded(_ changes: StagedChanges, animatingDifferences: Bool) -> ArraySlice<UInt8> {
        var writer = JSONWriter(capacity: 128)
        writer.changes(changes, reloadData: false, animatingDifferences: animatingDifferences)
        return writer.bytes[...]
    }
}
