import DiffableCore
import ListWire

extension CommandRouter {
    static var outlineCommands: [Command] {
        [
            Command(
                name: "applySectionSnapshot",
                summary: "Stores an outline for a section; the section's items become its visible items (as UIKit).",
                arguments: mutationArguments + [
                    ArgumentSpec("section", "string", required: true, "The section (appended when missing)."),
                    ArgumentSpec(
                        "snapshot", "{items: [{id, data?, children?, expanded?}]}", required: true, "The outline."),
                ],
                result: "{version, changes, warnings?}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let ifVersion = try arguments.optionalInt("ifVersion")
                let section = try arguments.string("section")
                let outline = try WireDecoding.sectionSnapshot(arguments.required("snapshot"), field: "snapshot")
                return { context throws(WireError) in
                    try checkIdentifiers([section], context.state.configuration)
                    try checkIdentifiers(outline.items.lazy.map(\.id), context.state.configuration)
                    return try replaceOutline(context, name, ifVersion: ifVersion, section: section) { _ in outline }
                }
            },
            expansionCommand(expand: true),
            expansionCommand(expand: false),
        ]
    }

    private static func expansionCommand(expand: Bool) -> Command {
        Command(
            name: expand ? "expand" : "collapse",
            summary: expand
                ? "Expands outline items: their children become visible items of the section."
                : "Collapses outline items: their descendants leave the section.",
            arguments: mutationArguments + [
                ArgumentSpec("section", "string", required: true, "The section holding the outline."),
                ArgumentSpec("items", "[string]", required: true, "Outline items."),
            ],
            result: "{version, changes}"
        ) { arguments, _ throws(WireError) in
            let name = try arguments.string("dataSource")
            let ifVersion = try arguments.optionalInt("ifVersion")
            let section = try arguments.string("section")
            let items = try arguments.strings("items")
            return { context throws(WireError) in
                try replaceOutline(context, name, ifVersion: ifVersion, section: section, toggled: items) { current throws(WireError) in
                    guard var outline = current else {
                        throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
                    }
                    let unknown = items.filter { !outline.contains($0) }
                    if !unknown.isEmpty {
                        throw WireError(
                            .itemNotFound,
                            "Items \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")) are not in the outline of section \"\(section)\".")
                    }
                    if expand { outline.expand(items) } else { outline.collapse(items) }
                    return outline
                }
            }
        }
    }

    /// The outline of a section: the stored one, or a flat one made from its items; `nil` when the
    /// section does not exist.
    static func outline(of section: String, in dataSource: DataSource) -> SectionSnapshot? {
        if let stored = dataSource.outlines[section] { return stored }
        return try? dataSource.snapshot.sectionSnapshot(of: section)
    }

    /// Replaces a section's outline with `transform(current)` and its items with the outline's visible items.
    /// `toggled` are expanded or collapsed items: views reconfigure them (their disclosure changed).
    private static func replaceOutline(
        _ context: CommandContext, _ name: String, ifVersion: Int?, section: String, toggled: [String] = [],
        _ transform: (SectionSnapshot?) throws(WireError) -> SectionSnapshot
    ) throws(WireError) -> Execution {
        let exists = context.state.dataSources[name] != nil
        return try mutate(context, name, ifVersion: ifVersion, create: !exists, addedItems: 0) { dataSource throws(WireError) in
            let outline = try transform(outline(of: section, in: dataSource))
            let limit = context.state.configuration.maximumItemsPerDataSource
            if dataSource.snapshot.numberOfItems + outline.visibleItems.count > limit {
                throw WireError(.limitExceeded, "Data source \"\(name)\" would pass its limit of \(limit) items.")
            }
            do {
                var outcome = try dataSource.snapshot.perform(.replaceItems(inSection: section, with: outline.visibleItems))
                dataSource.outlines[section] = outline
                var reconfigures = ChangeStage()
                for item in Set(toggled) {
                    if let path = dataSource.snapshot.indexPath(ofItem: item), let data = dataSource.snapshot.data(ofItem: item) {
                        reconfigures.itemReconfigures.append(ItemChange(indexPath: path, item: Item(item, data: data)))
                    }
                }
                reconfigures.itemReconfigures.sort { $0.indexPath < $1.indexPath }
                if !reconfigures.isEmpty { outcome.changes.stages.append(reconfigures) }
                return MutationResult(changes: outcome.changes, warnings: outcome.warnings)
            } catch let error as SnapshotError {
                throw WireError(error)
            } catch {
                throw WireError(.internal, "\(error)")
            }
        }
    }
}
