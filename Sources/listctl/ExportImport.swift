import ArgumentParser
import DiffableCore
import FileSafety
import Foundation
import ListClient
import ListWire

/// The marker and version of `listctl export` documents (protocol/export-format.md).
enum ExportFormat {
    static let marker = "listd-export"
    static let version = 1
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write data sources (default: all you may read) and the registrations they use as one JSON document.",
        discussion: """
            The document holds everything needed to recreate them elsewhere: snapshots with payloads, outlines with \
            their expansion state, layouts, cell and supplementary provider rules, and the registrations the rules \
            name (protocol/export-format.md). `listctl import` reads it.
            """)
    @OptionGroup var connection: Connection
    @Argument(help: "The data sources (none: every data source you may read).") var dataSources: [String] = []
    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.") var output: String?

    func run() throws {
        let line = try connection.open()
        var quiet = connection
        quiet.json = false
        func ask(_ command: String, _ members: [String: JSONValue] = [:]) throws -> JSONValue {
            try quiet.send(request(command, members), on: line)
        }
        var names = dataSources
        if names.isEmpty {
            names = (try ask("listDataSources")["dataSources"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        }
        var exported: [JSONValue] = []
        var used: [String] = []
        for name in names {
            let entry = try Self.consistentExport(of: name, ask: ask)
            exported.append(entry)
            var providers = [entry["cellProvider"]].compactMap { $0 }
            if case .object(let supplementary)? = entry["supplementaryProviders"] { providers += supplementary.values }
            for provider in providers {
                used += (provider["rules"]?.arrayValue ?? []).compactMap { $0["registration"]?.stringValue }
                if let fallback = provider["default"]?.stringValue { used.append(fallback) }
            }
        }
        let wanted = Set(used)
        let registrations = (try ask("registrations")["registrations"]?.arrayValue ?? [])
            .filter { wanted.contains($0["registration"]?.stringValue ?? "") }
            .map { JSONValue.object(["registration": $0["registration"] ?? .null, "definition": $0["definition"] ?? .object([:])]) }
        let found = Set(registrations.compactMap { $0["registration"]?.stringValue })
        for missing in wanted.subtracting(found).sorted() {
            Output.error("listctl: warning: the providers name \"\(missing)\", which is not registered; it is not in the export")
        }
        let document: JSONValue = .object([
            "format": .string(ExportFormat.marker), "formatVersion": .int(ExportFormat.version),
            "listd": try ask("hello", ["client": "listctl"])["server"] ?? .null,
            "registrations": .array(registrations), "dataSources": .array(exported),
        ])
        var bytes = document.jsonBytes
        bytes.append(UInt8(ascii: "\n"))
        if let output {
            do {
                try TrustedPath.replaceFile(output, with: bytes)
            } catch {
                Output.error("listctl: \(error)")
                throw ExitStatus.refused.exitCode
            }
            let items = exported.reduce(0) { $0 + ($1["items"]?.intValue ?? 0) }
            print("exported \(exported.count) data sources (\(items) items) and \(registrations.count) registrations to \(output)")
        } else {
            Output.line(bytes: Array(bytes.dropLast()))
        }
    }

    /// One data source as of one version: read again when it changed while being read (up to 5 times).
    static func consistentExport(of name: String, ask: (String, [String: JSONValue]) throws -> JSONValue) throws -> JSONValue {
        for _ in 0..<5 {
            let (entry, version) = try export(name, ask: ask)
            let now = try ask("cellProvider", ["dataSource": .string(name)])["version"]?.intValue
            if now == version { return entry }
        }
        Output.error("listctl: \(name) kept changing while being exported; try again when it is quieter")
        throw ExitStatus.refused.exitCode
    }

    /// Reads one data source with the queries a client has: snapshot, outlines, layout and providers.
    static func export(_ name: String, ask: (String, [String: JSONValue]) throws -> JSONValue) throws -> (JSONValue, Int?) {
        let target: [String: JSONValue] = ["dataSource": .string(name)]
        let snapshot = try ask("snapshot", target)
        let version = snapshot["version"]?.intValue
        let sections = snapshot["sections"]?.arrayValue ?? []
        var outlines: [String: JSONValue] = [:]
        for section in sections {
            guard let id = section["id"]?.stringValue else { continue }
            let outline = try ask("sectionSnapshot", target.merging(["section": .string(id)]) { a, _ in a })
            let items = outline["items"]?.arrayValue ?? []
            // Only real outlines: a flat one is the section's items, already in the snapshot.
            if items.contains(where: { $0["children"] != nil }) { outlines[id] = .object(["items": .array(items)]) }
        }
        let provider = try ask("cellProvider", target)
        var supplementary: [String: JSONValue] = [:]
        for kind in (provider["supplementaryKinds"]?.arrayValue ?? []).compactMap(\.stringValue) {
            supplementary[kind] = providerDefinition(try ask("cellProvider", target.merging(["elementKind": .string(kind)]) { a, _ in a }))
        }
        var entry: [String: JSONValue] = [
            "name": .string(name), "version": version.map { .int($0) } ?? .null,
            "items": .int(sections.reduce(0) { $0 + ($1["items"]?.arrayValue.count ?? 0) }),
            "snapshot": .object(["sections": .array(sections)]),
            "layout": try ask("layout", target)["layout"] ?? .object([:]),
        ]
        if !outlines.isEmpty { entry["outlines"] = .object(outlines) }
        if let definition = providerDefinition(provider) { entry["cellProvider"] = definition }
        if !supplementary.isEmpty { entry["supplementaryProviders"] = .object(supplementary) }
        // Whose expansion views show: listed only when it is not the default (shared).
        let listed = try ask("listDataSources", [:])["dataSources"]?.arrayValue ?? []
        if let scope = listed.first(where: { $0["name"]?.stringValue == name })?["expansionScope"] { entry["expansionScope"] = scope }
        return (.object(entry), version)
    }

    /// `{rules, default?}` as setCellProvider accepts it; nil for no rules and no default.
    static func providerDefinition(_ result: JSONValue) -> JSONValue? {
        let rules = result["rules"]?.arrayValue ?? []
        if rules.isEmpty && result["default"] == nil { return nil }
        var definition: [String: JSONValue] = ["rules": .array(rules)]
        if let fallback = result["default"] { definition["default"] = fallback }
        return .object(definition)
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recreate the data sources and registrations of a `listctl export` document (a file, or - for stdin).",
        discussion: """
            Checks first and changes nothing when a data source already exists or a registration of the same \
            name differs (an identical registration is used as it is). --replace drops such a data source \
            (its views get a dropped event) and replaces such a registration (its cells are drained).
            """)
    @OptionGroup var connection: Connection
    @Argument(help: "The export document, or - for standard input.") var file: String
    @Flag(help: "Overwrite data sources and registrations that exist.") var replace = false

    func run() throws {
        let document = try readJSON(file)
        guard document["format"]?.stringValue == ExportFormat.marker, let version = document["formatVersion"]?.intValue else {
            throw ValidationError("\(file) is not a listctl export (no \"format\": \"\(ExportFormat.marker)\")")
        }
        guard version <= ExportFormat.version else {
            throw ValidationError("\(file) is an export of format version \(version); this listctl reads up to \(ExportFormat.version)")
        }
        let registrations = document["registrations"]?.arrayValue ?? []
        let dataSources = document["dataSources"]?.arrayValue ?? []
        for entry in dataSources where entry["name"]?.stringValue == nil || entry["snapshot"] == nil {
            throw ValidationError("\(file): a data source without a name or a snapshot: \(Output.cell(entry))")
        }

        let line = try connection.open()
        var quiet = connection
        quiet.json = false
        @discardableResult
        func send(_ command: String, _ members: [String: JSONValue]) throws -> JSONValue {
            try quiet.send(request(command, members), on: line)
        }

        // Check everything before changing anything.
        let existingSources = Set((try send("listDataSources", [:])["dataSources"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
        var existingRegistrations: [String: JSONValue] = [:]
        for entry in try send("registrations", [:])["registrations"]?.arrayValue ?? [] {
            if let name = entry["registration"]?.stringValue { existingRegistrations[name] = entry["definition"] }
        }
        var conflicts: [String] = []
        var toRegister: [JSONValue] = []
        var toReplace: Set<String> = []
        for registration in registrations {
            guard let name = registration["registration"]?.stringValue else { continue }
            if let existing = existingRegistrations[name] {
                if existing == registration["definition"] { continue }
                conflicts.append("registration \"\(name)\" exists with another definition")
                toReplace.insert(name)
            }
            toRegister.append(registration)
        }
        let names = dataSources.compactMap { $0["name"]?.stringValue }
        for name in names where existingSources.contains(name) { conflicts.append("data source \"\(name)\" exists") }
        if !conflicts.isEmpty && !replace {
            Output.error("listctl: nothing was imported: \(conflicts.joined(separator: "; ")) (--replace overwrites)")
            throw ExitStatus.refused.exitCode
        }

        for registration in toRegister {
            guard let name = registration["registration"]?.stringValue, case .object(var members)? = registration["definition"] else { continue }
            if toReplace.contains(name) { try send("unregister", ["registration": .string(name)]) }
            members["registration"] = .string(name)
            try send("register", members)
        }
        var items = 0
        for entry in dataSources {
            let name = entry["name"]!.stringValue!
            let target: [String: JSONValue] = ["dataSource": .string(name)]
            if existingSources.contains(name) { try send("dropDataSource", target) }
            try send("apply", target.merging(["snapshot": entry["snapshot"]!]) { a, _ in a })
            items += entry["items"]?.intValue ?? 0
            if case .object(let outlines)? = entry["outlines"] {
                for section in outlines.keys.sorted() {
                    try send("applySectionSnapshot", target.merging(["section": .string(section), "snapshot": outlines[section]!]) { a, _ in a })
                }
            }
            if let layout = entry["layout"] { try send("setLayout", target.merging(["layout": layout]) { a, _ in a }) }
            if let scope = entry["expansionScope"] { try send("setExpansionScope", target.merging(["scope": scope]) { a, _ in a }) }
            if case .object(let provider)? = entry["cellProvider"] { try send("setCellProvider", target.merging(provider) { a, _ in a }) }
            if case .object(let providers)? = entry["supplementaryProviders"] {
                for kind in providers.keys.sorted() {
                    guard case .object(let provider)? = providers[kind] else { continue }
                    try send("setSupplementaryProvider", target.merging(provider) { a, _ in a }.merging(["elementKind": .string(kind)]) { a, _ in a })
                }
            }
        }
        let kept = registrations.count - toRegister.count
        print(
            "imported \(dataSources.count) data sources (\(items) items) and \(toRegister.count) registrations"
                + (kept > 0 ? " (\(kept) already registered)" : "")
                + (replace && !conflicts.isEmpty ? "; replaced: \(conflicts.count)" : ""))
    }
}
