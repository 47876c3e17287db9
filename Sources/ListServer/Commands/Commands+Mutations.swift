import DiffableCore
import ListEngine
import ListStore
import ListWire

/// One snapshot-vocabulary command as the router documents it; what it reads is `EditCodec`'s, shared
/// with the stored log. Shared by the commands themselves and by the operations of `batch`.
struct EditCommand: Sendable {
    let name: String
    let summary: String
    let arguments: [ArgumentSpec]
    /// What `EditCodec` reads it as (resolved once).
    let kind: EditCodec.Kind

    init(name: String, summary: String, arguments: [ArgumentSpec]) {
        self.name = name
        self.summary = summary
        self.arguments = arguments
        kind = EditCodec.Kind(rawValue: name)!
    }

    /// Reads the edit (`EditCodec.decode`).
    func parse(_ arguments: inout Arguments) throws(WireError) -> SnapshotEdit {
        try EditCodec.decode(kind, &arguments)
    }
}

let editCommands: [EditCommand] = [
    EditCommand(
        name: "appendSections", summary: "Adds sections at the end (creates the data source if needed).",
        arguments: [ArgumentSpec("sections", "[section]", required: true, "Identifiers, or {id, data} objects.")]
    ),
    EditCommand(
        name: "insertSections", summary: "Inserts sections before or after an existing section.",
        arguments: [
            ArgumentSpec("sections", "[section]", required: true, "Identifiers, or {id, data} objects."),
            ArgumentSpec("beforeSection", "string", "Insert before this section (or give afterSection)."),
            ArgumentSpec("afterSection", "string", "Insert after this section."),
        ]
    ),
    EditCommand(
        name: "deleteSections", summary: "Deletes sections with their items; unknown ones are ignored with a warning.",
        arguments: [ArgumentSpec("sections", "[string]", required: true, "Section identifiers.")]
    ),
    EditCommand(
        name: "moveSection", summary: "Moves a section before or after another.",
        arguments: [
            ArgumentSpec("section", "string", required: true, "The section to move."),
            ArgumentSpec("beforeSection", "string", "Move before this section (or give afterSection)."),
            ArgumentSpec("afterSection", "string", "Move after this section."),
        ]
    ),
    EditCommand(
        name: "reloadSections", summary: "Reloads sections (views dequeue their cells again).",
        arguments: [ArgumentSpec("sections", "[string]", required: true, "Section identifiers.")]
    ),
    EditCommand(
        name: "updateSections", summary: "Replaces section payloads; changed sections are reloaded.",
        arguments: [ArgumentSpec("sections", "[section]", required: true, "{id, data} objects.")]
    ),
    EditCommand(
        name: "appendItems",
        summary: "Appends items to a section, or to the last section; existing items are moved there with a warning.",
        arguments: [
            ArgumentSpec("items", "[item]", required: true, "Identifiers, or {id, data} objects."),
            ArgumentSpec("toSection", "string", "The section; the last one when absent."),
        ]
    ),
    EditCommand(
        name: "insertItems", summary: "Inserts items before or after an existing item, in its section.",
        arguments: [
            ArgumentSpec("items", "[item]", required: true, "Identifiers, or {id, data} objects."),
            ArgumentSpec("beforeItem", "string", "Insert before this item (or give afterItem)."),
            ArgumentSpec("afterItem", "string", "Insert after this item."),
        ]
    ),
    EditCommand(
        name: "deleteItems", summary: "Deletes items; unknown ones are ignored with a warning.",
        arguments: [ArgumentSpec("items", "[string]", required: true, "Item identifiers.")]
    ),
    EditCommand(
        name: "deleteAllItems", summary: "Deletes every item and every section (as UIKit does).", arguments: []
    ),
    EditCommand(
        name: "moveItem", summary: "Moves an item before or after another item, possibly into another section.",
        arguments: [
            ArgumentSpec("item", "string", required: true, "The item to move."),
            ArgumentSpec("beforeItem", "string", "Move before this item (or give afterItem)."),
            ArgumentSpec("afterItem", "string", "Move after this item."),
        ]
    ),
    EditCommand(
        name: "reloadItems", summary: "Reloads items: views dequeue new cells for them.",
        arguments: [ArgumentSpec("items", "[string]", required: true, "Item identifiers.")]
    ),
    EditCommand(
        name: "reconfigureItems", summary: "Reconfigures items: views configure the same cells again.",
        arguments: [ArgumentSpec("items", "[string]", required: true, "Item identifiers.")]
    ),
    EditCommand(
        name: "updateItems", summary: "Replaces item payloads; items whose payload changed are reconfigured.",
        arguments: [ArgumentSpec("items", "[item]", required: true, "{id, data} objects.")]
    ),
]

/// The arguments every mutation takes.
let mutationArguments = [
    ArgumentSpec("dataSource", "string", required: true, "The data source."),
    ArgumentSpec("ifVersion", "integer", "Apply only if the data source is at this version (else version-conflict)."),
    ArgumentSpec(
        "animatingDifferences", "boolean",
        "false: views apply the changes without animation (UIKit's apply(_:animatingDifferences:)); default true."),
]

/// What every mutation reads first: the data source, the version it must be at, and whether views animate.
struct MutationTarget {
    let dataSource: String
    let ifVersion: Int?
    let animatingDifferences: Bool

    init(_ arguments: inout Arguments) throws(WireError) {
        dataSource = try arguments.string("dataSource")
        ifVersion = try arguments.optionalInt("ifVersion", in: Arguments.countRange)
        animatingDifferences = try arguments.optionalBool("animatingDifferences") ?? true
    }
}

extension CommandRouter {
    static var mutationCommands: [Command] {
        var commands = editCommands.map { edit in
            Command(
                name: edit.name, summary: edit.summary, arguments: mutationArguments + edit.arguments,
                result: "{version, changes, unchanged?, warnings?}", effect: .mutates
            ) { arguments, _ throws(WireError) in
                let target = try MutationTarget(&arguments)
                let snapshotEdit = try edit.parse(&arguments)
                let creates = edit.name == "appendSections"
                return { context throws(WireError) in
                    try commitMutation(
                        .dataSource(name: target.dataSource, ifVersion: target.ifVersion, createAs: creates ? .fresh : nil, .edit(snapshotEdit)), context,
                        animatingDifferences: target.animatingDifferences)
                }
            }
        }
        commands += [applyCommand, batchCommand] + outlineCommands + sectionSnapshotCommands
        return commands
    }

    /// `apply`: replace the whole snapshot; the changes are the diff (or "reload everything").
    static var applyCommand: Command {
        Command(
            name: "apply",
            summary: "Replaces the data source's snapshot (creating the data source if needed) and returns the diff.",
            arguments: mutationArguments + [
                ArgumentSpec("snapshot", "{sections: [{id, data?, items}]}", required: true, "The new snapshot."),
                ArgumentSpec("reloadData", "boolean", "Skip the diff: views reload everything (applySnapshotUsingReloadData)."),
            ],
            result: "{version, changes}", effect: .mutates
        ) { arguments, _ throws(WireError) in
            let target = try MutationTarget(&arguments)
            let (name, ifVersion) = (target.dataSource, target.ifVersion)
            let sections = try arguments.snapshot("snapshot")
            let reloadData = try arguments.optionalBool("reloadData") ?? false
            return { context throws(WireError) in
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
                    return try commitMutation(
                        .dataSource(name: name, ifVersion: ifVersion, createAs: .fresh, .replaceSnapshot(prepared.snapshot, reloadData: reloadData)),
                        context, known: prepared.known, animatingDifferences: target.animatingDifferences)
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
                return try commitMutation(
                    .dataSource(name: name, ifVersion: ifVersion, createAs: .fresh, .replaceSnapshot(new, reloadData: reloadData)), context,
                    animatingDifferences: target.animatingDifferences)
            }
        }
    }

    /// `batch`: several snapshot edits as one transaction.
    static var batchCommand: Command {
        Command(
            name: "batch",
            summary: "Applies several mutations as one transaction: one version, one changes value, all or nothing.",
            arguments: mutationArguments + [
                ArgumentSpec(
                    "operations", "[{cmd, …}]", required: true,
                    "Mutations without dataSource: " + editCommands.map(\.name).joined(separator: ", ") + "."),
            ],
            result: "{version, changes, unchanged?, warnings?}", effect: .mutates
        ) { arguments, context throws(WireError) in
            let target = try MutationTarget(&arguments)
            let operations = try arguments.array("operations")
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
                guard let edit = editCommands.first(where: { $0.name == command }) else {
                    throw WireError(.invalidArgument, "operations[\(index)]: \"\(command)\" cannot be batched.")
                }
                var operationArguments = Arguments(members)
                do throws(WireError) {
                    let snapshotEdit = try edit.parse(&operationArguments)
                    try operationArguments.finish()
                    edits.append(snapshotEdit)
                } catch {
                    throw WireError(error.code, "operations[\(index)]: \(error.message)")
                }
            }
            return { context throws(WireError) in
                try commitMutation(
                    .dataSource(name: target.dataSource, ifVersion: target.ifVersion, createAs: nil, .batch(edits)), context,
                    animatingDifferences: target.animatingDifferences)
            }
        }
    }

    /// Commits a change to a data source's snapshot or outlines and replies with its new version, its
    /// staged changes (marked `"animatingDifferences": false` when so asked) and any warnings.
    static func commitMutation(
        _ change: StateChange, _ context: CommandContext, known: KnownChanges? = nil, rehearsal: Rehearsal? = nil, mayRehearse: Bool = true,
        animatingDifferences: Bool = true
    ) throws(WireError) -> CommandResult {
        if mayRehearse, rehearsal == nil, let rehearsed = rehearsedOffLoop(change, context, animatingDifferences: animatingDifferences) { return rehearsed }
        let committed = try context.state.commit(
            change, connection: context.connection, allocator: context.allocator, known: known, rehearsal: rehearsal,
            animatingDifferences: animatingDifferences)
        let outcome = committed.outcome
        return committed.result(
            mutation: MutationReply(
                version: outcome.version ?? 0, changesJSON: committed.changesJSON, changes: outcome.changes, reloadData: outcome.reloadData,
                animatingDifferences: animatingDifferences, warnings: outcome.warnings, unchanged: outcome.unchanged))
    }
}

/// A mutation's reply: `{"version":…,"changes":…,"warnings"?:[…]}`.
struct MutationReply {
    var version: Int
    /// The bytes the event carries, when it was made (the same value, encoded once).
    var changesJSON: ArraySlice<UInt8>?
    var changes: StagedChanges
    var reloadData: Bool
    var animatingDifferences: Bool
    var warnings: [SnapshotWarning]
    /// The change changed nothing: `version` is the current one, and no event was sent.
    var unchanged = false

    func write(into writer: inout JSONWriter) {
        writer.key(literal: "version")
        writer.int(version)
        writer.key(literal: "changes")
        if let changesJSON {
            writer.raw(changesJSON)
        } else {
            writer.changes(changes, reloadData: reloadData, animatingDifferences: animatingDifferences)
        }
        if unchanged {
            writer.key(literal: "unchanged")
            writer.bool(true)
        }
        if !warnings.isEmpty {
            writer.key("warnings")
            writer.beginArray()
            for warning in warnings {
                var members: [String: JSONValue] = [
                    "code": .string(warning.code.rawValue), "message": .string(warning.message),
                    "identifiers": .array(warning.identifiers.map { .string($0) }),
                ]
                members.merge(warning.details) { own, _ in own }
                writer.value(.object(members))
            }
            writer.endArray()
        }
    }
}
