import ArgumentParser
import DiffableCore
import ListClient
import ListViewCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Mutations

/// Arguments every mutation takes.
struct MutationTarget: ParsableArguments {
    @Argument(help: "The data source.") var dataSource: String
    @Option(name: .customLong("if-version"), help: "Apply only if the data source is at this version.") var ifVersion: Int?
    @Flag(name: .customLong("no-animation"), help: "Views apply the change without animation (animatingDifferences: false).")
    var noAnimation = false

    func members(_ extra: [String: JSONValue]) -> [String: JSONValue] {
        var members = extra
        members["dataSource"] = .string(dataSource)
        if let ifVersion { members["ifVersion"] = .int(ifVersion) }
        if noAnimation { members["animatingDifferences"] = false }
        return members
    }
}

struct Apply: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace a data source's snapshot with {\"sections\": [...]} from a file or stdin (-).",
        discussion: "The output of `listctl show DS --json` (a reply to snapshot) is accepted as it is: `listctl show A --json | listctl apply B -` copies a snapshot.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The snapshot file, or - for standard input.") var file: String = "-"
    @Flag(help: "Skip the diff: views reload everything.") var reloadData = false
    func run() throws {
        var members = target.members(["snapshot": try Self.snapshot(in: try readJSON(file), from: file)])
        if reloadData { members["reloadData"] = true }
        try NamedMutation.send(request("apply", members), on: connection)
    }

    /// The snapshot in `document`: `{"sections": …}` itself, or the `result` of a `snapshot` reply
    /// (`listctl show --json`), whose other members (version, dataSource) are not part of it.
    static func snapshot(in document: JSONValue, from file: String) throws -> JSONValue {
        if document["ok"] != nil {
            guard document["ok"] == true, let result = document["result"], let sections = result["sections"] else {
                throw ValidationError("\(file): a reply without a snapshot (is it the output of listctl show --json?)")
            }
            return ["sections": sections]
        }
        return document
    }
}

struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply a JSON array of operations ({\"cmd\": …} without dataSource) as one transaction.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The operations file, or - for standard input.") var file: String = "-"
    func run() throws {
        try NamedMutation.send(request("batch", target.members(["operations": try readJSON(file)])), on: connection)
    }
}

struct ApplySectionSnapshot: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply an outline {\"items\": [...]} to a section, from a file or stdin.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The section.") var section: String
    @Argument(help: "The outline file, or - for standard input.") var file: String = "-"
    func run() throws {
        let members = target.members(["section": .string(section), "snapshot": try readJSON(file)])
        try NamedMutation.send(request("applySectionSnapshot", members), on: connection)
    }
}

struct EditSectionSnapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Edit a section's outline in place from a JSON array of {\"op\": …} (append, insert, delete, deleteAll, replaceChildren, expand, collapse).")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The section.") var section: String
    @Argument(help: "The operations file, or - for standard input.") var file: String = "-"
    func run() throws {
        let members = target.members(["section": .string(section), "operations": try readJSON(file)])
        try NamedMutation.send(request("editSectionSnapshot", members), on: connection)
    }
}

struct Expand: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Expand outline items of a section (for every view; with --view, in that view only).",
        discussion: "--view needs the data source's expansion scope to be perView (listctl expansion-scope) and only read access.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The section.") var section: String
    @Argument(help: "Items.") var items: [String]
    @Option(help: "One of your views: expand in it only (expandInView).") var view: String?
    func run() throws { try runExpansion(expand: true, connection, target, section: section, items: items, view: view) }
}

struct Collapse: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Collapse outline items of a section (for every view; with --view, in that view only).",
        discussion: "--view needs the data source's expansion scope to be perView (listctl expansion-scope) and only read access.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The section.") var section: String
    @Argument(help: "Items.") var items: [String]
    @Option(help: "One of your views: collapse in it only (collapseInView).") var view: String?
    func run() throws { try runExpansion(expand: false, connection, target, section: section, items: items, view: view) }
}

/// `expand` / `collapse`: the data source's expansion, or with `view` that view's own.
private func runExpansion(expand: Bool, _ connection: Connection, _ target: MutationTarget, section: String, items: [String], view: String?) throws {
    var members = target.members(["section": .string(section), "items": .array(items.map { .string($0) })])
    guard let view else { return try NamedMutation.send(request(expand ? "expand" : "collapse", members), on: connection) }
    members["view"] = .string(view)
    members["ifVersion"] = nil
    try connection.run(request(expand ? "expandInView" : "collapseInView", members)) { result in
        print("\(expand ? "expanded" : "collapsed") in view \(TerminalText.name(view)) only (version \(result["version"]?.intValue ?? 0))")
    }
}

struct ExpansionScopeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expansion-scope",
        abstract: "Show whose outline expansion a data source's views show, or set it: shared or perView.",
        discussion: "With perView each view may expand and collapse in its own view (listctl expand --view, listview's o) with read access; shared (the default) makes expand and collapse the data source's, for every view.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "shared or perView (none: show it).") var scope: String?
    func run() throws {
        if let scope {
            return try connection.run(request("setExpansionScope", ["dataSource": .string(dataSource), "scope": .string(scope)])) { result in
                print("expansion scope \(result["expansionScope"]?.stringValue ?? scope) (version \(result["version"]?.intValue ?? 0))")
            }
        }
        let listed = try connection.result(of: request("listDataSources", [:]))["dataSources"]?.arrayValue ?? []
        guard let entry = listed.first(where: { $0["name"]?.stringValue == dataSource }) else {
            throw ValidationError("no data source \"\(dataSource)\" (or you may not read it)")
        }
        let shown = entry["expansionScope"]?.stringValue ?? "shared"
        if connection.json { return Output.line(bytes: JSONValue.object(["dataSource": .string(dataSource), "expansionScope": .string(shown)]).jsonBytes) }
        print(shown)
    }
}
