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

    func members(_ extra: [String: JSONValue]) -> [String: JSONValue] {
        var members = extra
        members["dataSource"] = .string(dataSource)
        if let ifVersion { members["ifVersion"] = .int(ifVersion) }
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

struct AppendSections: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Append sections (id or id=JSON).")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "Sections.") var sections: [String]
    func run() throws {
        try connection.run(request("appendSections", target.members(["sections": .array(try sections.map(element))])), render: renderMutation)
    }
}

struct InsertSections: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Insert sections before or after a section.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @OptionGroup var placement: Placement
    @Argument(help: "Sections.") var sections: [String]
    func run() throws {
        let members = target.members(try placement.members("beforeSection", "afterSection").merging(["sections": .array(try sections.map(element))]) { a, _ in a })
        try connection.run(request("insertSections", members), render: renderMutation)
    }
}

struct DeleteSections: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete sections with their items.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "Sections.") var sections: [String]
    func run() throws {
        try connection.run(request("deleteSections", target.members(["sections": .array(sections.map { .string($0) })])), render: renderMutation)
    }
}

struct MoveSection: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Move a section before or after another.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @OptionGroup var placement: Placement
    @Argument(help: "The section.") var section: String
    func run() throws {
        let members = target.members(try placement.members("beforeSection", "afterSection").merging(["section": .string(section)]) { a, _ in a })
        try connection.run(request("moveSection", members), render: renderMutation)
    }
}

struct ReloadSections: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Reload sections.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "Sections.") var sections: [String]
    func run() throws {
        try connection.run(request("reloadSections", target.members(["sections": .array(sections.map { .string($0) })])), render: renderMutation)
    }
}

struct AppendItems: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Append items (id or id=JSON) to a section or the last one.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Option(help: "The section (default: the last one).") var toSection: String?
    @Argument(help: "Items.") var items: [String]
    func run() throws {
        var members = target.members(["items": .array(try items.map(element))])
        if let toSection { members["toSection"] = .string(toSection) }
        try connection.run(request("appendItems", members), render: renderMutation)
    }
}

struct InsertItems: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Insert items before or after an item.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @OptionGroup var placement: Placement
    @Argument(help: "Items.") var items: [String]
    func run() throws {
        let members = target.members(try placement.members("beforeItem", "afterItem").merging(["items": .array(try items.map(element))]) { a, _ in a })
        try connection.run(request("insertItems", members), render: renderMutation)
    }
}

struct DeleteItems: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete items.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "Items.") var items: [String]
    func run() throws {
        try connection.run(request("deleteItems", target.members(["items": .array(items.map { .string($0) })])), render: renderMutation)
    }
}

struct DeleteAll: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete-all-items", abstract: "Delete every item and section.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    func run() throws { try connection.run(request("deleteAllItems", target.members([:])), render: renderMutation) }
}

struct MoveItem: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Move an item before or after another item.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @OptionGroup var placement: Placement
    @Argument(help: "The item.") var item: String
    func run() throws {
        let members = target.members(try placement.members("beforeItem", "afterItem").merging(["item": .string(item)]) { a, _ in a })
        try connection.run(request("moveItem", members), render: renderMutation)
    }
}

struct ReloadItems: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Reload items (new cells).")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "Items.") var items: [String]
    func run() throws {
        try connection.run(request("reloadItems", target.members(["items": .array(items.map { .string($0) })])), render: renderMutation)
    }
}

struct ReconfigureItems: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Reconfigure items (the same cells).")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "Items.") var items: [String]
    func run() throws {
        try connection.run(request("reconfigureItems", target.members(["items": .array(items.map { .string($0) })])), render: renderMutation)
    }
}

struct UpdateItems: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Replace item payloads (id=JSON).")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "Items as id=JSON.") var items: [String]
    func run() throws {
        try connection.run(request("updateItems", target.members(["items": .array(try items.map(element))])), render: renderMutation)
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
