import ArgumentParser
import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// `listctl`: talk to listd from a shell.
@main
struct Listctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listctl",
        abstract: "Query and change listd's data sources.",
        discussion: """
            Items and sections are given as `id` or `id=JSON` (the payload), e.g. `c1='{"title":"감기"}'`. \
            Exit status: 0 on success, 1 when listd answers with an error (its code on stderr), 2 when \
            listd cannot be reached. Shell completions: `listctl --generate-completion-script bash`.
            """,
        subcommands: [
            Ping.self, Hello.self, Describe.self, Stats.self, List.self, Create.self, Drop.self, Show.self, Outline.self,
            Apply.self, AppendSections.self, InsertSections.self, DeleteSections.self, MoveSection.self, ReloadSections.self,
            AppendItems.self, InsertItems.self, DeleteItems.self, DeleteAll.self, MoveItem.self, ReloadItems.self,
            ReconfigureItems.self, UpdateItems.self, Batch.self, ApplySectionSnapshot.self, Expand.self, Collapse.self,
            ItemInfo.self, IndexPathOf.self, ItemAt.self, SectionAt.self, IndexOf.self, Count.self, Watch.self,
            Register.self, Unregister.self, Registrations.self, Styles.self, SetCellProvider.self, Dequeue.self,
            EndDisplaying.self, SetState.self, Backup.self, Call.self,
        ])

    /// Accepts the global options before the command too (`listctl --socket PATH ls`), as after it.
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var global: [String] = []
        while let first = arguments.first, first.hasPrefix("--socket") || first == "--json" {
            global.append(arguments.removeFirst())
            if first == "--socket", let value = arguments.first {
                global.append(value)
                arguments.removeFirst()
            }
        }
        if !global.isEmpty && !arguments.isEmpty { arguments.insert(contentsOf: global, at: 1) }
        main(arguments.isEmpty ? global : arguments)
    }
}

/// Options every subcommand takes.
struct Connection: ParsableArguments {
    @Option(help: "listd's socket (default: $LISTD_SOCKET, else /run/listd.sock as root, else $XDG_RUNTIME_DIR/listd.sock).")
    var socket: String?

    @Flag(help: "Print the raw JSON reply instead of a table.")
    var json = false

    var socketPath: String {
        if let socket { return socket }
        if let path = environment("LISTD_SOCKET"), !path.isEmpty { return path }
        if getuid() == 0 { return "/run/listd.sock" }
        return (environment("XDG_RUNTIME_DIR") ?? "/tmp") + "/listd.sock"
    }

    /// Sends one request on a new connection and prints the reply: raw with `--json`, else through `render`.
    func run(_ request: JSONValue, render: (JSONValue) -> Void = { print(Output.describe($0)) }) throws {
        let result = try send(request, on: open())
        if !json { render(result) }
    }

    /// A connection to listd, for commands that send several requests or read events; exit status 2
    /// when listd cannot be reached.
    func open() throws -> LineConnection {
        do {
            return try LineConnection(path: socketPath)
        } catch {
            Output.error("listctl: \(error)")
            throw ExitCode(2)
        }
    }

    /// Sends one request on `connection`: the reply printed raw (at once) with `--json`; exit status 1
    /// for an error reply, 2 when listd cannot be reached; else the result.
    func send(_ request: JSONValue, on connection: LineConnection) throws -> JSONValue {
        let reply: JSONValue
        do {
            let received = try connection.requestLine(request)
            reply = received.reply
            // The reply exactly as listd wrote it (re-encoding a large snapshot would double the work).
            if json { Output.line(bytes: received.line) }
        } catch {
            Output.error("listctl: \(error)")
            throw ExitCode(2)
        }
        guard reply["ok"] == true else {
            let code = reply["error"]?["code"]?.stringValue ?? "error"
            let message = reply["error"]?["message"]?.stringValue ?? ""
            Output.error("listctl: \(code): \(message)")
            throw ExitCode(1)
        }
        return reply["result"] ?? [:]
    }
}

func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(decoding: UnsafeRawBufferPointer(start: value, count: strlen(value)), as: UTF8.self)
}

/// `id` or `id=JSON` → the wire form of an item or section.
func element(_ argument: String) throws -> JSONValue {
    guard let equals = argument.firstIndex(of: "=") else { return .string(argument) }
    let id = String(argument[..<equals])
    let text = String(argument[argument.index(after: equals)...])
    let data = (try? JSONParser.parse(text)) ?? .string(text)
    return ["id": .string(id), "data": data]
}

/// The JSON in a file, or on standard input for `-`.
func readJSON(_ path: String) throws -> JSONValue {
    let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY)
    guard descriptor >= 0 else { throw ValidationError("cannot read \(path)") }
    defer { if path != "-" { close(descriptor) } }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    do {
        return try JSONParser.parse(bytes)
    } catch {
        throw ValidationError("\(path): not valid JSON: \(error)")
    }
}

/// `--before X` / `--after X` for insertions and moves.
struct Placement: ParsableArguments {
    @Option(help: "Place before this one.") var before: String?
    @Option(help: "Place after this one.") var after: String?

    func members(_ beforeKey: String, _ afterKey: String) throws -> [String: JSONValue] {
        switch (before, after) {
        case (let before?, nil): return [beforeKey: .string(before)]
        case (nil, let after?): return [afterKey: .string(after)]
        default: throw ValidationError("Give exactly one of --before and --after.")
        }
    }
}

func request(_ command: String, _ members: [String: JSONValue]) -> JSONValue {
    var all = members
    all["cmd"] = .string(command)
    return .object(all)
}

// MARK: Housekeeping

struct Ping: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check that listd answers.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.run(request("ping", [:])) { _ in print("pong") } }
}

struct Hello: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show listd's protocol, version, features and limits.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.run(request("hello", ["protocol": 1, "client": "listctl"])) }
}

struct Describe: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List every command, error code and event.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("describe", [:])) { result in
            for command in result["commands"]?.arrayValue ?? [] {
                let arguments = (command["arguments"]?.arrayValue ?? []).map { argument -> String in
                    let name = argument["name"]?.stringValue ?? ""
                    return argument["required"] == true ? name : "[\(name)]"
                }
                print("\(command["name"]?.stringValue ?? "") \(arguments.joined(separator: " "))")
                print("    \(command["summary"]?.stringValue ?? "")")
            }
            print("\nerrors: " + (result["errors"]?.arrayValue ?? []).compactMap { $0["code"]?.stringValue }.joined(separator: ", "))
            print("events: " + (result["events"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.joined(separator: ", "))
        }
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show connections, views, data sources, memory and counters.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("stats", [:])) { result in
            print("uptime \(result["uptimeSeconds"]?.intValue ?? 0)s, connections \(result["connections"]?["current"]?.intValue ?? 0) "
                + "(\(result["connections"]?["accepted"]?.intValue ?? 0) accepted), views \(result["views"]?.intValue ?? 0), "
                + "items \(result["items"]?.intValue ?? 0), memory \((result["memory"]?["residentBytes"]?.intValue ?? 0) >> 20) MiB")
            Output.table(
                ["DATA SOURCE", "VERSION", "SECTIONS", "ITEMS", "VIEWS"],
                (result["dataSources"]?.arrayValue ?? []).map {
                    [$0["name"], $0["version"], $0["sections"], $0["items"], $0["views"]].map { Output.cell($0) }
                })
            if case .object(let commands)? = result["commands"], !commands.isEmpty {
                print("")
                Output.table(["COMMAND", "COUNT"], commands.keys.sorted().map { [$0, Output.cell(commands[$0])] })
            }
            if case .object(let errors)? = result["errors"], !errors.isEmpty {
                print("")
                Output.table(["ERROR", "COUNT"], errors.keys.sorted().map { [$0, Output.cell(errors[$0])] })
            }
        }
    }
}

// MARK: Data sources

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the data sources.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("listDataSources", [:])) { result in
            Output.table(
                ["DATA SOURCE", "VERSION", "SECTIONS", "ITEMS", "VIEWS"],
                (result["dataSources"]?.arrayValue ?? []).map {
                    [$0["name"], $0["version"], $0["sections"], $0["items"], $0["views"]].map { Output.cell($0) }
                })
        }
    }
}

struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create an empty data source.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    func run() throws { try connection.run(request("createDataSource", ["dataSource": .string(dataSource)])) }
}

struct Drop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a data source.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    func run() throws { try connection.run(request("dropDataSource", ["dataSource": .string(dataSource)])) }
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
            print("\(dataSource) at version \(result["version"]?.intValue ?? 0)")
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
        abstract: "Replace a data source's snapshot with {\"sections\": [...]} from a file or stdin (-).")
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: "The snapshot file, or - for standard input.") var file: String = "-"
    @Flag(help: "Skip the diff: views reload everything.") var reloadData = false
    func run() throws {
        var members = target.members(["snapshot": try readJSON(file)])
        if reloadData { members["reloadData"] = true }
        try connection.run(request("apply", members), render: renderMutation)
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

// MARK: Queries

struct ItemInfo: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "item", abstract: "Show an item: payload, position, section.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The item.") var item: String
    func run() throws {
        try connection.run(request("item", ["dataSource": .string(dataSource), "item": .string(item)])) { result in
            print("\(item) in \(result["section"]?.stringValue ?? "") at \(Output.cell(result["indexPath"]))")
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
        try connection.run(request("itemIdentifier", members)) { print($0["item"]?.stringValue ?? "") }
    }
}

struct SectionAt: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "section-at", abstract: "The section at an index.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The index.") var index: Int
    func run() throws {
        try connection.run(request("sectionIdentifier", ["dataSource": .string(dataSource), "index": .int(index)])) { print($0["section"]?.stringValue ?? "") }
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

// MARK: Watching and raw calls

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Attach as a view and print change events as they come; when listd goes away, reconnect and resume.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Option(help: "The view's name.") var view: String?
    @Option(help: "Cut lines to this many columns (default: the terminal's width when printing to one; 0: never).")
    var width: Int?
    @Option(help: "How long to keep trying to reconnect when listd goes away, in seconds (0: exit at once).")
    var reconnectSeconds: Double = 30

    func validate() throws {
        if let width, width < 0 { throw ValidationError("--width must not be negative") }
        if reconnectSeconds < 0 { throw ValidationError("--reconnect-seconds must not be negative") }
    }

    /// The formatter for the width now: `--width`, else the terminal's (read again per event: the pane
    /// may have been resized).
    var output: WatchOutput { WatchOutput(width: width.map { $0 == 0 ? nil : $0 } ?? WatchOutput.terminalWidth()) }

    /// What the watch follows: the view's name, and the incarnation and version it has seen.
    struct Position {
        var view: String?
        var incarnation: String?
        var version = 0
    }

    func run() throws {
        var line = try connection.open()
        var position = Position(view: view)
        let result = try connection.send(request("attach", attachMembers(position, resume: false)), on: line)
        attached(result, &position)
        if !connection.json {
            Output.line(output.fit("watching \(dataSource) as \(position.view ?? "") from version \(position.version)"))
        }
        while true {
            let event: JSONValue? = try? line.readJSON(timeout: .seconds(365 * 24 * 3600))
            if let event {
                if connection.json {
                    Output.line(String(decoding: event.jsonBytes, as: UTF8.self))
                } else {
                    for text in output.lines(for: event) { Output.line(text) }
                }
                let name = event["event"]?.stringValue
                if name == "changes" || name == "layoutChanged", let version = event["version"]?.intValue { position.version = version }
                if name == "overflow" || name == "dropped" || (name == "shutdown" && reconnectSeconds == 0) { return }
                if name != "shutdown" { continue }
            } else if reconnectSeconds == 0 {
                if !connection.json { Output.line("listd closed the connection") }
                return
            }
            line = try reconnect(&position)
        }
    }

    private func attachMembers(_ position: Position, resume: Bool) -> [String: JSONValue] {
        var members: [String: JSONValue] = ["dataSource": .string(dataSource)]
        if let view = position.view { members["view"] = .string(view) }
        if resume, let incarnation = position.incarnation {
            members["fromVersion"] = .int(position.version)
            members["incarnation"] = .string(incarnation)
        }
        return members
    }

    private func attached(_ result: JSONValue, _ position: inout Position) {
        position.view = result["view"]?.stringValue ?? position.view
        position.incarnation = result["incarnation"]?.stringValue
        if result["resumed"] != true { position.version = result["version"]?.intValue ?? 0 }
    }

    /// Connects and attaches again, resuming from the last version printed: tries with a growing pause
    /// (0.1 s doubling to 2 s) for `--reconnect-seconds`; exit status 1 when it gives up.
    private func reconnect(_ position: inout Position) throws -> LineConnection {
        if !connection.json { Output.line(output.fit("listd went away; reconnecting…")) }
        let deadline = ContinuousClock.now + .milliseconds(Int(reconnectSeconds * 1_000))
        var pause = Duration.milliseconds(100)
        while true {
            if let line = try? LineConnection(path: connection.socketPath),
                let received = try? line.requestLine(request("attach", attachMembers(position, resume: true))),
                received.reply["ok"] == true, let result = received.reply["result"]
            {
                if connection.json { Output.line(bytes: received.line) }
                let resumed = result["resumed"] == true
                attached(result, &position)
                if !connection.json {
                    Output.line(
                        output.fit(
                            resumed
                                ? "reconnected; resuming after version \(position.version)"
                                : "reconnected; could not resume, watching again from version \(position.version)"))
                }
                return line
            }
            guard ContinuousClock.now + pause <= deadline else {
                Output.error("listctl: lost the connection to listd")
                throw ExitCode(1)
            }
            usleep(UInt32(pause / .microseconds(1)))
            pause = min(pause * 2, .seconds(2))
        }
    }
}

// MARK: Cells

struct Register: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a registration from a JSON definition {kind?, elementKind?, contentConfiguration, background?, accessories?}.")
    @OptionGroup var connection: Connection
    @Argument(help: "The registration's name.") var name: String
    @Argument(help: "The definition file, or - for standard input.") var file: String = "-"
    func run() throws {
        guard case .object(var members) = try readJSON(file) else { throw ValidationError("\(file): the definition must be a JSON object") }
        members["registration"] = .string(name)
        try connection.run(request("register", members)) { result in
            print("\(result["created"] == true ? "created" : "unchanged") \(name) (\(Output.cell(result["kind"])), \(Output.cell(result["type"])))")
        }
    }
}

struct Unregister: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a registration (draining its reuse pools).")
    @OptionGroup var connection: Connection
    @Argument(help: "The registration.") var name: String
    func run() throws {
        try connection.run(request("unregister", ["registration": .string(name)])) { print("drained \(Output.cell($0["drained"])) cells") }
    }
}

struct Registrations: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the registrations with their cell counters.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("registrations", [:])) { result in
            Output.table(
                ["REGISTRATION", "KIND", "TYPE", "CREATED", "REUSED", "DISPLAYED", "POOLED", "RELEASED", "REPLACED", "NEVER REUSED"],
                (result["registrations"]?.arrayValue ?? []).map { entry in
                    [entry["registration"], entry["kind"], entry["type"], entry["created"], entry["reused"], entry["displayed"],
                     entry["pooled"], entry["released"], entry["contentConfigurationsReplaced"]].map { Output.cell($0) }
                        + [entry["neverReused"] == true ? "yes" : "no"]
                })
        }
    }
}

struct Styles: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the built-in content styles and their defaults.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("styles", [:])) { result in
            if case .object(let styles)? = result["content"] {
                for name in styles.keys.sorted() { print("\(name)  \(Output.cell(styles[name]))") }
            }
        }
    }
}

struct SetCellProvider: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cell-provider",
        abstract: "Set a data source's cell provider rules from {\"rules\": [...], \"default\"?: …} (a file or stdin).")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The rules file, or - for standard input.") var file: String = "-"
    @Option(help: "Set the supplementary provider for this element kind instead (e.g. header).") var elementKind: String?
    func run() throws {
        guard case .object(var members) = try readJSON(file) else { throw ValidationError("\(file): expected {\"rules\": [...]}") }
        members["dataSource"] = .string(dataSource)
        if let elementKind { members["elementKind"] = .string(elementKind) }
        try connection.run(request(elementKind == nil ? "setCellProvider" : "setSupplementaryProvider", members)) {
            print("\(Output.cell($0["rules"])) rules set")
        }
    }
}

/// Prints cells from dequeue, setState and cellUpdated.
func renderCells(_ cells: [JSONValue]) {
    Output.table(
        ["CELL", "AT", "ITEM", "REGISTRATION", "REUSED", "TYPE", "TEXT", "SECONDARY", "STATE"],
        cells.map { cell in
            [cell["cell"], cell["indexPath"], cell["item"] ?? cell["section"], cell["registration"]].map { Output.cell($0) }
                + [cell["reused"] == true ? "yes" : "no", Output.cell(cell["content"]?["type"]), Output.cell(cell["content"]?["text"]),
                   Output.cell(cell["content"]?["secondaryText"]), Output.cell(cell["state"])]
        })
    for cell in cells {
        for warning in cell["warnings"]?.arrayValue ?? [] { Output.error("warning: \(Output.cell(warning["code"])): \(Output.cell(warning["message"]))") }
        if let error = cell["error"] { Output.error("\(Output.cell(cell["cell"])): \(Output.cell(error["code"])): \(Output.cell(error["message"]))") }
    }
}

/// `section:item` → `[section, item]`.
func indexPath(_ text: String) throws -> JSONValue {
    let parts = text.split(separator: ":")
    guard parts.count == 2, let section = Int(parts[0]), let item = Int(parts[1]) else { throw ValidationError("\(text): expected section:item") }
    return [.int(section), .int(item)]
}

struct Dequeue: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Dequeue configured cells for index paths (section:item) of a view; --attach makes a view on this connection first.")
    @OptionGroup var connection: Connection
    @Argument(help: "The view.") var view: String
    @Argument(help: "Index paths as section:item.") var indexPaths: [String]
    @Option(help: "Attach a view of this name to this data source first (it lives as long as this command).") var attach: String?
    @Option(help: "The view's data source, when several have a view of that name.") var dataSource: String?
    func run() throws {
        let line = try connection.open()
        func send(_ value: JSONValue) throws -> JSONValue { try connection.send(value, on: line) }
        if let attach { _ = try send(request("attach", ["dataSource": .string(attach), "view": .string(view)])) }
        var members: [String: JSONValue] = ["view": .string(view), "indexPaths": .array(try indexPaths.map(indexPath))]
        if let dataSource { members["dataSource"] = .string(dataSource) }
        let result = try send(request("dequeue", members))
        if !connection.json { renderCells(result["cells"]?.arrayValue ?? []) }
    }
}

struct EndDisplaying: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Return cells of a view to their reuse pools.")
    @OptionGroup var connection: Connection
    @Argument(help: "The view.") var view: String
    @Argument(help: "Cell identifiers.") var cells: [String]
    @Option(help: "The view's data source, when several have a view of that name.") var dataSource: String?
    func run() throws {
        var members: [String: JSONValue] = ["view": .string(view), "cells": .array(cells.map { .string($0) })]
        if let dataSource { members["dataSource"] = .string(dataSource) }
        try connection.run(request("endDisplaying", members)) { print("released \(Output.cell($0["released"]))") }
    }
}

struct SetState: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change a displayed cell's state: `listctl set-state VIEW --item consult-1 selected=true isFavorite=1`.")
    @OptionGroup var connection: Connection
    @Argument(help: "The view.") var view: String
    @Option(help: "The cell.") var cell: String?
    @Option(help: "The item whose displayed cell changes.") var item: String?
    @Option(help: "The view's data source, when several have a view of that name.") var dataSource: String?
    @Argument(help: "State as name=value (values are JSON, e.g. selected=true).") var state: [String]
    func run() throws {
        var changes: [String: JSONValue] = [:]
        for entry in state {
            guard let equals = entry.firstIndex(of: "=") else { throw ValidationError("\(entry): expected name=value") }
            let text = String(entry[entry.index(after: equals)...])
            changes[String(entry[..<equals])] = (try? JSONParser.parse(text)) ?? .string(text)
        }
        var members: [String: JSONValue] = ["view": .string(view), "state": .object(changes)]
        if let cell { members["cell"] = .string(cell) }
        if let item { members["item"] = .string(item) }
        if let dataSource { members["dataSource"] = .string(dataSource) }
        try connection.run(request("setState", members)) { result in renderCells(result["cell"].map { [$0] } ?? []) }
    }
}

struct Call: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send any command: `listctl call appendItems dataSource=home 'items=[\"x\"]'` (values are JSON, else strings).")
    @OptionGroup var connection: Connection
    @Argument(help: "The command.") var command: String
    @Argument(help: "Arguments as name=value.") var arguments: [String] = []
    func run() throws {
        var members: [String: JSONValue] = [:]
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "=") else { throw ValidationError("\(argument): expected name=value") }
            let text = String(argument[argument.index(after: equals)...])
            members[String(argument[..<equals])] = (try? JSONParser.parse(text)) ?? .string(text)
        }
        try connection.run(request(command, members))
    }
}
