import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// listd's resident memory in KiB (`VmRSS`).
func residentKilobytes(_ pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return 0 }
    return Int(line.split(separator: " ")[1]) ?? 0
}

/// Plugins that misbehave: one that never reads its configure requests, one that writes lines that are
/// not JSON, a card plugin given a property that overflows.
@Suite("Plugin hardening", .serialized)
struct PluginHardeningTests {
    /// Registration "r" of `plugin:<type>` for every item of data source "d" (items `i0`…, each with a
    /// `payloadBytes` string), and a view "v" on the returned connection.
    func setUp(_ daemon: Daemon, type: String, items: Int = 1, payloadBytes: Int = 10, view: String = "v") throws -> LineConnection {
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "register", "registration": "r", "contentConfiguration": ["type": .string("plugin:" + type)]])["ok"] == true)
        let payload = String(repeating: "x", count: payloadBytes)
        let elements: [JSONValue] = (0..<items).map { ["id": .string("i\($0)"), "data": ["text": .string(payload)]] }
        #expect(try connection.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": .array(elements)]]]])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "d", "rules": [], "default": "r"])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "d", "view": .string(view)])["ok"] == true)
        return connection
    }

    /// A plugin connection that said hello and will read nothing more.
    func connectPlugin(_ daemon: Daemon, name: String, type: String) throws -> LineConnection {
        let plugin = try daemon.connect()
        let hello = try plugin.request(["cmd": "hello", "role": "plugin", "name": .string(name), "provides": [.string(type)], "protocol": 1])
        #expect(hello["ok"] == true)
        return plugin
    }

    func plugins(_ daemon: Daemon) throws -> [JSONValue] {
        try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue
    }

    /// Reads what listd sent a plugin connection until listd closes it; false when it stays open.
    func closedByListd(_ connection: LineConnection, within timeout: Duration = .seconds(20)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let line = try? connection.readLine(timeout: .milliseconds(200)) else {
                if connection.isAtEnd { return true }
                continue
            }
            _ = line
        }
        return false
    }

    @Test func aPluginThatNeverReadsIsDisconnectedPastItsPendingLimit() throws {
        // A short deadline, so that dequeues go by quickly; the requests they leave unanswered still count.
        let daemon = try Daemon(configuration: ["pluginDeadlineMilliseconds": 5])
        let pid = daemon.process.processIdentifier
        let connection = try setUp(daemon, type: "hog", payloadBytes: 16_384)
        let hog = try connectPlugin(daemon, name: "hog", type: "hog")
        let before = residentKilobytes(pid)
        // 3,000 dequeues of a cell whose configure request is 16 KiB: 48 MiB listd would hold for a
        // plugin that never reads, without the limit.
        let dequeue = JSONValue.object(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).jsonBytes + [0x0A]
        let count = 3_000
        var codes: [String] = []
        var peak = before
        var pingWorst = Duration.zero
        for batch in 0..<(count / 100) {
            try connection.send(bytes: Array([[UInt8]](repeating: dequeue, count: 100).joined()))
            for _ in 0..<100 {
                let reply = try #require(try connection.readJSON(timeout: .seconds(30)))
                codes.append(reply.result()["cells"]?.arrayValue.first?["error"]?["code"]?.stringValue ?? "none")
            }
            peak = max(peak, residentKilobytes(pid))
            if batch % 5 == 0 {
                // Another connection is served promptly meanwhile.
                let start = ContinuousClock.now
                #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
                pingWorst = max(pingWorst, ContinuousClock.now - start)
            }
        }
        let timeouts = codes.filter { $0 == "plugin-timeout" }.count
        let unavailable = codes.filter { $0 == "plugin-unavailable" }.count
        #expect(timeouts <= 1_024, "at most maxPluginPendingRequests requests ever waited on the plugin")
        #expect(timeouts + unavailable == count && unavailable >= count - 1_024, "then its cells fail at once")
        #expect(codes.last == "plugin-unavailable")
        #expect(try plugins(daemon).isEmpty, "the plugin was disconnected")
        #expect(closedByListd(hog), "listd closed the plugin's connection")
        #expect(peak - before < 40_000, "listd held at most the limit's worth (\(before) KiB → peak \(peak) KiB)")
        #expect(pingWorst < .seconds(1), "a ping took \(pingWorst)")
        print("never-reading plugin: RSS \(before) KiB → peak \(peak) KiB; worst ping \(pingWorst); \(timeouts) timeouts, \(unavailable) unavailable")
    }

    @Test func cellsWaitingOnAnUnhealthyPluginFailAtOnce() throws {
        // No deadline a test reaches: only the disconnection can answer these dequeues.
        let daemon = try Daemon(configuration: ["pluginDeadlineMilliseconds": 600_000, "maxPluginPendingRequests": 8])
        let first = try setUp(daemon, type: "hog", items: 9)
        let hog = try connectPlugin(daemon, name: "hog", type: "hog")
        var views = [first]
        for index in 1..<9 {
            let connection = try daemon.connect()
            #expect(try connection.request(["cmd": "attach", "dataSource": "d", "view": .string("v\(index)")])["ok"] == true)
            views.append(connection)
        }
        for (index, connection) in views.prefix(8).enumerated() {
            try connection.send(["cmd": "dequeue", "view": .string(index == 0 ? "v" : "v\(index)"), "indexPaths": [[0, .int(index)]]])
        }
        #expect(try eventually { try plugins(daemon).first?["pending"] == 8 }, "eight requests wait on the plugin")
        // The ninth is past the limit: the plugin is disconnected, and every waiting cell fails now.
        let start = ContinuousClock.now
        let ninth = try views[8].request(["cmd": "dequeue", "view": "v8", "indexPaths": [[0, 8]]]).result()
        #expect(ninth["cells"]?.arrayValue.first?["error"]?["code"] == "plugin-unavailable")
        for connection in views.prefix(8) {
            let reply = try #require(try connection.readJSON(timeout: .seconds(10)))
            #expect(reply.result()["cells"]?.arrayValue.first?["error"]?["code"] == "plugin-unavailable")
        }
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(try plugins(daemon).isEmpty)
        #expect(closedByListd(hog))
        // Its type is free again: another plugin may provide it.
        let next = try connectPlugin(daemon, name: "next", type: "hog")
        #expect(try plugins(daemon).map { $0["name"] } == ["next"])
        _ = next
    }

    @Test func aSupervisedPluginThatStopsReadingIsRestarted() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Says hello, then never reads again (and never notices its connection closing).
        let script = directory + "/stuck.py"
        try """
            import json, os, socket, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(os.environ["LISTD_SOCKET"])
            s.sendall((json.dumps({"cmd": "hello", "role": "plugin", "name": "stuck", "provides": ["stuck"], "protocol": 1}) + "\\n").encode())
            s.recv(4096)
            while True:
                time.sleep(3600)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let daemon = try Daemon(configuration: [
            "pluginDeadlineMilliseconds": 5, "maxPluginPendingRequests": 16, "pluginStopGraceMilliseconds": 500,
            "plugins": [["name": "stuck", "command": ["/usr/bin/env", "python3", .string(script)]]],
        ])
        let connection = try setUp(daemon, type: "stuck")
        #expect(try eventually { try plugins(daemon).count == 1 })
        // Dequeues until listd gives up on the plugin (past 16 unanswered requests).
        var dequeues = 0
        while try !plugins(daemon).isEmpty && dequeues < 100 {
            _ = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]])
            dequeues += 1
        }
        #expect(dequeues == 17, "disconnected by the request past the limit")
        let supervised = { try daemon.request(["cmd": "stats"]).result()["supervisedPlugins"]!.arrayValue[0] }
        #expect(try eventually { try supervised()["starts"] == 2 && supervised()["running"] == true }, "killed and started again")
        #expect(try supervised()["lastExit"] == "killed by signal 15")
        #expect(try eventually { try plugins(daemon).count == 1 }, "the new process serves the type again")
    }

    @Test func aPluginLineThatIsNotJSONDisconnectsIt() throws {
        let daemon = try Daemon(configuration: ["pluginDeadlineMilliseconds": 600_000])
        let connection = try setUp(daemon, type: "garbled")
        let plugin = try connectPlugin(daemon, name: "garbled", type: "garbled")
        try connection.send(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]])
        let configure = try #require(try plugin.readJSON())
        #expect(configure["event"] == "configure")
        try plugin.send(line: "this is not JSON")
        let reply = try #require(try connection.readJSON(timeout: .seconds(20)), "the dequeue is answered without waiting for the deadline")
        #expect(reply.result()["cells"]?.arrayValue.first?["error"]?["code"] == "plugin-unavailable")
        #expect(try plugins(daemon).isEmpty)
        #expect(closedByListd(plugin))
        #expect(try daemon.stop() == 0)
        let log = daemon.log  // read once: it drains the pipe
        #expect(log.contains("not JSON") && log.contains("garbled"), "the reason, naming the plugin, is logged: \(log)")
    }

    @Test func theCardPluginAnswersAnOverflowingOffsetWithAnErrorAndServesOn() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        for (name, offset) in [("huge", JSONValue.int(1 << 62)), ("seoul", JSONValue.int(540)), ("text", .string("4611686018427387904"))] {
            #expect(try connection.request([
                "cmd": "register", "registration": .string(name),
                "contentConfiguration": ["type": "plugin:card", "dateFormat": "yyyy-MM-dd HH:mm", "utcOffsetMinutes": offset],
            ])["ok"] == true)
        }
        func consult(_ registration: String) -> JSONValue {
            ["title": "감기", "readCnt": 22, "regDate": 1_635_472_394_000, "reg": .string(registration)]
        }
        let items: [JSONValue] = [("a", "huge"), ("b", "seoul"), ("c", "text"), ("d", "seoul")].map { ["id": .string($0.0), "data": consult($0.1)] }
        #expect(try connection.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": .array(items)]]]])["ok"] == true)
        #expect(try connection.request([
            "cmd": "setCellProvider", "dataSource": "d", "default": "huge",
            "rules": [
                ["match": ["field": "reg", "equals": "seoul"], "registration": "seoul"],
                ["match": ["field": "reg", "equals": "text"], "registration": "text"],
            ],
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "d", "view": "v"])["ok"] == true)
        let card = Process()
        card.executableURL = binaryDirectory.appendingPathComponent("card-plugin")
        card.arguments = ["--socket", daemon.socketPath]
        card.standardError = FileHandle.nullDevice
        try card.start()
        defer {
            kill(card.processIdentifier, SIGKILL)
            card.waitUntilExit(within: .seconds(60))
        }
        #expect(try eventually { try plugins(daemon).count == 1 })
        let cells = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0], [0, 1], [0, 2]]]).result()["cells"]!.arrayValue
        #expect(cells[0]["error"]?["code"] == "plugin-unavailable")
        #expect(cells[0]["error"]?["message"]?.stringValue?.contains("utcOffsetMinutes") == true, "\(cells[0])")
        #expect(cells[1]["content"]?["secondaryText"] == "22 reads · 2021-10-29 10:53", "the same request's good cell")
        #expect(cells[2]["error"]?["code"] == "plugin-unavailable")
        #expect(card.isRunning, "the plugin did not crash")
        // And it serves the next request.
        let next = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 3]]]).result()["cells"]!.arrayValue
        #expect(next.first?["content"]?["text"] == "감기" && next.first?["error"] == nil)
        #expect(try plugins(daemon).first?["errors"] == 2)
    }
}
