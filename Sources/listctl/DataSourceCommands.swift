import ArgumentParser
import DiffableCore
import ListViewCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Data sources

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the data sources.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("listDataSources", [:])) { result in
            Output.table(
                ["DATA SOURCE", "VERSION", "SECTIONS", "ITEMS", "VIEWS", "OWNER", "ACCESS"],
                (result["dataSources"]?.arrayValue ?? []).map {
                    [TerminalText.name($0["name"]?.stringValue ?? "")]
                        + [$0["version"], $0["sections"], $0["items"], $0["views"]].map { Output.cell($0) }
                        + [TerminalText.name($0["ownerName"]?.stringValue ?? ""), Output.cell($0["access"])]
                })
        }
    }
}

struct Access: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a user may do with a data source (default: you), and why.",
        discussion: "Levels: none, read, write, admin. The reason is administrator, owner, the access rule that matched, or the default.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Option(help: "Another user, by name or uid.") var user: String?
    func run() throws {
        var members: [String: JSONValue] = ["dataSource": .string(dataSource)]
        if let user { members["user"] = UInt32(user).map { .int(Int($0)) } ?? .string(user) }
        try connection.run(request("access", members)) { result in
            let who = result["user"]?.stringValue.map { "\($0) (uid \(result["uid"]?.intValue ?? 0))" } ?? "uid \(result["uid"]?.intValue ?? 0)"
            if result["exists"] == true {
                let owner = "\(result["ownerName"]?.stringValue ?? "?") (uid \(result["owner"]?.intValue ?? 0))"
                print("\(TerminalText.name(who)) has \(result["access"]?.stringValue ?? "?") access to \(TerminalText.name(dataSource)) (\(result["reason"]?.stringValue ?? "?")); owner \(TerminalText.name(owner))")
            } else {
                print("\(TerminalText.name(dataSource)) does not exist; \(TerminalText.name(who)) \(result["mayCreate"] == true ? "may" : "may not") create it")
            }
            let usage = result["usage"]
            let counts = ["dataSources": "data sources", "items": "items", "registrations": "registrations"]
            let quota = result["quota"]
            let owned = [("dataSources", "maxDataSourcesPerUser"), ("items", "maxItemsPerUser"), ("registrations", "maxRegistrationsPerUser")].map {
                key, limit in
                let count = usage?[key]?.intValue ?? 0
                return quota?[limit]?.intValue.map { "\(count) of \($0) \(counts[key]!)" } ?? "\(count) \(counts[key]!)"
            }
            print("owns " + owned.joined(separator: ", ") + (quota == "exempt" ? " (exempt from per-user quotas)" : ""))
            if let account = usage?["account"] {
                // Every part of the account that holds something, largest first, against maxBytesPerUser.
                let parts = ["data", "layouts", "cellProviders", "registrations", "changeLog", "cells", "expansions", "queues", "output"]
                    .compactMap { part in account[part]?.intValue.flatMap { $0 > 0 ? (part, $0) : nil } }
                    .sorted { $0.1 > $1.1 }
                let total = account["total"]?.intValue ?? 0
                let limit = quota?["maxBytesPerUser"]?.intValue.map { " of \($0)" } ?? ""
                print("holds \(total)\(limit) bytes" + (parts.isEmpty ? "" : ": " + parts.map { "\($0.0) \($0.1)" }.joined(separator: ", ")))
            }
        }
    }
}

struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create an empty data source.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    func run() throws {
        try connection.run(request("createDataSource", ["dataSource": .string(dataSource)])) { result in
            print("created \(TerminalText.name(dataSource)) at version \(Output.cell(result["version"]))")
        }
    }
}

struct Drop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a data source.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    func run() throws {
        try connection.run(request("dropDataSource", ["dataSource": .string(dataSource)])) { result in
            print("dropped \(TerminalText.name(dataSource)) (it was at version \(Output.cell(result["version"])))")
        }
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a data source's snapshot (or part of one section).")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Option(help: "Only this section.") var section: String?
    @Option(help: "With --section: the first item.") var offset: Int?
    @Option(help: "With --section: at most this many items.") var limit: Int?
    func run() throws {
        var members: [String: JSONValue] = ["dataSource": .string(dataSource)]
        if let section { members["section"] = .string(section) }
        if let offset { members["offset"] = .int(offset) }
        if let limit { members["limit"] = .int(limit) }
        try connection.run(request("snapshot", members)) { result in
            print("\(TerminalText.name(dataSource)) at version \(result["version"]?.intValue ?? 0)")
            Output.snapshot(result["sections"] ?? [], firstItem: offset ?? 0)
        }
    }
}

struct Outline: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a section as an outline (its section snapshot).")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The section.") var section: String
    func run() throws {
        try connection.run(request("sectionSnapshot", ["dataSource": .string(dataSource), "section": .string(section)])) { result in
            Output.outline(result["items"] ?? [], depth: 0)
        }
    }
}

// MARK: Queries

struct ItemInfo: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "item", abstract: "Show an item: payload, position, section.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The item.") var item: String
    func run() throws {
        try connection.run(request("item", ["dataSource": .string(dataSource), "item": .string(item)])) { result in
            print("\(TerminalText.name(item)) in \(TerminalText.name(result["section"]?.stringValue ?? "")) at \(Output.cell(result["indexPath"]))")
            print(Output.describe(result["data"] ?? .null))
        }
    }
}

struct IndexPathOf: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "index-path", abstract: "The index path of an item.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The item.") var item: String
    func run() throws {
        try connection.run(request("indexPath", ["dataSource": .string(dataSource), "item": .string(item)])) { print(Output.cell($0["indexPath"])) }
    }
}

struct ItemAt: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "item-at", abstract: "The item at an index path.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The section's index.") var section: Int
    @Argument(help: "The item's index.") var item: Int
    func run() throws {
        let members: [String: JSONValue] = ["dataSource": .string(dataSource), "indexPath": [.int(section), .int(item)]]
        try connection.run(request("itemIdentifier", members)) { print(TerminalText.name($0["item"]?.stringValue ?? "")) }
    }
}

struct SectionAt: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "section-at", abstract: "The section at an index.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The index.") var index: Int
    func run() throws {
        try connection.run(request("sectionIdentifier", ["dataSource": .string(dataSource), "index": .int(index)])) { print(TerminalText.name($0["section"]?.stringValue ?? "")) }
    }
}

struct IndexOf: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "index", abstract: "The index of a section.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The section.") var section: String
    func run() throws {
        try connection.run(request("index", ["dataSource": .string(dataSource), "section": .string(section)])) { print(Output.cell($0["index"])) }
    }
}

struct Count: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Count the sections and items (or one section's items).")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Option(help: "Only this section's items.") var section: String?
    func run() throws {
        if let section {
            try connection.run(request("numberOfItems", ["dataSource": .string(dataSource), "section": .string(section)])) {
                print(Output.cell($0["count"]))
            }
            return
        }
        try connection.run(request("numberOfSections", ["dataSource": .string(dataSource)])) { print("sections \(Output.cell($0["count"]))") }
        try connection.run(request("numberOfItems", ["dataSource": .string(dataSource)])) { print("items \(Output.cell($0["count"]))") }
    }
}
