import DiffableCore
import ListEngine
import ListStore
import ListWire

/// `applySectionSnapshot`: a section's outline stored whole.
struct ApplySectionSnapshotCommand: MutationDeclaration {
    static let about = CommandAbout("applySectionSnapshot", "Stores an outline for a section; the section's items become its visible items (as UIKit).", result: "{version, changes, unchanged?, warnings?}")
    var target: MutationTarget
    @Arg("The section (appended when missing).") var section: String
    @Arg("The outline.") var snapshot: SectionSnapshot

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        try CommandRouter.commitMutation(
            .dataSource(name: target.dataSource, ifVersion: target.expectedVersion, createAs: .fresh, .replaceOutline(section: section, snapshot)),
            context, animatingDifferences: target.animates)
    }
}

/// `expand` and `collapse`: outline items shown or hidden with their descendants.
struct ExpansionCommand<Direction: ExpansionDirection>: MutationDeclaration {
    static var about: CommandAbout {
        Direction.expands
            ? CommandAbout("expand", "Expands outline items: their children become visible items of the section.", result: "{version, changes}")
            : CommandAbout("collapse", "Collapses outline items: their descendants leave the section.", result: "{version, changes}")
    }

    var target: MutationTarget
    @Arg("The section holding the outline.") var section: String
    @Arg("Outline items.") var items: [String]

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        try CommandRouter.commitMutation(
            .dataSource(
                name: target.dataSource, ifVersion: target.expectedVersion, createAs: nil,
                .setExpansion(section: section, items: items, expanded: Direction.expands)),
            context, animatingDifferences: target.animates)
    }
}

/// Which way an expansion command goes (`expand`, `collapse`; also their per-view forms).
protocol ExpansionDirection: Sendable {
    static var expands: Bool { get }
}

enum Expanding: ExpansionDirection { static let expands = true }
enum Collapsing: ExpansionDirection { static let expands = false }

extension CommandRouter {
    static var outlineCommands: [Command] {
        [Command(ApplySectionSnapshotCommand.self), Command(ExpansionCommand<Expanding>.self), Command(ExpansionCommand<Collapsing>.self)]
    }
}
