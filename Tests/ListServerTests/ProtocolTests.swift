import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

@Suite("Wire protocol against a real listd", .serialized)
struct ProtocolTests {
    @Test func pipelinedRepliesComeInRequestOrderWithTheirIDs() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        var burst: [UInt8] = []
        for index in 0..<200 {
            burst += Array(#"{"id":\#(index),"cmd":"ping"}"#.utf8) + (index % 2 == 0 ? [0x0D, 0x0A] : [0x0A])
        }
        burst += Array(#"{"cmd":"ping","id":"text"}"#.utf8) + [0x0A] + Array("   \n\n".utf8) + Array(#"{"cmd":"ping"}"#.utf8) + [0x0A]
        try connection.send(bytes: burst)
        for index in 0..<200 { #expect(try connection.readJSON() == ["id": .int(index), "ok": true, "result": [:]]) }
        #expect(try connection.readJSON() == ["id": "text", "ok": true, "result": [:]])
        #expect(try connection.readJSON() == ["ok": true, "result": [:]], "blank lines get no reply; no id, none echoed")
    }

    @Test func badInputGetsErrorsAndChangesNothing() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let connection = try daemon.connect()
        let before = try connection.request(["cmd": "snapshot", "dataSource": "home"])
        let cases: [([UInt8], String)] = [
            (Array("garbage".utf8), "invalid-json"),
            ([0x7B, 0x22, 0x63, 0x6D, 0x64, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], "invalid-json"),  // invalid UTF-8
            (Array(String(repeating: "[", count: 5_000).utf8), "invalid-json"),  // too deep
            (Array(#"[1,2]"#.utf8), "invalid-request"),
            (Array(#"{"id":1}"#.utf8), "invalid-request"),
            (Array(#"{"cmd":"frobnicate"}"#.utf8), "unknown-command"),
            (Array(#"{"cmd":"appendItems","dataSource":"home","items":"x"}"#.utf8), "invalid-argument"),
            (Array(#"{"cmd":"appendItems","dataSource":"home","items":["x"],"toSecton":"consult"}"#.utf8), "invalid-argument"),
            (Array(#"{"cmd":"appendItems","dataSource":"home","items":["x"],"animatingDifferences":"no"}"#.utf8), "invalid-argument"),
            (Array(#"{"cmd":"editSectionSnapshot","dataSource":"home","section":"consult","operations":[{"op":"sort"}]}"#.utf8), "invalid-argument"),
            (Array(#"{"cmd":"editSectionSnapshot","dataSource":"home","section":"consult","operations":[{"op":"insert","items":["x"]}]}"#.utf8), "invalid-argument"),
            (Array(#"{"cmd":"setLayout","dataSource":"home","layout":{},"animatingDifferences":false}"#.utf8), "invalid-argument"),
            (Array(#"{"cmd":"appendItems","dataSource":"home","items":["x","x"]}"#.utf8), "duplicate-item"),
            (Array(#"{"cmd":"appendItems","dataSource":"nope","items":["x"]}"#.utf8), "data-source-not-found"),
            (Array(#"{"cmd":"moveItem","dataSource":"home","item":"consult-1","beforeItem":"consult-1"}"#.utf8), "invalid-move"),
            (Array(#"{"cmd":"insertSections","dataSource":"home","sections":["consult"],"afterSection":"expert"}"#.utf8), "duplicate-section"),
            (Array(#"{"cmd":"apply","dataSource":"home","snapshot":{"sections":[{"id":"a","items":["x"]},{"id":"b","items":["x"]}]}}"#.utf8), "duplicate-item"),
            (Array(#"{"cmd":"apply","dataSource":"home","ifVersion":41,"snapshot":{"sections":[]}}"#.utf8), "version-conflict"),
            (Array(#"{"cmd":"itemIdentifier","dataSource":"home","indexPath":[9,9]}"#.utf8), "index-out-of-range"),
            // A single instance: no other can bring a newer version, so it fails at once.
            (Array(#"{"cmd":"snapshot","dataSource":"home","minVersion":1000}"#.utf8), "version-not-reached"),
            (Array(#"{"cmd":"snapshot","dataSource":"home","minVersion":-1}"#.utf8), "invalid-argument"),
            (Array(#"{"cmd":"ping","minVersion":1}"#.utf8), "invalid-argument"),
        ]
        for (line, code) in cases {
            try connection.send(bytes: line + [0x0A])
            let reply = try #require(try connection.readJSON())
            #expect(reply["ok"] == false && reply.errorCode == code, "\(String(decoding: line, as: UTF8.self)) → \(reply)")
            let message = reply["error"]?["message"]?.stringValue ?? ""
            #expect(!message.isEmpty)
        }
        // A 50,000-operation batch whose last operation fails: an error naming it, and nothing changed.
        var operations: [JSONValue] = (0..<49_999).map { ["cmd": "appendItems", "items": [.string("b\($0)")], "toSection": "consult"] }
        operations.append(["cmd": "moveItem", "item": "missing", "beforeItem": "consult-1"])
        let batch = try connection.request(["cmd": "batch", "dataSource": "home", "operations": .array(operations)])
        #expect(batch.errorCode == "item-not-found")
        #expect(batch["error"]?["message"]?.stringValue?.hasPrefix("operations[49999]:") == true)
        let after = try connection.request(["cmd": "snapshot", "dataSource": "home"])
        #expect(after.jsonBytes == before.jsonBytes, "state stays byte-identical")
        #expect(try connection.request(["cmd": "ping"])["ok"] == true, "the connection stays usable")
        let version = try #require(after["result"]?["version"]?.intValue)
        #expect(try connection.request(["cmd": "snapshot", "dataSource": "home", "minVersion": .int(version)]).result()["version"] == .int(version))
    }

    @Test func overlongLinesAreRefusedThenTheConnectionCloses() throws {
        let daemon = try Daemon(arguments: ["--max-line-bytes", "1000"])
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "ping", "padding": .string(String(repeating: "x", count: 900))]).errorCode == "invalid-argument")
        try connection.send(line: #"{"cmd":"ping","padding":""# + String(repeating: "x", count: 2_000) + #""}"#)
        let reply = try #require(try connection.readJSON())
        #expect(reply.errorCode == "line-too-long")
        #expect(try connection.readLine() == nil, "closed after the reply")
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true, "others are served")
    }

    @Test func endOfInputFlushesAndCloses() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        try connection.send(bytes: Array(#"{"cmd":"ping","id":1}"#.utf8) + [0x0A] + Array(#"{"cmd":"ping","id":2}"#.utf8))
        connection.finishSending()
        #expect(try connection.readJSON()?["id"] == 1)
        #expect(try connection.readJSON()?["id"] == 2, "a last line without a newline is a request too")
        #expect(try connection.readLine(timeout: .seconds(5)) == nil, "closed once the replies are flushed")
    }

    @Test func limitsFromTheConfigurationFile() throws {
        let daemon = try Daemon(configuration: [
            "maxDataSources": 2, "maxItemsPerDataSource": 5, "maxBatchOperations": 3, "maxIdentifierBytes": 16,
        ])
        let connection = try daemon.connect()
        let limits = try connection.request(["cmd": "hello", "protocol": 1, "client": "tests"]).result()["limits"]
        #expect(limits?["maxItemsPerDataSource"] == 5)
        #expect(try connection.request(["cmd": "createDataSource", "dataSource": "a"])["ok"] == true)
        #expect(try connection.request(["cmd": "createDataSource", "dataSource": "a"]).errorCode == "data-source-exists")
        #expect(try connection.request(["cmd": "appendSections", "dataSource": "a", "sections": ["S"]])["ok"] == true)
        #expect(try connection.request(["cmd": "appendItems", "dataSource": "a", "items": ["1", "2", "3", "4", "5", "6"]]).errorCode == "limit-exceeded")
        #expect(try connection.request(["cmd": "appendItems", "dataSource": "a", "items": ["1234567890abcdefg"]]).errorCode == "limit-exceeded")
        let operations: [JSONValue] = (0..<4).map { _ in ["cmd": "deleteItems", "items": ["x"]] }
        #expect(try connection.request(["cmd": "batch", "dataSource": "a", "operations": .array(operations)]).errorCode == "limit-exceeded")
        #expect(try connection.request(["cmd": "createDataSource", "dataSource": "b"])["ok"] == true)
        #expect(try connection.request(["cmd": "createDataSource", "dataSource": "c"]).errorCode == "limit-exceeded")
        #expect(try connection.request(["cmd": "hello", "protocol": 2]).errorCode == "invalid-argument")
        #expect(try connection.request(["cmd": "detach", "view": "nothing"]).errorCode == "not-attached")
    }

    @Test func describeListsEveryCommandErrorAndEvent() throws {
        let daemon = try Daemon()
        let result = try daemon.request(["cmd": "describe"]).result()
        let commands = result["commands"]!.arrayValue.compactMap { $0["name"]?.stringValue }
        for name in [
            "hello", "ping", "describe", "stats", "createDataSource", "dropDataSource", "listDataSources", "apply",
            "appendSections", "insertSections", "deleteSections", "moveSection", "reloadSections", "appendItems", "insertItems",
            "deleteItems", "deleteAllItems", "moveItem", "reloadItems", "reconfigureItems", "updateItems", "applySectionSnapshot",
            "expand", "collapse", "batch", "snapshot", "sectionSnapshot", "numberOfSections", "numberOfItems", "itemIdentifier",
            "indexPath", "sectionIdentifier", "index", "item", "attach", "detach", "watchDisplay", "prefetch", "reorder", "registration", "editSectionSnapshot", "outlineItem",
            "setExpansionScope", "expandInView", "collapseInView",
        ] {
            #expect(commands.contains(name), "describe lacks \(name)")
        }
        let errors = result["errors"]!.arrayValue.compactMap { $0["code"]?.stringValue }
        #expect(Set(errors) == Set(ErrorCode.allCases.map(\.rawValue)))
        #expect(result["events"]!.arrayValue.compactMap { $0["name"]?.stringValue } == [
            "changes", "expansionChanged", "cellUpdated", "selectionChanged", "configure", "layoutChanged", "registrationChanged", "display", "didReorder",
            "dropped", "overflow", "shutdown",
        ])
    }
}

@Suite("systemd integration", .serialized)
struct SystemdTests {
    @Test func readinessStatusReloadAndStop() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let ready = try daemon.notify.wait(for: "READY=1")
        #expect(ready.contains("STATUS=Serving 3 data sources"))
        #expect(try daemon.request(["cmd": "appendItems", "dataSource": "home", "items": ["x"]])["ok"] == true)
        try daemon.notify.wait(for: "STATUS=Serving 3 data sources, 152 items", timeout: .seconds(5))
        kill(daemon.process.processIdentifier, SIGHUP)
        let reloading = try daemon.notify.wait(for: "RELOADING=1")
        #expect(reloading.contains("MONOTONIC_USEC="))
        try daemon.notify.wait(for: "READY=1")
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
        #expect(try daemon.stop() == 0)
        try daemon.notify.wait(for: "STOPPING=1")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file is removed")
    }

    @Test func reloadAppliesNewLimitsAndKeepsThemOnABadFile() throws {
        let daemon = try Daemon(configuration: ["maxBatchOperations": 3])
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]])["ok"] == true)
        let four: JSONValue = .array((0..<4).map { _ in ["cmd": "deleteItems", "items": ["x"]] })
        #expect(try connection.request(["cmd": "batch", "dataSource": "d", "operations": four]).errorCode == "limit-exceeded")
        let path = daemon.directory + "/listd.json"
        try Data(JSONValue.object(["maxBatchOperations": 10]).jsonBytes).write(to: URL(fileURLWithPath: path))
        // Waits for a READY=1 after the signal (not the one sent at start).
        try reload(daemon)
        #expect(try connection.request(["cmd": "batch", "dataSource": "d", "operations": four])["ok"] == true)
        // A broken file: the running limits stay.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        try reload(daemon)
        #expect(try connection.request(["cmd": "hello"]).result()["limits"]?["maxBatchOperations"] == 10)
        #expect(try daemon.stop() == 0)
        #expect(daemon.log.contains("reload failed"))
    }

    /// At debug level every request is logged (connection, user, command, outcome, duration); stderr
    /// lines start with a UTC timestamp; control characters from clients are escaped.
    @Test func theRequestLogAtDebugLevel() throws {
        let daemon = try Daemon(arguments: ["--log-level", "debug"])
        let connection = try daemon.connect()
        _ = try connection.request(["cmd": "ping"]).result()
        #expect(try connection.request(["cmd": "appendItems", "dataSource": "x\u{1B}[2J", "items": ["a"]]).errorCode == "data-source-not-found")
        try connection.send(line: "nope")
        _ = try connection.readJSON()
        try daemon.stop()
        let lines = daemon.log.split(separator: "\n")
        #expect(lines.allSatisfy { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z listd\[\d+\]: "#, options: .regularExpression) != nil }, "\(lines.prefix(3))")
        let requests = lines.filter { $0.contains("debug: request ") }
        #expect(requests.count == 3, "\(requests)")
        #expect(requests.first?.contains("command=ping") == true && requests.first?.contains("outcome=ok") == true)
        #expect(requests.first?.contains("user=root") == true && requests.first?.contains("microseconds=") == true)
        #expect(requests.contains { $0.contains("command=appendItems") && $0.contains("outcome=data-source-not-found") })
        #expect(requests.contains { $0.contains("command=-") && $0.contains("outcome=invalid-json") })
        #expect(!daemon.log.contains("\u{1B}"), "no raw escape reaches the log")
    }

    /// `logLevel` in the configuration file takes effect on a reload (SIGHUP), as the other settings do.
    @Test func aReloadChangesTheLogLevel() throws {
        let daemon = try Daemon(configuration: ["logLevel": "info"])
        _ = try daemon.request(["cmd": "ping", "note": "before"])
        try Data(#"{"logLevel": "debug"}"#.utf8).write(to: URL(fileURLWithPath: daemon.directory + "/listd.json"))
        try reload(daemon)
        _ = try daemon.request(["cmd": "listDataSources"])
        try Data(#"{"logLevel": "info"}"#.utf8).write(to: URL(fileURLWithPath: daemon.directory + "/listd.json"))
        try reload(daemon)
        _ = try daemon.request(["cmd": "stats"])
        try daemon.stop()
        let log = daemon.log
        let requests = log.split(separator: "\n").filter { $0.contains("debug: request ") }
        #expect(requests.count == 1 && requests.first?.contains("command=listDataSources") == true, "\(log)")
        #expect(log.contains("log level info → debug") && log.contains("log level debug → info"), "\(log)")
    }

    @Test func watchdogPingsWhenAsked() throws {
        let daemon = try Daemon(environment: ["WATCHDOG_USEC": "200000"])
        try daemon.notify.wait(for: "WATCHDOG=1", timeout: .seconds(5))
        #expect(try daemon.stop() == 0)
    }

    @Test func sigtermTellsViewsAndExitsZero() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let view = try daemon.connect()
        #expect(try view.request(["cmd": "attach", "dataSource": "home"])["ok"] == true)
        let other = try daemon.connect()
        #expect(try daemon.stop() == 0)
        #expect(try view.readJSON() == ["event": "shutdown"])
        #expect(try view.readLine() == nil)
        // Plain connections are closed too; one that listd had not accepted yet when it began stopping is
        // told `shutting-down` first.
        if let line = try other.readJSON() {
            #expect(line.errorCode == "shutting-down", "\(line)")
            #expect(try other.readLine() == nil)
        }
    }

    @Test func socketActivation() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/activated.sock"
        let notify = try NotifySocket(directory: directory)
        defer { notify.close() }
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        environment["SWIFT_BACKTRACE"] = "enable=no"
        // Started without Foundation: systemd-socket-activate closes every descriptor it inherited,
        // Foundation's watch on its end among them (see SpawnedChild).
        let activator = try SpawnedChild(
            [
                "/usr/bin/systemd-socket-activate", "-l", socketPath, "-E", "NOTIFY_SOCKET=\(notify.path)", "-E", "SWIFT_BACKTRACE=enable=no",
                binaryDirectory.appendingPathComponent("listd").path, "--demo", "--ephemeral",
            ], environment: environment)
        // systemd-socket-activate starts listd on the first connection.
        var connection: LineConnection?
        for _ in 0..<1_500 where connection == nil {
            connection = try? LineConnection(path: socketPath)
            if connection == nil { Thread.sleep(forTimeInterval: 0.02) }
        }
        let reply = try #require(connection).request(["cmd": "listDataSources"])
        #expect(reply.result()["dataSources"]?.arrayValue.count == 3)
        try notify.wait(for: "READY=1")
        kill(activator.pid, SIGTERM)
        #expect(activator.wait(within: .seconds(60)) != nil, "listd stops on SIGTERM")
        #expect(FileManager.default.fileExists(atPath: socketPath), "an inherited socket is never unlinked")
    }
}
