import DiffableCore
import Foundation
import ListWire
import Testing

/// `listctl export` on one listd and `listctl import` on another: the same query results afterwards.
@Suite("listctl export and import")
struct ExportImportTests {
    /// A data source using everything export carries: payloads, section data, an outline with a
    /// collapsed branch, a layout, cell provider rules with a default, a supplementary provider, and
    /// registrations (one cell, one supplementary).
    static func populate(_ daemon: Daemon) throws {
        let connection = try daemon.connect()
        let requests: [JSONValue] = [
            ["cmd": "register", "registration": "row", "contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{n}}"]],
            ["cmd": "register", "registration": "done", "contentConfiguration": ["type": "cell", "text": "✓ {{title}}"], "accessories": [["type": "checkmark"]]],
            [
                "cmd": "register", "registration": "header", "kind": "supplementary", "elementKind": "header",
                "contentConfiguration": ["type": "groupedHeader", "text": "{{title}}"],
            ],
            ["cmd": "register", "registration": "unused", "contentConfiguration": ["type": "cell", "text": "{{title}}"]],
            [
                "cmd": "apply", "dataSource": "tasks",
                "snapshot": ["sections": [
                    ["id": "today", "data": ["title": "Today"], "items": [["id": "milk", "data": ["title": "Milk", "n": 2]], ["id": "mail", "data": ["title": "Mail", "done": true]]]],
                    ["id": "later", "items": ["plain"]],
                ]],
            ],
            [
                "cmd": "applySectionSnapshot", "dataSource": "tasks", "section": "tree",
                "snapshot": ["items": [
                    ["id": "root", "data": ["title": "Root"], "expanded": true, "children": [
                        ["id": "open", "expanded": true, "children": [["id": "leaf"]]],
                        ["id": "shut", "expanded": false, "children": [["id": "hidden", "data": ["title": "Hidden"]]]],
                    ]],
                ]],
            ],
            [
                "cmd": "setLayout", "dataSource": "tasks",
                "layout": ["default": ["list": ["appearance": "insetGrouped", "headerMode": "supplementary", "footerMode": "none", "showsSeparators": false]]],
            ],
            [
                "cmd": "setCellProvider", "dataSource": "tasks",
                "rules": [["match": ["field": "done", "equals": true], "registration": "done"], ["section": "today", "registration": "row"]], "default": "row",
            ],
            ["cmd": "setSupplementaryProvider", "dataSource": "tasks", "elementKind": "header", "rules": [], "default": "header"],
            ["cmd": "setExpansionScope", "dataSource": "tasks", "scope": "perView"],
            ["cmd": "apply", "dataSource": "bare", "snapshot": ["sections": [["id": "s", "items": ["x", "y"]]]]],
        ]
        for request in requests { _ = try connection.request(request).result() }
    }

    /// What a client can ask about a data source, without versions (a fresh listd counts its own).
    static func observe(_ daemon: Daemon, _ name: String) throws -> [String: JSONValue] {
        let connection = try daemon.connect()
        var seen: [String: JSONValue] = [:]
        let snapshot = try connection.request(["cmd": "snapshot", "dataSource": .string(name)]).result()
        seen["sections"] = snapshot["sections"]
        for section in snapshot["sections"]?.arrayValue ?? [] {
            let id = section["id"]!.stringValue!
            seen["outline " + id] = try connection.request(["cmd": "sectionSnapshot", "dataSource": .string(name), "section": .string(id)]).result()["items"]
        }
        seen["layout"] = try connection.request(["cmd": "layout", "dataSource": .string(name)]).result()["layout"]
        let listed = try connection.request(["cmd": "listDataSources"]).result()["dataSources"]?.arrayValue ?? []
        seen["expansionScope"] = listed.first { $0["name"]?.stringValue == name }?["expansionScope"] ?? "shared"
        var provider = try connection.request(["cmd": "cellProvider", "dataSource": .string(name)]).result()
        for kind in provider["supplementaryKinds"]?.arrayValue ?? [] {
            seen["provider " + kind.stringValue!] = try connection.request(["cmd": "cellProvider", "dataSource": .string(name), "elementKind": kind]).result()["rules"]
        }
        if case .object(var members) = provider {
            members["version"] = nil
            provider = .object(members)
        }
        seen["provider"] = provider
        // The cells a view gets for every visible item, and the section headers.
        _ = try connection.request(["cmd": "attach", "dataSource": .string(name), "view": "observer"]).result()
        var paths: [JSONValue] = []
        for (index, section) in (snapshot["sections"]?.arrayValue ?? []).enumerated() {
            for item in 0..<(section["items"]?.arrayValue.count ?? 0) { paths.append([.int(index), .int(item)]) }
        }
        let cells = try connection.request(["cmd": "dequeue", "view": "observer", "indexPaths": .array(paths)]).result()["cells"]?.arrayValue ?? []
        seen["cells"] = .array(cells.map { ["item": $0["item"] ?? .null, "registration": $0["registration"] ?? .null, "content": $0["content"] ?? .null, "accessories": $0["accessories"] ?? .null] })
        return seen
    }

    static func registrations(_ daemon: Daemon) throws -> [String: JSONValue] {
        var found: [String: JSONValue] = [:]
        for entry in try daemon.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue ?? [] {
            found[entry["registration"]!.stringValue!] = entry["definition"]
        }
        return found
    }

    @Test func aRoundTripReproducesEveryQuery() throws {
        let source = try Daemon()
        try Self.populate(source)
        let exported = try runExecutable("listctl", ["export"], daemon: source)
        #expect(exported.status == 0, "\(exported.err)")
        let document = try JSONParser.parse(Array(exported.out.utf8))
        #expect(document["format"] == "listd-export" && document["formatVersion"] == 1)
        #expect(document["listd"] == .string("listd/" + ListdVersion.number))
        #expect(Set((document["registrations"]?.arrayValue ?? []).compactMap { $0["registration"]?.stringValue }) == ["row", "done", "header"],
                "the registrations the providers use, not the others")

        let target = try Daemon()
        let imported = try runExecutable("listctl", ["import", "-"], daemon: target, input: exported.out)
        #expect(imported.status == 0, "\(imported.err)")
        #expect(imported.out.contains("imported 2 data sources"))
        for name in ["tasks", "bare"] {
            #expect(try Self.observe(target, name) == Self.observe(source, name), "\(name) differs after the round trip")
        }
        let registrations = try Self.registrations(target)
        let original = try Self.registrations(source)
        for name in ["row", "done", "header"] { #expect(registrations[name] == original[name]) }
        #expect(registrations["unused"] == nil)
        #expect(try Self.observe(target, "tasks")["expansionScope"] == "perView")

        // The collapsed branch came along: expanding it on the target shows the hidden item.
        _ = try target.request(["cmd": "expand", "dataSource": "tasks", "section": "tree", "items": ["shut"]]).result()
        let tree = try target.request(["cmd": "snapshot", "dataSource": "tasks", "section": "tree"]).result()["sections"]?.arrayValue.first?["items"]
        #expect(tree?.arrayValue.compactMap { $0["id"]?.stringValue ?? $0.stringValue } == ["root", "open", "leaf", "shut", "hidden"])
    }

    /// Importing over existing data sources or different registrations changes nothing without
    /// --replace, naming every conflict; with it, the target ends up as the export.
    @Test func importRefusesToOverwriteUnlessReplacing() throws {
        let source = try Daemon()
        try Self.populate(source)
        let exported = try runExecutable("listctl", ["export", "tasks"], daemon: source)
        #expect(exported.status == 0)
        let file = source.directory + "/tasks.json"
        try exported.out.write(toFile: file, atomically: true, encoding: .utf8)

        let target = try Daemon()
        _ = try target.request(["cmd": "apply", "dataSource": "tasks", "snapshot": ["sections": [["id": "mine", "items": ["keep"]]]]]).result()
        _ = try target.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "mine"]]).result()
        let versionBefore = try target.request(["cmd": "snapshot", "dataSource": "tasks"]).result()["version"]
        let refused = try runExecutable("listctl", ["import", file], daemon: target)
        #expect(refused.status == 1)
        #expect(refused.err.contains("nothing was imported") && refused.err.contains("data source \"tasks\" exists")
                && refused.err.contains("registration \"row\" exists with another definition"), "\(refused.err)")
        #expect(try target.request(["cmd": "snapshot", "dataSource": "tasks"]).result()["version"] == versionBefore)
        #expect(try Self.registrations(target)["done"] == nil, "nothing registered either")

        let replaced = try runExecutable("listctl", ["import", "--replace", file], daemon: target)
        #expect(replaced.status == 0, "\(replaced.err)")
        #expect(try Self.observe(target, "tasks") == Self.observe(source, "tasks"))
        #expect(try Self.registrations(target)["row"] == Self.registrations(source)["row"])

        // An identical registration is no conflict: a second listd with the same one imports at once.
        let third = try Daemon()
        _ = try third.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{n}}"]]).result()
        let again = try runExecutable("listctl", ["import", file], daemon: third)
        #expect(again.status == 0 && again.out.contains("(1 already registered)"), "\(again)")
    }

    @Test func clearFailures() throws {
        let daemon = try Daemon()
        let missing = try runExecutable("listctl", ["export", "nosuch"], daemon: daemon)
        #expect(missing.status == 1 && missing.err.contains("data-source-not-found") && missing.out.isEmpty, "\(missing)")
        let notExport = try runExecutable("listctl", ["import", "-"], daemon: daemon, input: #"{"sections": []}"#)
        #expect(notExport.status != 0 && notExport.err.contains("is not a listctl export"), "\(notExport.err)")
        let future = try runExecutable("listctl", ["import", "-"], daemon: daemon, input: #"{"format": "listd-export", "formatVersion": 99}"#)
        #expect(future.status != 0 && future.err.contains("format version 99"), "\(future.err)")
        // Everything listd has, to a file; an empty listd exports an empty document.
        let empty = try runExecutable("listctl", ["export"], daemon: daemon)
        let document = try JSONParser.parse(Array(empty.out.utf8))
        #expect(document["dataSources"] == [] && document["registrations"] == [])
    }
}
