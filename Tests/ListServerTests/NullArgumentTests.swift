import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// "An argument given as `null` counts as absent" (PROTOCOL.md), for every optional argument `describe`
/// lists (and `minVersion` of the reads that take it): two listd instances get the same requests in
/// lockstep, one without the argument, the other with it as `null`, and must answer alike.
@Suite("Null arguments against a real listd", .serialized)
struct NullArgumentTests {
    /// Reads that take `minVersion` (PROTOCOL.md, "Several instances"; `describe` does not list it).
    static let readsWithMinimumVersion: Set<String> = [
        "snapshot", "item", "sectionSnapshot", "layout", "attach", "itemIdentifier", "indexPath", "numberOfItems", "outlineItem",
    ]

    /// Reply members that differ between two instances whatever the request: their pids and the random
    /// incarnation of each data source.
    static let instanceSpecific: Set<String> = ["pid", "incarnation"]

    @Test func nullAndAbsenceGetTheSameReplyForEveryOptionalArgument() throws {
        let absent = try Daemon()
        let null = try Daemon()
        let instances = [absent, null]
        // The same connections in the same order on both (view names count connections).
        let commands = try #require(try absent.request(["cmd": "describe"]).result()["commands"]?.arrayValue)
        _ = try null.request(["cmd": "describe"])
        for daemon in instances { try Self.register(on: daemon) }

        var swept = 0
        var answeredOK = 0
        var sweptByCommand: [String: Set<String>] = [:]
        for command in commands {
            let name = try #require(command["name"]?.stringValue)
            let arguments = command["arguments"]?.arrayValue ?? []
            var optional = arguments.filter { $0["required"] == false }.compactMap { $0["name"]?.stringValue }
            if Self.readsWithMinimumVersion.contains(name) { optional.append("minVersion") }
            let required = arguments.filter { $0["required"] == true }.compactMap { $0["name"]?.stringValue }
            for base in Self.bases(of: name, required: required) {
                for argument in optional where base[argument] == nil {
                    swept += 1
                    let dataSource = "d\(swept)"
                    var request = base
                    if base["dataSource"] != nil { request["dataSource"] = .string(dataSource) }
                    let withNull = request.merging([argument: .null]) { $1 }
                    let replies = try zip(instances, [request, withNull]).map { daemon, line in
                        let connection = try daemon.connect()
                        try Self.makeFixture(dataSource, on: connection)
                        return try connection.request(.object(line))
                    }
                    #expect(
                        Self.comparable(replies[0]) == Self.comparable(replies[1]),
                        "\(name) without \(argument): \(replies[0])\nwith \(argument): null: \(replies[1])")
                    if replies[0]["ok"] == true { answeredOK += 1 }
                    sweptByCommand[name, default: []].insert(argument)
                }
            }
        }
        // The sweep reached what the issue named, and most requests did their work (not just failed alike).
        for (command, argument) in [
            ("appendItems", "toSection"), ("insertItems", "beforeItem"), ("snapshot", "minVersion"), ("attach", "view"), ("apply", "ifVersion"),
        ] {
            #expect(sweptByCommand[command]?.contains(argument) == true, "\(command) \(argument) not swept")
        }
        #expect(swept >= 100 && answeredOK >= swept * 9 / 10, "\(answeredOK) of \(swept) answered ok")
    }

    /// A reply with the members that differ between instances blanked.
    static func comparable(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            return .object(
                Dictionary(uniqueKeysWithValues: members.map { key, member in (key, instanceSpecific.contains(key) ? "*" : comparable(member)) }))
        case .array(let elements): return .array(elements.map(comparable))
        default: return value
        }
    }

    /// The registrations every fixture uses: the to-do pair and a header; and `spare`, which the sweep of
    /// `unregister` (whose `owner` is optional) deletes, once, instead of one the fixtures need.
    static func register(on daemon: Daemon) throws {
        let connection = try daemon.connect()
        for line: JSONValue in [
            ["cmd": "register", "registration": "spare", "contentConfiguration": ["type": "cell", "text": "{{title}}"]],
            ["cmd": "register", "registration": "todoOpen", "contentConfiguration": ["type": "cell", "text": "{{title}}"]],
            ["cmd": "register", "registration": "todoDone", "contentConfiguration": ["type": "cell", "text": "✓ {{title}}"]],
            [
                "cmd": "register", "registration": "header", "kind": "supplementary", "elementKind": "header",
                "contentConfiguration": ["type": "plainHeader", "text": "H"],
            ],
        ] {
            _ = try connection.request(line).result()
        }
    }

    /// A data source every command has something to work on in: sections `s` (milk, eggs), `t` (bread) and
    /// the outline `o` (P with c1 and c2, collapsed; Q); reorderable to-do rules, a header, per-view
    /// expansion; the view `v` attached on `connection`, with milk's cell `c1` dequeued.
    static func makeFixture(_ dataSource: String, on connection: LineConnection) throws {
        let name = JSONValue.string(dataSource)
        for line: JSONValue in [
            [
                "cmd": "apply", "dataSource": name,
                "snapshot": [
                    "sections": [
                        ["id": "s", "items": [["id": "milk", "data": ["title": "Milk", "done": false]], ["id": "eggs", "data": ["title": "Eggs", "done": false]]]],
                        ["id": "t", "items": ["bread"]], ["id": "o", "items": []],
                    ]
                ],
            ],
            ["cmd": "applySectionSnapshot", "dataSource": name, "section": "o", "snapshot": ["items": [["id": "P", "children": ["c1", "c2"]], "Q"]]],
            [
                "cmd": "setCellProvider", "dataSource": name, "default": "todoOpen",
                "rules": [
                    ["match": ["field": "done", "equals": true], "registration": "todoDone", "reorderable": true],
                    ["registration": "todoOpen", "reorderable": true],
                ],
            ],
            ["cmd": "setSupplementaryProvider", "dataSource": name, "elementKind": "header", "default": "header"],
            ["cmd": "setExpansionScope", "dataSource": name, "scope": "perView"],
            ["cmd": "attach", "dataSource": name, "view": "v"],
            ["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]],
        ] {
            let reply = try connection.request(line)
            guard reply["ok"] == true else { throw ClientError("fixture: \(line) → \(reply)") }
        }
    }

    /// Requests of `command` that work on the fixture, before any optional argument is added: its
    /// required arguments, plus what some commands need of their optional ones (one request per choice
    /// where a command needs either of two).
    static func bases(of command: String, required: [String]) -> [[String: JSONValue]] {
        let usual: [String: JSONValue] = [
            "dataSource": "fixture", "view": "v", "registration": "todoOpen", "contentConfiguration": ["type": "cell", "text": "{{title}}"],
            "elementKind": "header", "indexPath": [0, 0], "indexPaths": [[0, 0]], "index": 0, "scope": "perView", "layout": [:],
            "cells": ["c1"], "state": ["selected": true], "request": 1, "section": "s", "item": "milk", "items": ["milk"], "sections": ["s"],
            "operations": [["cmd": "appendItems", "items": ["z"]]], "snapshot": ["sections": [["id": "s", "items": ["milk", "eggs"]]]],
        ]
        let specific: [String: [[String: JSONValue]]] = [
            "appendSections": [["sections": ["new"]]],
            "insertSections": [["sections": ["new"], "afterSection": "s"], ["sections": ["new"], "beforeSection": "s"]],
            "deleteSections": [["sections": ["t"]]],
            "moveSection": [["section": "t", "beforeSection": "s"], ["section": "s", "afterSection": "t"]],
            "updateSections": [["sections": [["id": "s", "data": ["x": 1]]]]],
            "appendItems": [["items": ["z"]]],
            "insertItems": [["items": ["z"], "afterItem": "milk"], ["items": ["z"], "beforeItem": "milk"]],
            "deleteItems": [["items": ["eggs"]]],
            "moveItem": [["item": "milk", "afterItem": "eggs"], ["item": "eggs", "beforeItem": "milk"]],
            "updateItems": [["items": [["id": "milk", "data": ["title": "Milk", "done": true]]]]],
            "applySectionSnapshot": [["section": "o", "snapshot": ["items": [["id": "P", "children": ["c1"]]]]]],
            "expand": [["section": "o", "items": ["P"]]],
            "collapse": [["section": "o", "items": ["P"]]],
            "expandInView": [["section": "o", "items": ["P"]]],
            "collapseInView": [["section": "o", "items": ["P"]]],
            "editSectionSnapshot": [["section": "o", "operations": [["op": "expand", "items": ["P"]]]]],
            "outlineItem": [["section": "o", "item": "P"]],
            "sectionSnapshot": [["section": "o"]],
            "reorder": [["item": "milk", "afterItem": "eggs"], ["item": "eggs", "beforeItem": "milk"]],
            "setState": [["item": "milk"], ["cell": "c1"]],
            "register": [["registration": "extra"]],
            "unregister": [["registration": "spare"]],
            "detach": [["view": "v"], ["dataSource": "fixture"]],
            "setCellProvider": [["default": "todoOpen"], ["rules": [["registration": "todoOpen"]]]],
            "setSupplementaryProvider": [["default": "header"], ["rules": [["registration": "header"]]]],
        ]
        var base: [String: JSONValue] = ["cmd": .string(command)]
        for name in required { base[name] = usual[name] }
        return (specific[command] ?? [[:]]).map { base.merging($0) { $1 } }
    }
}
