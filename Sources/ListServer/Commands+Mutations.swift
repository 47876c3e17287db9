import DiffableCore
import ListWire

/// How one snapshot-vocabulary command reads its arguments into a `SnapshotEdit`. Shared by the
/// commands themselves and by the operations of `batch`.
struct EditCommand: Sendable {
    let name: String
    let summary: String
    let arguments: [ArgumentSpec]
    /// Reads the edit; also returns how many items it may add (for the item limit).
    let parse: @Sendable (inout Arguments) throws(WireError) -> (edit: SnapshotEdit, addedItems: Int)
}

private func placement(_ arguments: inout Arguments, _ before: String, _ after: String) throws(WireError) -> Placement {
    let (name, destination) = try arguments.oneOf(before, after)
    return name == before ? .before(destination) : .after(destination)
}

private func items(_ arguments: inout Arguments) throws(WireError) -> [Item] {
    try WireDecoding.items(arguments.array("items"), field: "items")
}

private func sections(_ arguments: inout Arguments) throws(WireError) -> [Section] {
    try WireDecoding.sections(arguments.array("sections"), field: "sections")
}

let editCommands: [EditCommand] = [
    EditCommand(
        name: "appendSections", summary: "Adds sections at the end (creates the data source if needed).",
        arguments: [ArgumentSpec("sections", "[section]", required: true, "Identifiers, or {id, data} objects.")]
    ) { arguments throws(WireError) in (.appendSections(try sections(&arguments)), 0) },
    EditCommand(
        name: "insertSections", summary: "Inserts sections before or after an existing section.",
        arguments: [
            ArgumentSpec("sections", "[section]", required: true, "Identifiers, or {id, data} objects."),
            ArgumentSpec("beforeSection", "string", "Insert before this section (or give afterSection)."),
            ArgumentSpec("afterSection", "string", "Insert after this section."),
        ]
    ) { arguments throws(WireError) in
        let new = try sections(&arguments)
        return (.insertSections(new, try placement(&arguments, "beforeSection", "afterSection")), 0)
    },
    EditCommand(
        name: "deleteSections", summary: "Deletes sections with their items; unknown ones are ignored with a warning.",
        arguments: [ArgumentSpec("sections", "[string]", required: true, "Section identifiers.")]
    ) { arguments throws(WireError) in (.deleteSections(try arguments.strings("sections")), 0) },
    EditCommand(
        name: "moveSection", summary: "Moves a section before or after another.",
        arguments: [
            ArgumentSpec("section", "string", required: true, "The section to move."),
            ArgumentSpec("beforeSection", "string", "Move before this section (or give afterSection)."),
            ArgumentSpec("afterSection", "string", "Move after this section."),
        ]
    ) { arguments throws(WireError) in
        let section = try arguments.string("section")
        return (.moveSection(section, try placement(&arguments, "beforeSection", "afterSection")), 0)
    },
    EditCommand(
        name: "reloadSections", summary: "Reloads sections (views dequeue their cells again).",
        arguments: [ArgumentSpec("sections", "[string]", required: true, "Section identifiers.")]
    ) { arguments throws(WireError) in (.reloadSections(try arguments.strings("sections")), 0) },
    EditCommand(
        name: "updateSections", summary: "Replaces section payloads; changed sections are reloaded.",
        arguments: [ArgumentSpec("sections", "[section]", required: true, "{id, data} objects.")]
    ) { arguments throws(WireError) in (.updateSections(try sections(&arguments)), 0) },
    EditCommand(
        name: "appendItems",
        summary: "Appends items to a section, or to the last section; existing items are moved there with a warning.",
        arguments: [
            ArgumentSpec("items", "[item]", required: true, "Identifiers, or {id, data} objects."),
            ArgumentSpec("toSection", "string", "The section; the last one when absent."),
        ]
    ) { arguments throws(WireError) in
        let new = try items(&arguments)
        return (.appendItems(new, toSection: try arguments.optionalString("toSection")), new.count)
    },
    EditCommand(
        name: "insertItems", summary: "Inserts items before or after an existing item, in its section.",
        arguments: [
            ArgumentSpec("items", "[item]", required: true, "Identifiers, or {id, data} objects."),
            ArgumentSpec("beforeItem", "string", "Insert before this item (or give afterItem)."),
            ArgumentSpec("afterItem", "string", "Insert after this item."),
        ]
    ) { arguments throws(WireError) in
        let new = try items(&arguments)
        return (.insertItems(new, try placement(&arguments, "beforeItem", "afterItem")), new.count)
    },
    EditCommand(
        name: "deleteItems", summary: "Deletes items; unknown ones are ignored with a warning.",
        arguments: [ArgumentSpec("items", "[string]", required: true, "Item identifiers.")]
    ) { arguments throws(WireError) in (.deleteItems(try arguments.strings("items")), 0) },
    EditCommand(
        name: "deleteAllItems", summary: "Deletes every item and every section (as UIKit does).", arguments: []
    ) { _ throws(WireError) in (.deleteAllItems, 0) },
    EditCommand(
        name: "moveItem", summary: "Moves an item before or after another item, possibly into another section.",
        arguments: [
            ArgumentSpec("item", "string", required: true, "The item to move."),
            ArgumentSpec("beforeItem", "string", "Move before this item (or give afterItem)."),
            ArgumentSpec("afterItem", "string", "Move after this item."),
        ]
    ) { arguments throws(WireError) in
        let item = try arguments.string("item")
        return (.moveItem(item, try placement(&arguments, "beforeItem", "afterItem")), 0)
    },
    EditCommand(
        name: "reloadItems", summary: "Reloads items: views dequeue new cells for them.",
        arguments: [ArgumentSpec("items", "[string]", required: true, "Item identifiers.")]
    ) { arguments throws(WireError) in (.reloadItems(try arguments.strings("items")), 0) },
    EditCommand(
        name: "reconfigureItems", summary: "Reconfigures items: views configure the same cells again.",
        arguments: [ArgumentSpec("items", "[string]", required: true, "Item identifiers.")]
    ) { arguments throws(WireError) in (.reconfigureItems(try arguments.strings("items")), 0) },
    EditCommand(
        name: "updateItems", summary: "Replaces item payloads; items whose payload changed are reconfigured.",
        arguments: [ArgumentSpec("items", "[item]", required: true, "{id, data} objects.")]
    ) { arguments throws(WireError) in (.updateItems(try items(&arguments)), 0) },
]

/// The arguments every mutation takes.
let mutationArguments = [
    ArgumentSpec("dataSource", "string", required: true, "The data source."),
    ArgumentSpec("ifVersion", "integer", "Apply only if the data source is at this version (else version-conflict)."),
]

/// What a mutation did to a data source.
struct MutationResult {
    var changes: StagedChanges
    var warnings: [SnapshotWarning] = []
    var reloadData = false
    /// A replaced snapshot, released only after the reply is on its way (freeing 100k items takes
    /// milliseconds that the caller need not wait for).
    var retired: Snapshot? = nil
}

extension CommandRouter {
    static var mutationCommands: [Command] {
        var commands = editCommands.map { edit in
            Command(
                name: edit.name, summary: edit.summary, arguments: mutationArguments + edit.arguments,
                result: "{version, changes, warnings?}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let ifVersion = try arguments.optionalInt("ifVersion")
                let (snapshotEdit, added) = try edit.parse(&arguments)
                return { context throws(WireError) in
                    try checkIdentifiers(of: snapshotEdit, context.state.configuration)
                    return try mutate(context, name, ifVersion: ifVersion, create: edit.name == "appendSections", addedItems: added) { dataSource throws(WireError) in
                        do {
                            let outcome = try dataSource.snapshot.perform(snapshotEdit)
                            return MutationResult(changes: outcome.changes, warnings: outcome.warnings)
                        } catch let error as SnapshotError {
                            throw WireError(error)
                        } catch {
                            throw WireError(.internal, "\(error)")
                        }
                    }
                }
            }
        }
        commands += [applyCommand, batchCommand] + outlineCommands
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
            result: "{version, changes}"
        ) { arguments, _ throws(WireError) in
            let name = try arguments.string("dataSource")
            let ifVersion = try arguments.optionalInt("ifVersion")
            let sections = try WireDecoding.snapshot(arguments.required("snapshot"), field: "snapshot")
            let reloadData = try arguments.optionalBool("reloadData") ?? false
            return { context throws(WireError) in
                let configuration = context.state.configuration
                let count = sections.reduce(0) { $0 + $1.items.count }
                if count > configuration.maximumItemsPerDataSource {
                    throw WireError(.limitExceeded, "The snapshot has \(count) items; the limit is \(configuration.maximumItemsPerDataSource).")
                }
                for (section, items) in sections {
                    try checkIdentifiers([section.id], configuration)
                    try checkIdentifiers(items.lazy.map(\.id), configuration)
                }
                let new: Snapshot
                do {
                    new = try Snapshot(sections)
                } catch let error as SnapshotError {
                    throw WireError(error)
                } catch {
                    throw WireError(.internal, "\(error)")
                }
                return try mutate(context, name, ifVersion: ifVersion, create: true, addedItems: 0) { dataSource throws(WireError) in
                    let changes = reloadData ? StagedChanges() : new.difference(from: dataSource.snapshot)
                    let retired = dataSource.snapshot
                    dataSource.snapshot = new
                    return MutationResult(changes: changes, reloadData: reloadData, retired: retired)
                }
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
            result: "{version, changes, warnings?}"
        ) { arguments, context throws(WireError) in
            let name = try arguments.string("dataSource")
            let ifVersion = try arguments.optionalInt("ifVersion")
            let operations = try arguments.array("operations")
            let limit = context.state.configuration.maximumBatchOperations
            if operations.count > limit {
                throw WireError(.limitExceeded, "The batch has \(operations.count) operations; the limit is \(limit).")
            }
            var edits: [SnapshotEdit] = []
            var added = 0
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
                    let (snapshotEdit, count) = try edit.parse(&operationArguments)
                    try operationArguments.finish()
                    edits.append(snapshotEdit)
                    added += count
                } catch {
                    throw WireError(error.code, "operations[\(index)]: \(error.message)")
                }
            }
            return { context throws(WireError) in
                for edit in edits { try checkIdentifiers(of: edit, context.state.configuration) }
                return try mutate(context, name, ifVersion: ifVersion, create: false, addedItems: added) { dataSource throws(WireError) in
                    do {
                        let outcome = try dataSource.snapshot.perform(edits)
                        return MutationResult(changes: outcome.changes, warnings: outcome.warnings)
                    } catch let error as BatchError {
                        let wire = WireError(error.error)
                        throw WireError(wire.code, "operations[\(error.index)]: \(wire.message)")
                    } catch {
                        throw WireError(.internal, "\(error)")
                    }
                }
            }
        }
    }

    /// Runs one accepted mutation of a data source: version check, limits, the change, the version bump,
    /// and the reply and event. A failing `body` must change nothing.
    static func mutate(
        _ context: CommandContext, _ name: String, ifVersion: Int?, create: Bool, addedItems: Int,
        _ body: (DataSource) throws(WireError) -> MutationResult
    ) throws(WireError) -> Execution {
        let state = context.state
        var created = false
        let dataSource: DataSource
        if let existing = state.dataSources[name] {
            dataSource = existing
        } else if create {
            try checkCanCreate(name, state)
            dataSource = DataSource(name: name)
            created = true
        } else {
            throw WireError(.dataSourceNotFound, "Data source \"\(name)\" does not exist.")
        }
        if let ifVersion, ifVersion != dataSource.version {
            throw WireError(.versionConflict, "Data source \"\(name)\" is at version \(dataSource.version), not \(ifVersion).")
        }
        let limit = state.configuration.maximumItemsPerDataSource
        if addedItems > 0 && dataSource.snapshot.numberOfItems + addedItems > limit {
            throw WireError(.limitExceeded, "Data source \"\(name)\" would pass its limit of \(limit) items.")
        }
        let result = try body(dataSource)
        if created { state.dataSources[name] = dataSource }
        let (version, event) = dataSource.commit(result.changes, reloadData: result.reloadData, allocator: context.allocator)
        return Execution(
            result: { writer in
                writer.key("version")
                writer.int(version)
                writer.key("changes")
                writer.changes(result.changes, reloadData: result.reloadData)
                if !result.warnings.isEmpty {
                    writer.key("warnings")
                    writer.beginArray()
                    for warning in result.warnings {
                        writer.value([
                            "code": .string(warning.code.rawValue), "message": .string(warning.message),
                            "identifiers": .array(warning.identifiers.map { .string($0) }),
                        ])
                    }
                    writer.endArray()
                }
            }, broadcast: event.map { (dataSource, $0) },
            afterReply: [
                { updateDisplayedCells(of: dataSource, after: result.changes, reloadData: result.reloadData, state: state) }
            ] + (result.retired.map { retired in [{ context.connection.releaseLater(retired) }] } ?? []))
    }

    static func checkCanCreate(_ name: String, _ state: ServerState) throws(WireError) {
        if name.isEmpty || name.utf8.count > state.configuration.maximumIdentifierBytes {
            throw WireError(.invalidArgument, "A data source name must have 1 to \(state.configuration.maximumIdentifierBytes) bytes.")
        }
        if state.dataSources.count >= state.configuration.maximumDataSources {
            throw WireError(.limitExceeded, "listd already holds \(state.dataSources.count) data sources, its limit.")
        }
    }

    static func checkIdentifiers(_ ids: some Sequence<String>, _ configuration: ServerConfiguration) throws(WireError) {
        let limit = configuration.maximumIdentifierBytes
        for id in ids where id.utf8.count > limit {
            throw WireError(.limitExceeded, "Identifier \"\(id.prefix(40))…\" is longer than \(limit) bytes.")
        }
    }

    static func checkIdentifiers(of edit: SnapshotEdit, _ configuration: ServerConfiguration) throws(WireError) {
        switch edit {
        case .appendSections(let sections), .insertSections(let sections, _), .updateSections(let sections):
            try checkIdentifiers(sections.lazy.map(\.id), configuration)
        case .appendItems(let items, _), .insertItems(let items, _), .updateItems(let items), .replaceItems(_, let items):
            try checkIdentifiers(items.lazy.map(\.id), configuration)
        default:
            break  // these only name identifiers that must already exist
        }
    }
}
