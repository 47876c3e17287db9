import DiffableCore
import ListEngine
import ListStore
import ListWire

/// One edit of a section snapshot, as `editSectionSnapshot` reads it: UIKit's
/// `NSDiffableDataSourceSectionSnapshot` methods.
enum SectionSnapshotEdit {
    case append([Item], parent: String?)
    case insertItems([Item], destination: String, after: Bool)
    case insertSnapshot(SectionSnapshot, destination: String, after: Bool)
    case delete([String])
    case deleteAll
    case replaceChildren(parent: String, SectionSnapshot)
    case expand([String])
    case collapse([String])

    /// Reads `{"op": …, …}` (see PROTOCOL.md, "Outlines").
    static func read(_ value: JSONValue, field: String) throws(WireError) -> SectionSnapshotEdit {
        guard case .object(let members) = value, case .string(let op)? = members["op"] else {
            throw WireError(.invalidArgument, "\(field) must be an object with a string \"op\".")
        }
        var arguments = Arguments(members.filter { $0.key != "op" })
        let edit: SectionSnapshotEdit
        switch op {
        case "append":
            edit = .append(try WireDecoding.items(arguments.array("items"), field: "\(field).items"), parent: try arguments.optionalString("parent"))
        case "insert":
            let before = try arguments.optionalString("before")
            let after = try arguments.optionalString("after")
            guard (before == nil) != (after == nil), let destination = before ?? after else {
                throw WireError(.invalidArgument, "\(field): insert needs exactly one of \"before\" and \"after\".")
            }
            if let outline = arguments.value("snapshot") {
                edit = .insertSnapshot(try WireDecoding.sectionSnapshot(outline, field: "\(field).snapshot"), destination: destination, after: after != nil)
            } else {
                edit = .insertItems(try WireDecoding.items(arguments.array("items"), field: "\(field).items"), destination: destination, after: after != nil)
            }
        case "delete": edit = .delete(try arguments.strings("items"))
        case "deleteAll": edit = .deleteAll
        case "replaceChildren":
            edit = .replaceChildren(
                parent: try arguments.string("parent"), try WireDecoding.sectionSnapshot(arguments.required("snapshot"), field: "\(field).snapshot"))
        case "expand": edit = .expand(try arguments.strings("items"))
        case "collapse": edit = .collapse(try arguments.strings("items"))
        default:
            throw WireError(
                .invalidArgument, "\(field): unknown op \"\(op)\" (append, insert, delete, deleteAll, replaceChildren, expand, collapse).")
        }
        do throws(WireError) {
            try arguments.finish()
        } catch {
            throw WireError(error.code, "\(field): \(error.message)")
        }
        return edit
    }

    /// Applies the edit to `outline`.
    func apply(to outline: inout SectionSnapshot) throws {
        switch self {
        case .append(let items, let parent): try outline.append(items, to: parent)
        case .insertItems(let items, let destination, let after):
            if after { try outline.insert(items, after: destination) } else { try outline.insert(items, before: destination) }
        case .insertSnapshot(let snapshot, let destination, let after):
            if after { try outline.insert(snapshot, after: destination) } else { try outline.insert(snapshot, before: destination) }
        case .delete(let items): try outline.delete(items)
        case .deleteAll: outline.deleteAll()
        case .replaceChildren(let parent, let snapshot): try outline.replace(childrenOf: parent, using: snapshot)
        case .expand(let items): outline.expand(items)
        case .collapse(let items): outline.collapse(items)
        }
    }
}

extension CommandRouter {
    static var sectionSnapshotCommands: [Command] { [editSectionSnapshotCommand, outlineItemQuery] }

    /// `editSectionSnapshot`: a section's outline edited in place, the edits in order as one change.
    static var editSectionSnapshotCommand: Command {
        Command(
            name: "editSectionSnapshot",
            summary: "Edits a section's outline in place (append, insert, delete, deleteAll, replaceChildren, expand, collapse), all or nothing, one version.",
            arguments: mutationArguments + [
                ArgumentSpec("section", "string", required: true, "The section (appended when missing; its items become a flat outline when it has none)."),
                ArgumentSpec("operations", "[{op, …}]", required: true, "The edits, in order."),
            ],
            result: "{version, changes, unchanged?, warnings?}", effect: .mutates
        ) { arguments, context throws(WireError) in
            let target = try MutationTarget(&arguments)
            let section = try arguments.string("section")
            let values = try arguments.array("operations")
            let limit = context.state.configuration.maximumBatchOperations
            if values.count > limit {
                throw WireError(.limitExceeded, "The edit has \(values.count) operations; the limit is \(limit).")
            }
            var edits: [SectionSnapshotEdit] = []
            for (index, value) in values.enumerated() { edits.append(try SectionSnapshotEdit.read(value, field: "operations[\(index)]")) }
            return { context throws(WireError) in
                // Who may, and at which version, first: the edits below must not tell anything about an
                // outline the caller may not see, nor answer an out-of-date edit with anything but a conflict.
                let unchecked = StateChange.dataSource(
                    name: target.dataSource, ifVersion: target.ifVersion, createAs: .fresh, .replaceOutline(section: section, SectionSnapshot()))
                try context.state.authorize(unchecked, by: context.connection.identity)
                let current = context.state.model.dataSources[target.dataSource]
                if let ifVersion = target.ifVersion, let current, current.version != ifVersion {
                    throw WireError(.versionConflict, "Data source \"\(target.dataSource)\" is at version \(current.version), not \(ifVersion).")
                }
                // The outline as it is now (UIKit's snapshot(for:): the stored one, else the section's items
                // flat), edited, and stored whole through the one commit path (on the loop, so nothing
                // comes in between reading and committing it).
                var outline = current?.outline(of: section) ?? SectionSnapshot()
                for (index, edit) in edits.enumerated() {
                    do {
                        try edit.apply(to: &outline)
                    } catch let error as SnapshotError {
                        let wire = WireError(error)
                        throw WireError(wire.code, "operations[\(index)]: \(wire.message)")
                    } catch {
                        throw WireError(.internal, "\(error)")
                    }
                }
                return try commitMutation(
                    .dataSource(name: target.dataSource, ifVersion: target.ifVersion, createAs: .fresh, .replaceOutline(section: section, outline)),
                    context, mayRehearse: false, animatingDifferences: target.animatingDifferences)
            }
        }
    }

    /// `outlineItem`: where an item sits in its section's outline (UIKit's parent, level, isExpanded,
    /// isVisible, and the children).
    static var outlineItemQuery: Command {
        Command(
            name: "outlineItem",
            summary: "An item's place in a section's outline: its parent, level, children, and whether it is expanded and visible.",
            arguments: [
                ArgumentSpec("dataSource", "string", required: true, "The data source."),
                ArgumentSpec("section", "string", required: true, "The section."),
                ArgumentSpec("item", "string", required: true, "The item."),
                ArgumentSpec("nullIfMissing", "boolean", "true: answer null when the outline does not contain it (UIKit's contains)."),
                ArgumentSpec("view", "string", "A view of the data source: expanded and visible as it shows them (its own expansion, with scope perView)."),
            ],
            result: "{version, item: {id, parent, level, expanded, visible, children} | null}"
        ) { arguments, _ throws(WireError) in
            let name = try arguments.string("dataSource")
            let section = try arguments.string("section")
            let item = try arguments.string("item")
            let nullIfMissing = try arguments.optionalBool("nullIfMissing") ?? false
            let viewName = try arguments.optionalString("view")
            return { context throws(WireError) in
                let dataSource = try context.dataSource(name)
                guard var outline = dataSource.model.outline(of: section) else {
                    throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
                }
                if let viewName { outline = outlineAsShown(outline, section: section, by: try view(viewName, context, dataSource: name)) }
                let version = dataSource.version
                guard outline.contains(item) else {
                    if nullIfMissing {
                        return CommandResult { writer in
                            writer.key("version")
                            writer.int(version)
                            writer.key("item")
                            writer.value(.null)
                        }
                    }
                    throw WireError(.itemNotFound, "Item identifier does not exist in the section snapshot of \"\(section)\": \"\(item)\".")
                }
                let parent = (try? outline.parent(of: item)) ?? nil
                let level = (try? outline.level(of: item)) ?? 0
                let expanded = (try? outline.isExpanded(item)) ?? false
                let visible = (try? outline.isVisible(item)) ?? false
                let children = (try? outline.children(of: item)) ?? []
                return CommandResult { writer in
                    writer.key("version")
                    writer.int(version)
                    writer.key("item")
                    writer.value([
                        "id": .string(item), "parent": parent.map { .string($0) } ?? .null, "level": .int(level), "expanded": .bool(expanded),
                        "visible": .bool(visible), "children": .array(children.map { .string($0) }),
                    ])
                }
            }
        }
    }
}
