import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

let pycard = protocolDirectory.deletingLastPathComponent().appendingPathComponent("plugins/python/pycard.py").path

/// A plugin process connected to a daemon.
final class PluginProcess {
    let process = Process()

    init(_ daemon: Daemon, arguments: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", pycard, "--socket", daemon.socketPath] + arguments
        process.standardError = FileHandle.nullDevice
        try process.start()
    }

    /// Kills the plugin outright (SIGKILL: a child of the test process may inherit a mask that blocks SIGTERM).
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit(within: .seconds(60))
    }

    deinit { kill() }
}

/// Waits until `condition` holds, for at most `limit` of time (where each try may itself take seconds,
/// e.g. a write to a database out of reach, so that a count of tries would not bound the wait).
func within(_ limit: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return try condition()
}

/// Waits until `condition` holds (polling stats). The limit, 30 seconds, only guards against a hang: a
/// busy machine may take long, and the condition is what is tested.
func eventually(_ condition: () throws -> Bool) throws -> Bool {
    for _ in 0..<1_500 {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return false
}

@Suite("Plugin cell providers", .serialized)
struct PluginTests {
    /// A data source "d" whose consult items use the plugin:pycard registration "card", the rest "plain",
    /// and a view "v" on the returned connection.
    func setUp(_ daemon: Daemon) throws -> LineConnection {
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "register", "registration": "card", "contentConfiguration": ["type": "plugin:pycard", "size": "{{n}}"], "accessories": [["type": "disclosureIndicator"]]])["ok"] == true)
        #expect(try connection.request(["cmd": "register", "registration": "plain", "contentConfiguration": ["type": "cell", "text": "{{title}}"]])["ok"] == true)
        #expect(try connection.request([
            "cmd": "apply", "dataSource": "d",
            "snapshot": ["sections": [
                ["id": "consult", "items": [["id": "c1", "data": ["title": "감기", "regDate": 1_635_472_394_000, "n": 1]], ["id": "c2", "data": ["title": "두통", "n": 2]]]],
                ["id": "other", "items": [["id": "o1", "data": ["title": "Plain"]]]],
            ]],
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "d", "rules": [["section": "consult", "registration": "card"]], "default": "plain"])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "d", "view": "v"])["ok"] == true)
        return connection
    }

    func pluginCount(_ daemon: Daemon) throws -> Int {
        try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue.count
    }

    @Test func aPythonPluginConfiguresCells() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon)
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let cells = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0], [1, 0], [0, 1]]]).result()["cells"]!.arrayValue
        #expect(cells.count == 3)
        #expect(cells[0]["content"] == ["type": "plugin:pycard", "text": "감기", "secondaryText": "2021-10-29"])
        #expect(cells[0]["accessories"]?.arrayValue.first?["type"] == "disclosureIndicator", "the registration's accessories still apply")
        #expect(cells[1]["content"]?["text"] == "Plain", "built-in cells in the same batch")
        #expect(cells[2]["content"]?["text"] == "두통" && cells[2]["content"]?["secondaryText"] == nil)
        let stats = try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue[0]
        #expect(stats["name"] == "pycard" && stats["requests"] == 1 && stats["cells"] == 2 && stats["timeouts"] == 0)
        _ = plugin
    }

    @Test func aHungPluginTimesOutAndNobodyElseWaits() throws {
        let daemon = try Daemon(configuration: ["pluginDeadlineMilliseconds": 2_000])
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon, arguments: ["--hang"])
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let start = ContinuousClock.now
        // A dequeue and a ping pipelined: the ping's reply comes after the dequeue's, in order.
        try connection.send(bytes: JSONValue.object(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0], [1, 0]], "id": 1]).jsonBytes + [0x0A]
            + JSONValue.object(["cmd": "ping", "id": 2]).jsonBytes + [0x0A])
        // Meanwhile another client is served: its ping is answered while the dequeue still waits.
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
        #expect(throws: ClientError.self, "the dequeue waits for the plugin") { try connection.readLine(timeout: .milliseconds(1)) }
        let reply = try #require(try connection.readJSON())
        #expect(reply["id"] == 1)
        let cells = reply.result()["cells"]!.arrayValue
        #expect(cells[0]["error"]?["code"] == "plugin-timeout")
        #expect(cells[1]["content"]?["text"] == "Plain")
        #expect(ContinuousClock.now - start >= .milliseconds(1_900), "answered at the deadline, not before")
        #expect(try connection.readJSON()?["id"] == 2)
        let stats = try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue[0]
        #expect(stats["timeouts"] == 1 && stats["pending"] == 0, "nothing left waiting")
        _ = plugin
    }

    @Test func aKilledPluginFailsItsCellsAtOnce() throws {
        // A deadline no test run reaches: the reply can only come from the plugin's death.
        let daemon = try Daemon(configuration: ["pluginDeadlineMilliseconds": 600_000])
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon, arguments: ["--hang"])
        #expect(try eventually { try pluginCount(daemon) == 1 })
        try connection.send(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]])
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["plugins"]?.arrayValue.first?["pending"] == 1 }, "the request reached the plugin")
        plugin.kill()
        let reply = try #require(try connection.readJSON(timeout: .seconds(60)))
        #expect(reply.result()["cells"]?.arrayValue.first?["error"]?["code"] == "plugin-unavailable")
        #expect(try eventually { try pluginCount(daemon) == 0 })
        // Without a plugin, its cells fail at once; a new plugin makes them work again.
        let none = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(none["error"]?["code"] == "plugin-unavailable")
        let again = try PluginProcess(daemon)
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let fixed = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(fixed["content"]?["text"] == "두통")
        _ = again
    }

    @Test func aPluginThatSendsGarbageIsDisconnected() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon, arguments: ["--garbage"])
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let cells = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue
        #expect(cells[0]["error"]?["code"] == "plugin-timeout" || cells[0]["error"]?["code"] == "plugin-unavailable")
        _ = plugin
    }

    @Test func twoPluginsCannotProvideTheSameType() throws {
        let daemon = try Daemon()
        let first = try PluginProcess(daemon)
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let second = try daemon.connect()
        let reply = try second.request(["cmd": "hello", "role": "plugin", "name": "impostor", "provides": ["pycard"]])
        #expect(reply.errorCode == "plugin-type-taken")
        #expect(try second.request(["cmd": "configured", "request": 1, "cells": []]).errorCode == "invalid-request", "not a plugin")
        #expect(try daemon.request(["cmd": "register", "registration": "bad", "contentConfiguration": ["type": "plugin:"]]).errorCode == "invalid-registration")
        _ = first
    }

    @Test func pluginCellsFollowStateAndPayloadChanges() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon)
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let cell = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        let id = try #require(cell["cell"])

        // setState: the reply waits for the plugin's new content; the cellUpdated event follows it.
        let selected = try connection.request(["cmd": "setState", "view": "v", "cell": id, "state": ["selected": true]]).result()["cell"]!
        #expect(selected["cell"] == id && selected["content"]?["text"] == "✓ 감기" && selected["state"] == ["selected": true])
        let event = try #require(try connection.readJSON())
        #expect(event["event"] == "cellUpdated" && event["cell"]?["content"]?["text"] == "✓ 감기")

        // A payload change from another client: the same cell, configured by the plugin again.
        let writer = try daemon.connect()
        #expect(try writer.request(["cmd": "updateItems", "dataSource": "d", "items": [["id": "c1", "data": ["title": "독감", "n": 1]]]])["ok"] == true)
        #expect(try connection.readJSON()?["event"] == "changes")
        let updated = try #require(try connection.readJSON())
        #expect(updated["event"] == "cellUpdated" && updated["cell"]?["cell"] == id)
        #expect(updated["cell"]?["content"] == ["type": "plugin:pycard", "text": "✓ 독감"])
        #expect(try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue[0]["requests"] == 3)

        // Without the plugin, the cell keeps its last content and the event says why.
        plugin.kill()
        #expect(try eventually { try pluginCount(daemon) == 0 })
        #expect(try writer.request(["cmd": "reconfigureItems", "dataSource": "d", "items": ["c1"]])["ok"] == true)
        #expect(try connection.readJSON()?["event"] == "changes")
        let failed = try #require(try connection.readJSON())
        #expect(failed["cell"]?["error"]?["code"] == "plugin-unavailable")
        #expect(failed["cell"]?["content"]?["text"] == "✓ 독감", "the previous content stays")
        let stillShown = try connection.request(["cmd": "setState", "view": "v", "cell": id, "state": ["selected": false]]).result()["cell"]!
        #expect(stillShown["error"]?["code"] == "plugin-unavailable" && stillShown["state"] == [:])
        #expect(try connection.request(["cmd": "endDisplaying", "view": "v", "cells": [id]]).result()["released"] == 1, "still displayed")
    }

    /// A plugin-configured outline: the cells carry their depth, and a toggled parent comes back from
    /// the plugin with its new expansion in its state.
    @Test func pluginCellsInAnOutline() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon)
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let writer = try daemon.connect()
        #expect(try writer.request([
            "cmd": "applySectionSnapshot", "dataSource": "d", "section": "consult",
            "snapshot": ["items": [["id": "p", "data": ["title": "Parent", "n": 1], "children": [["id": "ch", "data": ["title": "Child", "n": 2]]]]]],
        ])["ok"] == true)
        #expect(try connection.readJSON()?["event"] == "changes")
        let parent = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(parent["content"]?["text"] == "Parent" && parent["indentationLevel"] == nil && parent["state"] == [:])
        #expect(try writer.request(["cmd": "expand", "dataSource": "d", "section": "consult", "items": ["p"]])["ok"] == true)
        #expect(try connection.readJSON()?["event"] == "changes")
        let toggled = try #require(try connection.readJSON())
        #expect(toggled["event"] == "cellUpdated" && toggled["cell"]?["cell"] == parent["cell"])
        #expect(toggled["cell"]?["state"] == ["expanded": true] && toggled["cell"]?["content"]?["text"] == "Parent")
        let child = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(child["content"]?["text"] == "Child" && child["indentationLevel"] == 1)
        plugin.kill()
    }

    @Test func aPluginSwitchingContentTypesTriggersTheReplacedWarning() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon, arguments: ["--alternate"])
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let first = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(first["content"]?["type"] == "plugin:pycard" && first["warnings"] == nil)
        // The same cell, configured again: the plugin answers with its other type this time.
        let second = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(second["cell"] == first["cell"])
        #expect(second["content"]?["type"] == "plugin:pycardCompact")
        #expect(second["warnings"]?.arrayValue.first?["code"] == "content-configuration-replaced")
        let registration = try daemon.request(["cmd": "registrations"]).result()["registrations"]!.arrayValue.first { $0["registration"] == "card" }
        #expect(registration?["contentConfigurationsReplaced"] == 1)
        _ = plugin
    }

    @Test func aPluginNamingATypeItDoesNotProvideIsDisconnected() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon)
        let fake = try daemon.connect()
        #expect(try fake.request(["cmd": "hello", "role": "plugin", "name": "liar", "provides": ["pycard"]])["ok"] == true)
        try connection.send(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]])
        let configure = try #require(try fake.readJSON())
        #expect(configure["event"] == "configure")
        let cellID = try #require(configure["cells"]?.arrayValue.first?["cell"])
        try fake.send(["cmd": "configured", "request": configure["request"]!, "cells": [["cell": cellID, "content": ["type": "emoji", "text": "x"]]]])
        let reply = try #require(try connection.readJSON())
        #expect(reply.result()["cells"]?.arrayValue.first?["error"]?["code"] == "plugin-unavailable")
        #expect(try eventually { try pluginCount(daemon) == 0 }, "disconnected")
    }

    @Test func concurrentDequeuesMixPluginAndBuiltInCells() throws {
        let daemon = try Daemon()
        let owner = try setUp(daemon)
        // 200 more items in each section, then four views on four connections dequeueing at once.
        let consults: [JSONValue] = (0..<200).map { ["id": .string("k\($0)"), "data": ["title": .string("Consult \($0)")]] }
        let others: [JSONValue] = (0..<200).map { ["id": .string("p\($0)"), "data": ["title": .string("Plain \($0)")]] }
        #expect(try owner.request(["cmd": "appendItems", "dataSource": "d", "toSection": "consult", "items": .array(consults)])["ok"] == true)
        #expect(try owner.request(["cmd": "appendItems", "dataSource": "d", "toSection": "other", "items": .array(others)])["ok"] == true)
        let plugin = try PluginProcess(daemon)
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let failures = Failures()
        let socketPath = daemon.socketPath
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            do {
                let connection = try LineConnection(path: socketPath)
                let view = "w\(index)"
                guard try connection.request(["cmd": "attach", "dataSource": "d", "view": .string(view)])["ok"] == true else { throw ClientError("attach") }
                for round in 0..<20 {
                    // Ten consult (plugin) and ten plain (built-in) cells, interleaved.
                    let start = (round * 10 + index * 7) % 190
                    var paths: [JSONValue] = []
                    for offset in 0..<10 { paths += [[0, .int(2 + start + offset)], [1, .int(1 + start + offset)]] }
                    let reply = try connection.request(["cmd": "dequeue", "view": .string(view), "indexPaths": .array(paths)])
                    guard let cells = reply["result"]?["cells"]?.arrayValue else { throw ClientError("dequeue failed: \(reply)") }
                    for (position, cell) in cells.enumerated() {
                        let offset = position / 2
                        let expected = position % 2 == 0 ? "Consult \(start + offset)" : "Plain \(start + offset)"
                        if cell["content"]?["text"]?.stringValue != expected { failures.add("\(view): \(cell), expected \(expected)") }
                    }
                    let ids = cells.compactMap { $0["cell"] }
                    _ = try connection.request(["cmd": "endDisplaying", "view": .string(view), "cells": .array(ids)])
                }
            } catch {
                failures.add("\(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
        let stats = try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue[0]
        #expect(stats["cells"] == 800 && stats["requests"] == 80 && stats["pending"] == 0 && stats["timeouts"] == 0)
        _ = plugin
    }
}
