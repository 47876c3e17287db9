import DiffableCore
import ListEngine
import ListStore
import ListWire

/// A snapshot-vocabulary command (`appendItems`, `moveSection`…): the mutation's target, then the
/// edit's own arguments, declared once in `EditDeclarations.swift` (shared with `batch`'s operations
/// and the stored log).
struct EditMutation<Edit: EditDeclaration>: MutationDeclaration {
    var target: MutationTarget
    var edit: Edit

    static var about: CommandAbout { CommandAbout(Edit.kind.rawValue, Edit.summary, result: "{version, changes, unchanged?, warnings?}") }

    init() {
        target = MutationTarget()
        edit = Edit()
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        try CommandRouter.commitMutation(
            .dataSource(
                name: target.dataSource, ifVersion: target.expectedVersion, createAs: Edit.kind == .appendSections ? .fresh : nil, .edit(try edit.edit())),
            context, animatingDifferences: target.animates)
    }
}

/// The edits that are wire commands of their own (and operations of `batch`), in `describe`'s order.
let editCommands: [EditCodec.Kind] = EditCodec.Kind.allCases.filter { $0 != .replaceItems }

extension EditCodec.Kind {
    /// The wire command's name.
    var name: String { rawValue }
}

/// `apply`: replace the whole snapshot; the changes are the diff (or "reload everything").
struct ApplyCommand: MutationDeclaration {
    static let about = CommandAbout("apply", "Replaces the data source's snapshot (creating the data source if needed) and returns the diff.", result: "{version, changes}")
    var target: MutationTarget
    @Arg("The new snapshot.") var snapshot: SnapshotArgument
    @Arg("Skip the diff: views reload everything (applySnapshotUsingReloadData).") var reloadData: Bool?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (name, ifVersion, reloadData) = (target.dataSource, target.expectedVersion, reloadData ?? false)
        let sections = snapshot.sections
        let limit = context.state.configuration.maximumItemsPerDataSource
        let count = sections.reduce(0) { $0 + $1.items.count }
        if count > limit {
            throw WireError(.limitExceeded, "The snapshot has \(count) items; the limit is \(limit).")
        }
        // A data source the caller may not read is built against as a missing one: the commit
        // refuses it as one, after the same work.
        let current = context.state.visibleDataSource(name, to: context.connection)?.model
        if let prepared = context.prepared, prepared.dataSource == name, prepared.applies(to: current) {
            // Built and diffed off the loop against this very version (a large request).
            return try CommandRouter.commitMutation(
                .dataSource(name: name, ifVersion: ifVersion, createAs: .fresh, .replaceSnapshot(prepared.snapshot, reloadData: reloadData)),
                context, known: prepared.known, animatingDifferences: target.animates)
        }
        let new: Snapshot
        do {
            // Built on the current snapshot (when there is one): the items kept are hashed once.
            if let current = current?.snapshot {
                new = try Snapshot(sections, reusing: current)
            } else {
                new = try Snapshot(sections)
            }
        } catch let error as SnapshotError {
            throw WireError(error)
        } catch {
            throw WireError(.internal, "\(error)")
        }
        return try CommandRouter.commitMutation(
            .dataSource(name: name, ifVersion: ifVersion, createAs: .fresh, .replaceSnapshot(new, reloadData: reloadData)), context,
            animatingDifferences: target.animates)
    }
}

/// `batch`: several snapshot edits as one transaction.
struct BatchCommand: MutationDeclaration {
    static let about = CommandAbout("batch", "Applies several mutations as one transaction: one version, one changes value, all or nothing.", result: "{version, changes, unchanged?, warnings?}")
    var target: MutationTarget
    @Arg var operations: [JSONValue]
    /// The operations, read (by `validate`).
    @Prepared private var edits: [SnapshotEdit]?

    init() {
        target = MutationTarget()
        _operations = Arg(
            "Mutations without dataSource: " + editCommands.map(\.name).joined(separator: ", ") + ".", type: "[{cmd, …}]")
    }

    mutating func validate(_ context: CommandContext) throws(WireError) {
        let limit = context.state.configuration.maximumBatchOperations
        if operations.count > limit {
            throw WireError(.limitExceeded, "The batch has \(operations.count) operations; the limit is \(limit).")
        }
        var edits: [SnapshotEdit] = []
        edits.reserveCapacity(operations.count)
        for (index, operation) in operations.enumerated() {
            guard case .object(var members) = operation, case .string(let command)? = members.removeValue(forKey: "cmd") else {
                throw WireError(.invalidArgument, "operations[\(index)] must be an object with a string \"cmd\".")
            }
            guard let kind = EditCodec.Kind(rawValue: command), editCommands.contains(kind) else {
                throw WireError(.invalidArgument, "operations[\(index)]: \"\(command)\" cannot be batched.")
            }
            var operationArguments = Arguments(members)
            do throws(WireError) {
                let snapshotEdit = try EditCodec.decode(kind, &operationArguments)
                try operationArguments.finish(declared: kind.argumentNames)
                edits.append(snapshotEdit)
            } catch {
                throw WireError(error.code, "operations[\(index)]: \(error.message)")
            }
        }
        self.edits = edits
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        try CommandRouter.commitMutation(
            .dataSource(name: target.dataSource, ifVersion: target.expectedVersion, createAs: nil, .batch(edits ?? [])), context,
            animatingDifferences: target.animates)
    }
}

extension CommandRouter {
    static var mutationCommands: [Command] {
        let edits: [Command] = editCommands.map { kind in kind.visit(EditMutationCommand()) }
        return edits + [Command(ApplyCommand.self), Command(BatchCommand.self)] + outlineCommands + sectionSnapshotCommands
    }

    /// Commits a change to a data source's snapshot or outlines and replies with its new version, its
    /// staged changes (marked `"animatingDifferences": false` when so asked) and any warnings.
    static func commitMutation(
        _ change: StateChange, _ context: CommandContext, known: KnownChanges? = nil, rehearsal: Rehearsal? = nil, mayRehearse: Bool = true,
        animatingDifferences: Bool = true
    ) throws(WireError) -> CommandResult {
        if mayRehearse, rehearsal == nil, let rehearsed = rehearsedOffLoop(change, context, animatingDifferences: animatingDifferences) { return rehearsed }
        return try context.state.commit(
            change, connection: context.connection, allocator: context.allocator, known: known, rehearsal: rehearsal,
            animatingDifferences: animatingDifferences
        ) { applied in
            let outcome = applied.outcome
            return CommandResult(
                reply: .mutation(
                    MutationReply(
                        version: outcome.version ?? 0, changesJSON: applied.changesJSON, changes: outcome.changes, reloadData: outcome.reloadData,
                        animatingDifferences: animatingDifferences, warnings: outcome.warnings, unchanged: outcome.unchanged)))
        }
    }
}

/// The wire command of an edit (`EditMutation`), made for its concrete declaration (so its decoding and
/// its run are specialized for it).
private struct EditMutationCommand: EditDeclarationVisitor {
    func visit<Edit: EditDeclaration>(_: Edit.Type) -> Command { Command(EditMutation<Edit>.self) }
}
