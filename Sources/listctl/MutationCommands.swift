import ArgumentParser
import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Mutations

/// Prints a mutation's result: version, stages and warnings.
func renderMutation(_ result: JSONValue) {
    print("version \(result["version"]?.intValue ?? 0)")
    if let changes = result["changes"] { Output.changes(changes, indent: "  ") }
    for warning in result["warnings"]?.arrayValue ?? [] {
        Output.error("warning: \(warning["code"]?.stringValue ?? ""): \(warning["message"]?.stringValue ?? "")")
    }
}

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
        try connection.run(request("apply", members), render: renderMutation)
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
        try connection.run(request("batch", target.members(["operations": try readJSON(file)])), render: renderMutation)
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
        try connection.run(request("applySectionSnapshot", members), render: renderMutation)
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
        try connection.run(request("editSectionSnapshot", members), render: renderMutation)
    }
}

struct Expand: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Expand outline items of a section.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The section.") var section: String
    @Argument(help: "Items.") var items: [String]
    func run() throws {
        let members = target.members(["section": .string(section), "items": .array(items.map { .string($0) })])
        try connection.run(request("expand", members), render: renderMutation)
    }
}

struct Collapse: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Collapse outline items of a section.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The section.") var section: String
    @Argument(help: "Items.") var items: [String]
    func run() throws {
        let members = target.members(["section": .string(section), "items": .array(items.map { .string($0) })])
        try connection.run(request("collapse", members), render: renderMutation)
    }
}
