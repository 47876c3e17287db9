import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

let pycard = protocolDirectory.deletingLastPathComponent().appendingPathComponent("plugins/python/pycard.py").path

/// A plugin process connected to a daemon.
final class PluginProcess {
    let process = Process()

    init(_ daemon: Daemon, arguments: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", pycard, "--socket", daemon.socketPath] + arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Kills the plugin outright (SIGKILL: a child of the test process may inherit a mask that blocks SIGTERM).
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { kill() }
}

/// Waits until `condition` holds (polling stats), at most five seconds.
func eventually(_ condition: () throws -> Bool) throws -> Bool {
    for _ in 0..<250 {
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
        let daemon = try Daemon(configuration: ["pluginDeadlineMilliseconds": 300])
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon, arguments: ["--hang"])
        #expect(try eventually { try pluginCount(daemon) == 1 })
        let start = ContinuousClock.now
        // A dequeue and a ping pipelined: the ping's reply comes after the dequeue's, in order.
        try connection.send(bytes: JSONValue.object(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0], [1, 0]], "id": 1]).jsonBytes + [0x0A]
            + JSONValue.object(["cmd": "ping", "id": 2]).jsonBytes + [0x0A])
        // Meanwhile another client is served at once.
        let other = ContinuousClock.now
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
        #expect(ContinuousClock.now - other < .milliseconds(250))
        let reply = try #require(try connection.readJSON())
        #expect(reply["id"] == 1)
        let cells = reply.result()["cells"]!.arrayValue
        #expect(cells[0]["error"]?["code"] == "plugin-timeout")
        #expect(cells[1]["content"]?["text"] == "Plain")
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(try connection.readJSON()?["id"] == 2)
        let stats = try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue[0]
        #expect(stats["timeouts"] == 1)
        _ = plugin
    }

    @Test func aKilledPluginFailsItsCellsAtOnce() throws {
        let daemon = try Daemon(configuration: ["pluginDeadlineMilliseconds": 5_000])
        let connection = try setUp(daemon)
        let plugin = try PluginProcess(daemon, arguments: ["--hang"])
        #expect(try eventually { try pluginCount(daemon) == 1 })
        try connection.send(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]])
        Thread.sleep(forTimeInterval: 0.2)
        let start = ContinuousClock.now
        plugin.kill()
        let reply = try #require(try connection.readJSON())
        #expect(reply.result()["cells"]?.arrayValue.first?["error"]?["code"] == "plugin-unavailable")
        #expect(ContinuousClock.now - start < .seconds(2), "well before the 5 s deadline")
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
}
