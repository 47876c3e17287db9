import DiffableCore
import ListEngine
import ListStore
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
                result: "{version, changes, unchanged?, warnings?}", effect: .mutates
            ) { arguments, _ throws(WireError) in
                let target = try MutationTarget(&arguments)
                let section = try arguments.string("section")
                let outline = try WireDecoding.sectionSnapshot(arguments.required("snapshot"), field: "snapshot")
                return { context throws(WireError) in
                    try commitMutation(
                        .dataSource(name: target.dataSource, ifVersion: target.ifVersion, createAs: .fresh, .replaceOutline(section: section, outline)),
                        context, animatingDifferences: target.animatingDifferences)
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
            result: "{version, changes}", effect: .mutates
        ) { arguments, _ throws(WireError) in
            let target = try MutationTarget(&arguments)
            let section = try arguments.string("section")
            let items = try arguments.strings("items")
            return { context throws(WireError) in
                try commitMutation(
                    .dataSource(
                        name: target.dataSource, ifVersion: target.ifVersion, createAs: nil, .setExpansion(section: section, items: items, expanded: expand)),
                    context, animatingDifferences: target.animatingDifferences)
            }
        }
    }

    /// Where an item sits in its section's stored outline, as `view` shows it (its own expansion, when it
    /// has one); `nil` when the section has no outline (or the item is not in it).
    static func outlinePlacement(of item: String, inSection section: String, in dataSource: DataSource, view: ViewSession) -> OutlinePlacement? {
        guard let outline = dataSource.outlines[section], let level = try? outline.level(of: item) else { return nil }
        let expanded = view.expansion?.isExpanded(item, inSection: section, outline: outline) ?? ((try? outline.isExpanded(item)) ?? false)
        return OutlinePlacement(expanded: expanded, level: level)
    }
}

/// An item's place in an outline, as its cell shows it: the disclosure's state and the indentation.
struct OutlinePlacement: Equatable {
    /// Whether the item's children are visible.
    var expanded: Bool
    /// The item's depth: 0 at the root level.
    var level: Int
}
