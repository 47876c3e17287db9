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
                try replaceOutline(context, name, ifVersion: ifVersion, section: section) { current throws(WireError) in
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

    /// Where an item sits in its section's stored outline; `nil` when the section has none (or the item
    /// is not in it).
    static func outlinePlacement(of item: String, inSection section: String, in dataSource: DataSource) -> OutlinePlacement? {
        guard let outline = dataSource.outlines[section], let level = try? outline.level(of: item) else { return nil }
        return OutlinePlacement(expanded: (try? outline.isExpanded(item)) ?? false, level: level)
    }

    /// The outline of a section: the stored one, or a flat one made from its items; `nil` when the
    /// section does not exist.
    static func outline(of section: String, in dataSource: DataSource) -> SectionSnapshot? {
        if let stored = dataSource.outlines[section] { return stored }
        return try? dataSource.snapshot.sectionSnapshot(of: section)
    }

    /// Replaces a section's outline with `transform(current)` and its items with the outline's visible items.
    /// Items visible before and after whose expansion or depth changed are reconfigured in a last stage
    /// (their disclosure or indentation shows it).
    private static func replaceOutline(
        _ context: CommandContext, _ name: String, ifVersion: Int?, section: String,
        _ transform: (SectionSnapshot?) throws(WireError) -> SectionSnapshot
    ) throws(WireError) -> Execution {
        let exists = context.state.dataSources[name] != nil
        return try mutate(context, name, ifVersion: ifVersion, create: !exists, addedItems: 0) { dataSource throws(WireError) in
            let previous = outline(of: section, in: dataSource)
            let outline = try transform(previous)
            let limit = context.state.configuration.maximumItemsPerDataSource
            if dataSource.snapshot.numberOfItems + outline.visibleItems.count > limit {
                throw WireError(.limitExceeded, "Data source \"\(name)\" would pass its limit of \(limit) items.")
            }
            do {
                var outcome = try dataSource.snapshot.perform(.replaceItems(inSection: section, with: outline.visibleItems))
                dataSource.outlines[section] = outline
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

/// An item's place in an outline, as its cell shows it: the disclosure's state and the indentation.
struct OutlinePlacement: Equatable {
    /// Whether the item's children are visible.
    var expanded: Bool
    /// The item's depth: 0 at the root level.
    var level: Int
}
