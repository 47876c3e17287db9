import DiffableCore
import ListEngine
import ListStore
import ListWire

extension CommandRouter {
    static var dataSourceCommands: [Command] {
        [
            Command(
                name: "createDataSource", summary: "Creates an empty data source.",
                arguments: [ArgumentSpec("dataSource", "string", required: true, "The new data source's name.")],
                result: "{dataSource, version}", effect: .mutates
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                return { context throws(WireError) in
                    try context.state.commit(
                        .createDataSource(name: name, incarnation: Incarnation.make(), content: DataSourceContent()), connection: context.connection
                    ).result(dataSource: name)
                }
            },
            Command(
                name: "dropDataSource", summary: "Deletes a data source; its views get a `dropped` event and are detached.",
                arguments: [ArgumentSpec("dataSource", "string", required: true, "The data source.")],
                result: "{dataSource, version}", effect: .mutates
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                return { context throws(WireError) in
                    try context.state.commit(.dropDataSource(name: name), connection: context.connection).result(dataSource: name)
                }
            },
            Command(
                name: "listDataSources",
                summary: "Lists the data sources this connection's user may read, with their versions, sizes, owners and the user's access.",
                arguments: [],
                result: "{dataSources: [{name, version, sections, items, views, owner, ownerName, access, expansionScope?}]}"
            ) { _, _ throws(WireError) in
                { context throws(WireError) in
                    let state = context.state
                    let identity = context.connection.identity
                    return CommandResult { writer in
                        writer.key("dataSources")
                        writer.beginArray()
                        for name in state.dataSources.keys.sorted() {
                            let dataSource = state.dataSources[name]!
                            let level = state.policy.access(of: identity, toDataSource: name, ownedBy: dataSource.model.owner).level
                            guard level >= .read else { continue }
                            var entry: [String: JSONValue] = [
                                "name": .string(name), "version": .int(dataSource.version),
                                "sections": .int(dataSource.snapshot.numberOfSections),
                                "items": .int(dataSource.snapshot.numberOfItems), "views": .int(dataSource.views.count),
                                "owner": .int(Int(dataSource.model.owner)), "ownerName": .string(state.userName(of: dataSource.model.owner)),
                                "access": .string(level.description),
                            ]
                            if dataSource.expansionScope == .perView { entry["expansionScope"] = .string(dataSource.expansionScope.rawValue) }
                            writer.value(.object(entry))
                        }
                        writer.endArray()
                    }
                }
            },
            accessCommand,
        ]
    }

    static var queryCommands: [Command] {
        let dataSourceArgument = ArgumentSpec("dataSource", "string", required: true, "The data source.")
        return [
            Command(
                name: "snapshot",
                summary: "The snapshot: every section with its items, or one section's items from offset (at most limit).",
                arguments: [
                    dataSourceArgument,
                    ArgumentSpec("section", "string", "Only this section."),
                    ArgumentSpec("offset", "integer", "With section: the first item (default 0)."),
                    ArgumentSpec("limit", "integer", "With section: at most this many items."),
                ],
                result: "{version, incarnation, sections: [{id, data?, items, count?}]}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let section = try arguments.optionalString("section")
                let offset = try arguments.optionalInt("offset", in: Arguments.countRange)
                let limit = try arguments.optionalInt("limit", in: Arguments.countRange)
                if section == nil && (offset != nil || limit != nil) {
                    throw WireError(.invalidArgument, "\"offset\" and \"limit\" need \"section\".")
                }
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    let snapshot = dataSource.snapshot
                    if let section, !snapshot.contains(section: section) {
                        throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
                    }
                    let version = dataSource.version
                    let incarnation = dataSource.incarnation
                    return CommandResult { writer in
                        writer.key("version")
                        writer.int(version)
                        writer.key("incarnation")
                        writer.string(incarnation)
                        writer.key("sections")
                        if let section {
                            let start = offset ?? 0
                            // Both are at most 2^53 − 1 (`Arguments.countRange`): the sum cannot overflow.
                            let range = start..<(limit.map { start + $0 } ?? Int.max)
                            writer.beginArray()
                            writeSection(snapshot, at: snapshot.index(ofSection: section)!, range: range, to: &writer)
                            writer.endArray()
                        } else {
                            writer.sections(of: snapshot)
                        }
                    }
                }
            },
            Command(
                name: "sectionSnapshot",
                summary: "A section as an outline: the stored section snapshot, or its items as a flat one; or one item's subtree.",
                arguments: [
                    dataSourceArgument, ArgumentSpec("section", "string", required: true, "The section."),
                    ArgumentSpec("parent", "string", "Only this item's subtree (UIKit's snapshot(of:includingParent:))."),
                    ArgumentSpec("includingParent", "boolean", "With parent: the parent itself as the root (default false: its children)."),
                    ArgumentSpec("view", "string", "A view of the data source: the expansion as it shows it (its own, with expansion scope perView)."),
                ],
                result: "{version, items: [{id, data?, children?, expanded?}]}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let section = try arguments.string("section")
                let parent = try arguments.optionalString("parent")
                let includingParent = try arguments.optionalBool("includingParent") ?? false
                let viewName = try arguments.optionalString("view")
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    guard var outline = dataSource.model.outline(of: section) else {
                        throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
                    }
                    if let viewName { outline = outlineAsShown(outline, section: section, by: try view(viewName, context, dataSource: name)) }
                    if let parent {
                        do {
                            outline = try outline.snapshot(of: parent, includingParent: includingParent)
                        } catch let error as SnapshotError {
                            throw WireError(error)
                        } catch {
                            throw WireError(.internal, "\(error)")
                        }
                    }
                    let version = dataSource.version
                    return CommandResult { writer in
                        writer.key("version")
                        writer.int(version)
                        writer.key("items")
                        writer.outline(outline)
                    }
                }
            },
            Command(
                name: "numberOfSections", summary: "The number of sections.", arguments: [dataSourceArgument],
                result: "{version, count}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    return versioned(dataSource, "count", .int(dataSource.snapshot.numberOfSections))
                }
            },
            Command(
                name: "numberOfItems", summary: "The number of items, in all sections or in one.",
                arguments: [dataSourceArgument, ArgumentSpec("section", "string", "Only this section.")],
                result: "{version, count}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let section = try arguments.optionalString("section")
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    guard let section else { return versioned(dataSource, "count", .int(dataSource.snapshot.numberOfItems)) }
                    guard let count = try? dataSource.snapshot.numberOfItems(inSection: section) else {
                        throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
                    }
                    return versioned(dataSource, "count", .int(count))
                }
            },
            Command(
                name: "itemIdentifier", summary: "The item at an index path.",
                arguments: [dataSourceArgument, ArgumentSpec("indexPath", "[section, item]", required: true, "The position."), nullIfMissingArgument],
                result: "{version, item}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let path = try WireDecoding.indexPath(arguments.required("indexPath"), field: "indexPath")
                let nullIfMissing = try arguments.optionalBool("nullIfMissing") ?? false
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    guard let item = dataSource.snapshot.itemIdentifier(at: path) else {
                        if nullIfMissing { return versioned(dataSource, "item", .null) }
                        throw WireError(.indexOutOfRange, "There is no item at \(path).")
                    }
                    return versioned(dataSource, "item", .string(item))
                }
            },
            Command(
                name: "indexPath", summary: "The index path of an item.",
                arguments: [dataSourceArgument, ArgumentSpec("item", "string", required: true, "The item."), nullIfMissingArgument],
                result: "{version, indexPath}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let item = try arguments.string("item")
                let nullIfMissing = try arguments.optionalBool("nullIfMissing") ?? false
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    guard let path = dataSource.snapshot.indexPath(ofItem: item) else {
                        if nullIfMissing { return versioned(dataSource, "indexPath", .null) }
                        throw WireError(.itemNotFound, "Item \"\(item)\" does not exist.")
                    }
                    return versioned(dataSource, "indexPath", [.int(path.section), .int(path.item)])
                }
            },
            Command(
                name: "sectionIdentifier", summary: "The section at an index.",
                arguments: [dataSourceArgument, ArgumentSpec("index", "integer", required: true, "The section's index."), nullIfMissingArgument],
                result: "{version, section}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let index = try arguments.int("index", in: Arguments.countRange)
                let nullIfMissing = try arguments.optionalBool("nullIfMissing") ?? false
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    guard let section = dataSource.snapshot.sectionIdentifier(at: index) else {
                        if nullIfMissing { return versioned(dataSource, "section", .null) }
                        throw WireError(.indexOutOfRange, "There is no section at \(index).")
                    }
                    return versioned(dataSource, "section", .string(section))
                }
            },
            Command(
                name: "index", summary: "The index of a section.",
                arguments: [dataSourceArgument, ArgumentSpec("section", "string", required: true, "The section."), nullIfMissingArgument],
                result: "{version, index}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let section = try arguments.string("section")
                let nullIfMissing = try arguments.optionalBool("nullIfMissing") ?? false
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    guard let index = dataSource.snapshot.index(ofSection: section) else {
                        if nullIfMissing { return versioned(dataSource, "index", .null) }
                        throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
                    }
                    return versioned(dataSource, "index", .int(index))
                }
            },
            Command(
                name: "item", summary: "An item's payload, position and section.",
                arguments: [dataSourceArgument, ArgumentSpec("item", "string", required: true, "The item.")],
                result: "{version, item, data, indexPath, section}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let item = try arguments.string("item")
                return { context throws(WireError) in
                    let dataSource = try context.dataSource(name)
                    let snapshot = dataSource.snapshot
                    guard let path = snapshot.indexPath(ofItem: item) else {
                        throw WireError(.itemNotFound, "Item \"\(item)\" does not exist.")
                    }
                    let version = dataSource.version
                    return CommandResult { writer in
                        writer.key("version")
                        writer.int(version)
                        writer.key("item")
                        writer.string(item)
                        writer.key("data")
                        writer.value(snapshot.data(ofItem: item)!)
                        writer.key("indexPath")
                        writer.indexPath(path)
                        writer.key("section")
                        writer.string(snapshot.sectionIdentifier(at: path.section)!)
                    }
                }
            },
        ]
    }

    /// UIKit's look-ups answer nil for what is not there; with this flag listd's answer null likewise
    /// (the data source itself must exist), so a caller can ask "is it there?" without an error.
    private static let nullIfMissingArgument = ArgumentSpec(
        "nullIfMissing", "boolean", "true: answer null (as UIKit's optional) instead of an error when it is not there.")

    private static func versioned(_ dataSource: DataSource, _ key: String, _ value: JSONValue) -> CommandResult {
        let version = dataSource.version
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key(key)
            writer.value(value)
        }
    }

    private static func writeSection(_ snapshot: Snapshot, at index: Int, range: Range<Int>?, to writer: inout JSONWriter) {
        let section = snapshot.section(at: index)!
        writer.beginObject()
        writer.key("id")
        writer.string(section.id)
        if !section.data.isNull {
            writer.key("data")
            writer.value(section.data)
        }
        if range != nil {
            writer.key("count")
            writer.int((try? snapshot.numberOfItems(inSection: section.id)) ?? 0)
        }
        writer.key("items")
        writer.beginArray()
        for item in (try? snapshot.items(inSection: section.id, range: range)) ?? [] {
            writer.identified(item.id, data: item.data)
        }
        writer.endArray()
        writer.endObject()
    }
}
