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

    /// Reads `{"op": …, …}` (see PROTOCOL.md, "Outlines"): the members besides `op` are the arguments
    /// of the op's declaration (`OutlineAppend` and the rest below), and an error names the operation
    /// (`field`) first.
    static func read(_ value: JSONValue, field: String) throws(WireError) -> SectionSnapshotEdit {
        guard case .object(var members) = value, case .string(let op)? = members.removeValue(forKey: "op") else {
            throw WireError(.invalidArgument, "\(field) must be an object with a string \"op\".")
        }
        guard let operation = Self.operations.first(where: { $0.name == op })?.declaration else {
            throw WireError(.invalidArgument, "\(field): unknown op \"\(op)\" (\(Self.operationNames)).")
        }
        var arguments = Arguments(members)
        do throws(WireError) {
            let edit = try operation.init(arguments: &arguments).edit(op: op, arguments)
            try arguments.finish(declared: ArgumentDocumentation.of(operation.init()).map(\.name))
            return edit
        } catch {
            throw WireError(error.code, "\(field): \(error.message)", details: error.details)
        }
    }

    /// The ops, in the protocol's order, with their declarations.
    static let operations: [(name: String, declaration: any OutlineOperation.Type)] = [
        ("append", OutlineAppend.self), ("insert", OutlineInsert.self), ("delete", OutlineItems.self), ("deleteAll", OutlineDeleteAll.self),
        ("replaceChildren", OutlineReplaceChildren.self), ("expand", OutlineItems.self), ("collapse", OutlineItems.self),
    ]

    /// "append, insert, …": the ops' names, for `describe` and errors.
    static var operationNames: String { operations.map(\.name).joined(separator: ", ") }

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

/// An operation of `editSectionSnapshot`: its members besides `op` are its declaration's arguments.
protocol OutlineOperation: ArgumentDecodable {
    /// The documentation instance (its arguments' names, for "did you mean").
    init()
    /// The edit the operation `op` makes; `arguments` are the operation's, read.
    func edit(op: String, _ arguments: Arguments) throws(WireError) -> SectionSnapshotEdit
}

/// `editSectionSnapshot`'s `append`: `items` as children of `parent`, or at the top level.
struct OutlineAppend: OutlineOperation {
    @Arg("The items to append.") var items: [Item]
    @Arg("Their parent (absent: the top level).") var parent: String?

    func edit(op: String, _ arguments: Arguments) -> SectionSnapshotEdit { .append(items, parent: parent) }
}

/// `editSectionSnapshot`'s `insert`: `items`, or a whole outline (`snapshot`), before or after an item.
struct OutlineInsert: OutlineOperation {
    @Arg("The item to insert before (one of before and after).") var before: String?
    @Arg("The item to insert after (one of before and after).") var after: String?
    @Arg("An outline to insert (or items).") var snapshot: SectionSnapshot?
    @Arg("Items to insert, as siblings (or a snapshot).") var items: [Item]?

    /// The edit; `arguments` name a misspelt `items` when neither `items` nor `snapshot` is given.
    func edit(op: String, _ arguments: Arguments) throws(WireError) -> SectionSnapshotEdit {
        guard (before == nil) != (after == nil), let destination = before ?? after else {
            throw WireError(.invalidArgument, "insert needs exactly one of \"before\" and \"after\".")
        }
        switch (snapshot, items) {
        case (let snapshot?, nil): return .insertSnapshot(snapshot, destination: destination, after: after != nil)
        case (nil, let items?): return .insertItems(items, destination: destination, after: after != nil)
        case (nil, nil): throw arguments.missing("items")
        case (_?, _?): throw WireError(.invalidArgument, "Give either \"items\" or \"snapshot\", not both.")
        }
    }
}

/// `editSectionSnapshot`'s `delete`, `expand` and `collapse`: the items they act on.
struct OutlineItems: OutlineOperation {
    @Arg("The items.") var items: [String]

    func edit(op: String, _ arguments: Arguments) -> SectionSnapshotEdit {
        switch op {
        case "expand": .expand(items)
        case "collapse": .collapse(items)
        default: .delete(items)
        }
    }
}

/// `editSectionSnapshot`'s `deleteAll`: no arguments.
struct OutlineDeleteAll: OutlineOperation {
    func edit(op: String, _ arguments: Arguments) -> SectionSnapshotEdit { .deleteAll }
}

/// `editSectionSnapshot`'s `replaceChildren`: `parent`'s children replaced by `snapshot`'s outline.
struct OutlineReplaceChildren: OutlineOperation {
    @Arg("The item whose children are replaced.") var parent: String
    @Arg("The new children, as an outline.") var snapshot: SectionSnapshot

    func edit(op: String, _ arguments: Arguments) -> SectionSnapshotEdit { .replaceChildren(parent: parent, snapshot) }
}

/// `editSectionSnapshot`: a section's outline edited in place, the edits in order as one change.
struct EditSectionSnapshotCommand: MutationDeclaration {
    static let about = CommandAbout("editSectionSnapshot", "Edits a section's outline in place (\(SectionSnapshotEdit.operationNames)), all or nothing, one version.", result: "{version, changes, unchanged?, warnings?}")
    var target: MutationTarget
    @Arg("The section (appended when missing; its items become a flat outline when it has none).") var section: String
    @Arg("The edits, in order.", type: "[{op, …}]") var operations: [JSONValue]
    /// The operations, read (by `validate`).
    @Prepared private var edits: [SectionSnapshotEdit]?

    mutating func validate(_ context: CommandContext) throws(WireError) {
        let limit = context.state.configuration.maximumBatchOperations
        if operations.count > limit {
            throw WireError(.limitExceeded, "The edit has \(operations.count) operations; the limit is \(limit).")
        }
        var edits: [SectionSnapshotEdit] = []
        for (index, value) in operations.enumerated() { edits.append(try SectionSnapshotEdit.read(value, field: "operations[\(index)]")) }
        self.edits = edits
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        // Who may, and at which version, first: the edits below must not tell anything about an
        // outline the caller may not see, nor answer an out-of-date edit with anything but a conflict.
        let unchecked = StateChange.dataSource(
            name: target.dataSource, ifVersion: target.expectedVersion, createAs: .fresh, .replaceOutline(section: section, SectionSnapshot()))
        try context.state.authorize(unchecked, by: context.connection.identity)
        let current = context.state.model.dataSources[target.dataSource]
        if let ifVersion = target.expectedVersion, let current, current.version != ifVersion {
            throw WireError(.versionConflict, "Data source \"\(target.dataSource)\" is at version \(current.version), not \(ifVersion).")
        }
        // The outline as it is now (UIKit's snapshot(for:): the stored one, else the section's items
        // flat), edited, and stored whole through the one commit path (on the loop, so nothing
        // comes in between reading and committing it).
        var outline = current?.outline(of: section) ?? SectionSnapshot()
        for (index, edit) in (edits ?? []).enumerated() {
            do {
                try edit.apply(to: &outline)
            } catch let error as SnapshotError {
                let wire = WireError(error)
                throw WireError(wire.code, "operations[\(index)]: \(wire.message)")
            } catch {
                throw WireError(.internal, "\(error)")
            }
        }
        return try CommandRouter.commitMutation(
            .dataSource(name: target.dataSource, ifVersion: target.expectedVersion, createAs: .fresh, .replaceOutline(section: section, outline)),
            context, mayRehearse: false, animatingDifferences: target.animates)
    }
}

/// `outlineItem`: where an item sits in its section's outline (UIKit's parent, level, isExpanded,
/// isVisible, and the children).
struct OutlineItemQuery: CommandDeclaration {
    static let about = CommandAbout("outlineItem", "An item's place in a section's outline: its parent, level, children, and whether it is expanded and visible.", result: "{version, item: {id, parent, level, expanded, visible, children} | null}")
    @Arg("The data source.") var dataSource: String
    @Arg("The section.") var section: String
    @Arg("The item.") var item: String
    @Arg("true: answer null when the outline does not contain it (UIKit's contains).") var nullIfMissing: Bool?
    @Arg("A view of the data source: expanded and visible as it shows them (its own expansion, with scope perView).") var view: String?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let dataSource = try context.dataSource(self.dataSource)
        guard var outline = dataSource.model.outline(of: section) else {
            throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
        }
        if let view { outline = CommandRouter.outlineAsShown(outline, section: section, by: try CommandRouter.view(view, context, dataSource: self.dataSource)) }
        guard outline.contains(item) else {
            if nullIfMissing ?? false { return CommandRouter.versioned(dataSource, "item", .null) }
            throw WireError(.itemNotFound, "Item identifier does not exist in the section snapshot of \"\(section)\": \"\(item)\".")
        }
        let parent = (try? outline.parent(of: item)) ?? nil
        let level = (try? outline.level(of: item)) ?? 0
        let expanded = (try? outline.isExpanded(item)) ?? false
        let visible = (try? outline.isVisible(item)) ?? false
        let children = (try? outline.children(of: item)) ?? []
        return CommandRouter.versioned(
            dataSource, "item",
            [
                "id": .string(item), "parent": parent.map { .string($0) } ?? .null, "level": .int(level), "expanded": .bool(expanded),
                "visible": .bool(visible), "children": .array(children.map { .string($0) }),
            ])
    }
}

extension CommandRouter {
    static var sectionSnapshotCommands: [Command] { [Command(EditSectionSnapshotCommand.self), Command(OutlineItemQuery.self)] }
}
