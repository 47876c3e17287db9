import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// A data source a user may not even read is, to that user, one that does not exist: every command that
/// names a data source, with every argument it takes, gets byte for byte the reply it gets for a name that
/// is not there (issue 46, finding 8).
@Suite("Hidden data sources answer as missing ones", .serialized)
struct HiddenDataSourceTests {
    /// Root's data source, hidden from everyone else by an access rule of level `none`.
    static let hidden = "private-hidden"
    /// A name nobody holds, of the same length (so the replies can be compared byte for byte).
    static let absent = "private-absent"

    @Test func everyCommandAndArgumentAnswersAHiddenDataSourceAsAMissingOne() throws {
        #expect(Self.hidden.utf8.count == Self.absent.utf8.count)
        let daemon = try sharedDaemon(configuration: ["access": [["dataSources": "private-*", "users": ["*"], "access": "none"]]])
        let root = try daemon.connect()
        for request: JSONValue in [
            ["cmd": "apply", "dataSource": .string(Self.hidden), "snapshot": ["sections": [["id": "S", "items": ["a", "b"]], ["id": "T", "items": ["c"]]]]],
            ["cmd": "applySectionSnapshot", "dataSource": .string(Self.hidden), "section": "S", "snapshot": ["items": [["id": "a", "children": [["id": "a1"]]], ["id": "b"]]]],
            ["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "{{title}}"]],
            ["cmd": "setCellProvider", "dataSource": .string(Self.hidden), "rules": [], "default": "row"],
            ["cmd": "setLayout", "dataSource": .string(Self.hidden), "layout": [:]],
            ["cmd": "attach", "dataSource": .string(Self.hidden), "view": "rootview"],
            ["cmd": "watchDisplay", "dataSource": .string(Self.hidden)],
        ] {
            _ = try root.request(request).result()
        }
        let before = try root.request(["cmd": "snapshot", "dataSource": .string(Self.hidden)]).result()
        let version = before["version"]?.intValue ?? 0
        #expect(version >= 3)
        let incarnation = try root.request(["cmd": "attach", "dataSource": .string(Self.hidden), "view": "probe"]).result()["incarnation"] ?? .null

        // nobody has a data source and a view of its own (views are looked up by name across data sources).
        let other = try connect(daemon)
        _ = try other.request(["cmd": "apply", "dataSource": "mine", "snapshot": ["sections": [["id": "S", "items": ["a"]]]]]).result()
        _ = try other.request(["cmd": "attach", "dataSource": "mine", "view": "v"]).result()

        let commands = try other.request(["cmd": "describe"]).result()["commands"]?.arrayValue ?? []
        var compared = 0
        var covered: Set<String> = []
        for command in commands {
            guard let name = command["name"]?.stringValue, let arguments = command["arguments"]?.arrayValue,
                arguments.contains(where: { $0["name"] == "dataSource" })
            else { continue }
            covered.insert(name)
            let variants = try Self.variants(of: name, arguments: arguments, version: version, incarnation: incarnation)
            for variant in variants {
                let hiddenReply = try other.requestLine(Self.request(name, variant, dataSource: Self.hidden)).line
                let absentReply = try other.requestLine(Self.request(name, variant, dataSource: Self.absent)).line
                let hiddenText = String(decoding: hiddenReply, as: UTF8.self)
                let absentText = String(decoding: absentReply, as: UTF8.self)
                #expect(
                    hiddenText.replacingOccurrences(of: Self.hidden, with: Self.absent) == absentText,
                    "\(name) \(JSONValue.object(variant)):\n hidden: \(hiddenText)\n absent: \(absentText)")
                compared += 1
            }
        }
        // Every command of the protocol that names a data source was tried (more come with new commands).
        #expect(covered.isSuperset(of: ["snapshot", "apply", "attach", "dequeue", "setLayout", "editSectionSnapshot", "watchDisplay", "access"]))
        #expect(compared > 400, "\(compared)")

        // A request line large enough to be read off the event loop, too.
        let large: [String: JSONValue] = ["snapshot": ["sections": [["id": "S", "items": .array((0..<30_000).map { .string("item-\($0)") })]]]]
        let hiddenLarge = try other.requestLine(Self.request("apply", large, dataSource: Self.hidden)).line
        let absentLarge = try other.requestLine(Self.request("apply", large, dataSource: Self.absent)).line
        #expect(hiddenLarge.count > 0 && String(decoding: hiddenLarge, as: UTF8.self).replacingOccurrences(of: Self.hidden, with: Self.absent) == String(decoding: absentLarge, as: UTF8.self))

        // Nothing changed the hidden data source, nothing made the absent one.
        #expect(try root.request(["cmd": "snapshot", "dataSource": .string(Self.hidden)]).result() == before)
        #expect(try root.request(["cmd": "snapshot", "dataSource": .string(Self.absent)]).errorCode == "data-source-not-found")
    }

    /// The request line: `arguments` with `dataSource` set to `dataSource`.
    static func request(_ command: String, _ arguments: [String: JSONValue], dataSource: String) -> JSONValue {
        var members = arguments
        members["id"] = 7
        members["cmd"] = .string(command)
        members["dataSource"] = .string(dataSource)
        return .object(members)
    }

    /// The argument sets tried for `command`: its required arguments with their first sample each, then
    /// that base with every sample of every argument in turn (`minVersion` too), then with all of them.
    /// An argument without samples fails the test: a new argument must be given some here.
    static func variants(of command: String, arguments: [JSONValue], version: Int, incarnation: JSONValue) throws -> [[String: JSONValue]] {
        let specs = arguments.compactMap { spec -> (name: String, required: Bool)? in
            guard let name = spec["name"]?.stringValue, name != "dataSource" else { return nil }
            return (name, spec["required"] == true)
        }
        func samples(_ argument: String) throws -> [JSONValue] {
            if let values = samplesByCommand["\(command).\(argument)"] ?? samplesByArgument[argument] { return values }
            switch argument {
            case "ifVersion", "minVersion", "fromVersion": return [0, 1, .int(version), .int(version + 1), .int(version + 1_000)]
            case "incarnation": return [incarnation, "0123456789abcdef"]
            default: throw ClientError("no sample values for argument \"\(argument)\" of \(command): add some to HiddenDataSourceTests")
            }
        }
        var base: [String: JSONValue] = [:]
        for spec in specs where spec.required { base[spec.name] = try samples(spec.name).first }
        var variants = [base]
        var everything = base
        for name in specs.map(\.name) + ["minVersion"] {
            for value in try samples(name) {
                var variant = base
                variant[name] = value
                // Arguments that go together are given together as well.
                if name == "fromVersion" { variant["incarnation"] = incarnation }
                variants.append(variant)
                if name != "minVersion" && name != "user" { everything[name] = value }
            }
        }
        variants.append(everything)
        return variants
    }

    /// Sample values by argument name: names and positions that exist in the hidden data source and ones
    /// that do not, well-formed and not.
    static let samplesByArgument: [String: [JSONValue]] = [
        "animatingDifferences": [true, false],
        "sections": [["T"], ["S"], [["id": "S", "data": ["title": "x"]]], ["Z"]],
        "section": ["S", "T", "Z"],
        "beforeSection": ["S", "T", "Z"],
        "afterSection": ["S", "Z"],
        "items": [["a"], ["x"], [["id": "a", "data": ["title": "t"]]], ["a1"]],
        "item": ["a", "a1", "x"],
        "toSection": ["S", "Z"],
        "beforeItem": ["a", "b", "x"],
        "afterItem": ["b", "x"],
        "snapshot": [["sections": [["id": "S", "items": ["a"]]]], ["sections": []]],
        "reloadData": [true],
        "operations": [[["cmd": "deleteItems", "items": ["a"]]], [["cmd": "appendItems", "items": ["y"]]], [["cmd": "nope"]]],
        "nullIfMissing": [true, false],
        "view": ["v", "rootview", "nope"],
        "offset": [0, 1, 9],
        "limit": [1, 100],
        "parent": ["a", "x"],
        "includingParent": [true],
        "indexPath": [[0, 0], [0, 9], [9, 0]],
        "indexPaths": [[[0, 0]], [[0, 9]], [[9, 0]]],
        "index": [0, 1, 9],
        "selectionEvents": [true],
        "expansion": [["S": ["expanded": ["a"]]], ["Z": ["collapsed": ["x"]]]],
        "stop": [true, false],
        "scope": ["perView", "shared"],
        "layout": [[:], ["default": ["kind": "list"]]],
        "rules": [[], [["registration": "row"]], [["registration": "nope"]]],
        "default": ["row", "nope"],
        "elementKind": ["header", "footer"],
        "cells": [["1"], ["999"]],
        "cell": ["1", "999"],
        "state": [["selected": true], ["expanded": true]],
        "user": ["nobody", "root", .int(Int(otherUID))],
    ]

    /// Samples for an argument whose shape depends on the command.
    static let samplesByCommand: [String: [JSONValue]] = [
        "applySectionSnapshot.snapshot": [["items": [["id": "a", "children": [["id": "a1"]]]]], ["items": []]],
        "editSectionSnapshot.operations": [
            [["op": "append", "items": ["n"], "parent": "a"]], [["op": "delete", "items": ["a1"]]], [["op": "expand", "items": ["a"]]],
            [["op": "deleteAll"]], [["op": "insert", "items": ["n"], "after": "b"]], [["op": "nope"]],
        ],
        "updateSections.sections": [[["id": "S", "data": ["title": "x"]]], [["id": "Z", "data": [:]]], ["S"]],
        "deleteSections.sections": [["S"], ["Z"]],
        "reloadSections.sections": [["S"], ["Z"]],
        "updateItems.items": [[["id": "a", "data": ["title": "t"]]], [["id": "x", "data": [:]]], ["a"]],
    ]
}
