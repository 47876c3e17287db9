import ArgumentParser
import DiffableCore
import ListClient
import ListViewCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Cells

struct Register: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a registration from a JSON definition {kind?, elementKind?, contentConfiguration, background?, accessories?}.")
    @OptionGroup var connection: Connection
    @Argument(help: "The registration's name.") var name: String
    @Argument(help: "The definition file, or - for standard input.") var file: String = "-"
    @Flag(help: "Replace the definition of an existing registration (of the same kind); views configure their cells anew.") var replace = false
    @Option(help: "With --replace: the user (name or uid) whose registration to replace (another's: administrators only). Default: your own.")
    var owner: String?
    func run() throws {
        guard case .object(var members) = try readJSON(file) else { throw ValidationError("\(file): the definition must be a JSON object") }
        members["registration"] = .string(name)
        if replace { members["replace"] = true }
        if let owner { members["owner"] = RegistrationOwner.argument(owner) }
        try connection.run(request("register", members)) { result in
            let what = result["created"] == true ? "created" : result["replaced"] == true ? "replaced" : "unchanged"
            print("\(what) \(TerminalText.name(name))\(RegistrationOwner.suffix(result)) (\(Output.cell(result["kind"])), \(Output.cell(result["type"])))")
            for warning in result["warnings"]?.arrayValue ?? [] {
                Output.error("warning: \(warning["code"]?.stringValue ?? ""): \(warning["message"]?.stringValue ?? "")")
            }
        }
    }
}

struct ShowRegistration: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registration",
        abstract: "Show one registration: its kind, owner, cell counters and definition.",
        discussion: "With --json the reply as it is; `listctl --json registration A | jq .result.definition | listctl register B -` copies a definition.")
    @OptionGroup var connection: Connection
    @Argument(help: "The registration.") var name: String
    @Option(help: "The user (name or uid) whose registration to show. Default: your own, else the only one of that name.") var owner: String?
    func run() throws {
        var members: [String: JSONValue] = ["registration": .string(name)]
        if let owner { members["owner"] = RegistrationOwner.argument(owner) }
        try connection.run(request("registration", members)) { result in
            print(
                "\(TerminalText.name(name)) (\(Output.cell(result["kind"])), \(Output.cell(result["type"]))), owner uid \(Output.cell(result["owner"])) (\(TerminalText.name(result["ownerName"]?.stringValue ?? "?")))")
            print("cells: \(Output.cell(result["created"])) created, \(Output.cell(result["reused"])) reused, \(Output.cell(result["displayed"])) displayed, \(Output.cell(result["pooled"])) pooled")
            print(Output.cell(result["definition"]))
        }
    }
}

struct Unregister: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete one of your registrations (draining its reuse pools).")
    @OptionGroup var connection: Connection
    @Argument(help: "The registration.") var name: String
    @Option(help: "The user (name or uid) whose registration to delete (another's: administrators only). Default: your own.") var owner: String?
    func run() throws {
        var members: [String: JSONValue] = ["registration": .string(name)]
        if let owner { members["owner"] = RegistrationOwner.argument(owner) }
        try connection.run(request("unregister", members)) { result in
            print("unregistered \(TerminalText.name(name))\(RegistrationOwner.suffix(result)); drained \(Output.cell(result["drained"])) cells")
        }
    }
}

/// The `--owner` of the registration commands, and whose a registration in a reply is.
enum RegistrationOwner {
    /// A uid as a number, else a user name.
    static func argument(_ owner: String) -> JSONValue {
        Int(owner).map { .int($0) } ?? .string(owner)
    }

    /// ` of NAME` for a reply's `ownerName` (escaped for the terminal) when it is another user's; empty
    /// for one's own.
    static func suffix(_ result: JSONValue) -> String {
        guard result["owner"]?.intValue != Int(getuid()) else { return "" }
        return result["ownerName"]?.stringValue.map { " of \(TerminalText.name($0))" } ?? ""
    }

    /// A registration a provider rule names: `row`, or `row of uid 1000` for another user's.
    static func reference(_ value: JSONValue?) -> String {
        guard let name = value?["name"]?.stringValue, let owner = value?["owner"] else { return Output.cell(value) }
        return "\(TerminalText.name(name)) of uid \(Output.cell(owner))"
    }
}

struct Registrations: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List every user's registrations with their owners and cell counters.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("registrations", [:])) { result in
            Output.table(
                ["REGISTRATION", "OWNER", "KIND", "TYPE", "CREATED", "REUSED", "DISPLAYED", "POOLED", "RELEASED", "REPLACED", "NEVER REUSED"],
                (result["registrations"]?.arrayValue ?? []).map { entry in
                    [TerminalText.name(entry["registration"]?.stringValue ?? ""), TerminalText.name(entry["ownerName"]?.stringValue ?? Output.cell(entry["owner"]))]
                        + [entry["kind"], entry["type"], entry["created"], entry["reused"], entry["displayed"],
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
        abstract: "Show a data source's cell provider rules, or set them from {\"rules\"?: [...], \"default\"?: …} (a file, or - for stdin).",
        discussion: "Without a file it prints the current rules; with --json exactly the JSON that setting accepts, so `listctl --json cell-provider A | listctl cell-provider B -` copies them.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The rules file, or - for standard input (none: show the current rules).") var file: String?
    @Option(help: "The supplementary provider for this element kind instead (e.g. header).") var elementKind: String?
    func run() throws {
        guard let file else { return try show() }
        guard case .object(var members) = try readJSON(file) else {
            throw ExitStatus.fail(.refused, "\(file): expected {\"rules\": [...], \"default\": …}")
        }
        members["dataSource"] = .string(dataSource)
        if let elementKind { members["elementKind"] = .string(elementKind) }
        // Only a default: the rules stay (setting a provider replaces it whole, so they are sent again).
        var current: [String: JSONValue] = ["dataSource": .string(dataSource)]
        if let elementKind { current["elementKind"] = .string(elementKind) }
        let previous = try connection.result(of: request("cellProvider", current))["rules"]?.arrayValue ?? []
        let kept = members["rules"] == nil
        if kept { members["rules"] = .array(previous) }
        let fallback = members["default"]
        try connection.run(request(elementKind == nil ? "setCellProvider" : "setSupplementaryProvider", members)) { result in
            let count = result["rules"]?.intValue ?? 0
            let rules = "\(count) rule\(count == 1 ? "" : "s")"
            let what = kept ? (count == 0 ? "no rules" : "\(rules) kept") : "\(rules) set" + (previous.isEmpty ? "" : " (replacing \(previous.count))")
            print(what + "; default: " + (fallback.map { Output.cell($0) } ?? "none (the default presentation)"))
        }
    }

    private func show() throws {
        var members: [String: JSONValue] = ["dataSource": .string(dataSource)]
        if let elementKind { members["elementKind"] = .string(elementKind) }
        let result = try connection.result(of: request("cellProvider", members))
        var provider: [String: JSONValue] = ["rules": result["rules"] ?? .array([])]
        if let fallback = result["default"] { provider["default"] = fallback }
        if connection.json { return Output.line(bytes: JSONValue.object(provider).jsonBytes) }
        let rules = result["rules"]?.arrayValue ?? []
        if !rules.isEmpty {
            Output.table(
                ["SECTION", "MATCH", "REGISTRATION"],
                rules.map { rule in
                    let match = rule["match"].map { "\(Output.cell($0["field"])) = \(Output.cell($0["equals"]))" } ?? "-"
                    return [rule["section"].map { Output.cell($0) } ?? "any", match, RegistrationOwner.reference(rule["registration"])]
                })
        }
        if let fallback = result["default"] {
            print("default: \(RegistrationOwner.reference(fallback))")
        } else {
            print(rules.isEmpty ? "no rules: every item shows the default presentation" : "no default: unmatched items show the default presentation")
        }
    }
}

struct Layout: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a data source's layout, or set it from a JSON file (or - for stdin).",
        discussion: "Without a file it prints the current layout, section by section; with --json exactly the JSON that setting accepts, so `listctl --json layout A | listctl layout B -` copies it.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Argument(help: "The layout file, or - for standard input (none: show the current layout).") var file: String?
    func run() throws {
        guard let file else {
            let result = try connection.result(of: request("layout", ["dataSource": .string(dataSource)]))
            let layout = result["layout"] ?? .object([:])
            if connection.json { return Output.line(bytes: layout.jsonBytes) }
            var rows = [["(default)", Self.describe(layout["default"])]]
            if case .object(let sections)? = layout["sections"] {
                rows += sections.keys.sorted().map { [TerminalText.name($0), Self.describe(sections[$0])] }
            }
            return Output.table(["SECTION", "LAYOUT"], rows)
        }
        let layout = try readJSON(file)
        try connection.run(request("setLayout", ["dataSource": .string(dataSource), "layout": layout])) { result in
            print("layout set (version \(result["version"]?.intValue ?? 0))")
        }
    }
}

extension Layout {
    /// One section's layout in a line: `list insetGrouped, headers supplementary` or `group horizontal
    /// 0.8 wide × 4 rows, scrolls groupPaging, header 1 row`.
    static func describe(_ section: JSONValue?) -> String {
        guard let section else { return "list plain (default)" }
        var parts: [String] = []
        if let list = section["list"] {
            var text = "list \(Output.cell(list["appearance"] ?? "plain"))"
            if let header = list["headerMode"]?.stringValue, header != "none" { text += ", headers \(header)" }
            if let footer = list["footerMode"]?.stringValue, footer != "none" { text += ", footers \(footer)" }
            if list["showsSeparators"] == false { text += ", no separators" }
            parts.append(text)
        }
        if let group = section["group"] {
            var text = "group \(Output.cell(group["axis"] ?? "vertical")) \(dimension(group["width"])) wide × \(dimension(group["height"])) high"
            if let count = group["count"]?.intValue { text += ", \(count) per group" }
            parts.append(text)
        }
        if let scrolling = section["orthogonalScrollingBehavior"]?.stringValue, scrolling != "none" { parts.append("scrolls \(scrolling)") }
        if let spacing = section["interGroupSpacing"]?.intValue, spacing > 0 { parts.append("spacing \(spacing)") }
        for kind in ["header", "footer"] {
            guard let element = section[kind] else { continue }
            let rows = element["height"]?.intValue ?? 1
            let elementKind = element["elementKind"]?.stringValue ?? kind
            parts.append("\(kind)\(elementKind == kind ? "" : " \"\(TerminalText.name(elementKind))\"") \(rows) row\(rows == 1 ? "" : "s")")
        }
        return parts.isEmpty ? Output.cell(section) : parts.joined(separator: ", ")
    }

    /// `0.8` (fractional), `4 rows` (absolute), `~3` (estimated).
    private static func dimension(_ value: JSONValue?) -> String {
        if let fraction = value?["fractionalWidth"] ?? value?["fractionalHeight"] { return Output.cell(fraction) }
        if let absolute = value?["absolute"] { return Output.cell(absolute) }
        if let estimated = value?["estimated"] { return "~" + Output.cell(estimated) }
        return "?"
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
