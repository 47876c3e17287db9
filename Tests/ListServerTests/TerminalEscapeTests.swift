import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// Identifiers and payloads holding terminal escapes (an OSC 52 clipboard write, a window title, BEL,
/// an 8-bit CSI) are never written raw by listctl and listview: human output shows them visibly,
/// `--json` output keeps them exact as JSON escapes.
@Suite("Terminal escapes in data", .serialized)
struct TerminalEscapeTests {
    static let clipboard = "osc\u{1B}]52;c;ZWNobyBwd25lZA==\u{07}"
    static let title = "t\u{1B}]0;pwned\u{07}"

    /// The control characters of `text` other than newlines (and tabs): none may come from data.
    func controls(_ text: String) -> [UInt32] {
        text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }.map(\.value)
    }

    /// Data source "esc" whose payloads hold escapes (listd refuses them in identifiers), and a cell
    /// registration showing them.
    func makeData(_ daemon: Daemon) throws {
        let connection = try daemon.connect()
        #expect(try connection.request([
            "cmd": "apply", "dataSource": "esc",
            "snapshot": ["sections": [[
                "id": "s", "data": ["title": .string(Self.title)],
                "items": [["id": "osc", "data": ["title": .string(Self.title), "note": "\u{9B}2J"]], ["id": "bell", "data": .string(Self.clipboard + "\u{7F}")]],
            ]]],
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{note}}"]])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "esc", "rules": [], "default": "row"])["ok"] == true)
    }

    func listctl(_ daemon: Daemon, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try runExecutable("listctl", ["--socket", daemon.socketPath] + arguments)
    }

    @Test func listctlShowsEscapesVisibly() throws {
        let daemon = try Daemon()
        try makeData(daemon)
        for arguments in [["show", "esc"], ["item", "esc", "osc"], ["ls"], ["stats"], ["dequeue", "v", "0:0", "0:1", "--attach", "esc"]] {
            let run = try listctl(daemon, arguments)
            #expect(run.status == 0, "\(arguments): \(run.err)")
            #expect(controls(run.out).isEmpty && controls(run.err).isEmpty, "\(arguments) wrote controls \(controls(run.out + run.err)): \(run.out)")
            if arguments[0] != "ls" && arguments[0] != "stats" {
                #expect(run.out.contains("t\\u001b]0;pwned\\u0007"), "\(arguments): \(run.out)")
            }
        }
        let show = try listctl(daemon, ["show", "esc"]).out
        #expect(show.contains("osc\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u007f"), "\(show)")
        #expect(show.contains("\\u009b2J"), "\(show)")
    }

    /// A listd that does not check identifiers (an older one, or something else on the socket): its
    /// identifiers and messages hold escapes too.
    @Test func listctlShowsAHostileServersIdentifiersAndMessagesVisibly() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/fake.sock"
        let script = directory + "/fake.py"
        try """
            import json, os, socket, sys
            osc = "osc\\x1b]52;c;QQ==\\x07"
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(sys.argv[1]); server.listen(8)
            print("ready", flush=True)
            while True:
                connection, _ = server.accept()
                stream = connection.makefile("rw", encoding="utf-8")
                for line in stream:
                    cmd = json.loads(line).get("cmd")
                    if cmd == "snapshot":
                        reply = {"ok": True, "result": {"version": 1, "sections": [{"id": "s\\x1b[2J\\x9b31m", "items": [{"id": osc, "data": {"t": "\\x85"}}]}]}}
                    elif cmd == "itemIdentifier":
                        reply = {"ok": True, "result": {"version": 1, "item": osc}}
                    elif cmd == "attach":
                        reply = {"ok": True, "result": {"view": "w\\x07", "version": 0, "incarnation": "i"}}
                        stream.write(json.dumps(reply, ensure_ascii=False) + "\\n")
                        reply = {"event": "changes", "version": 1, "changes": {"stages": [{"itemInserts": [{"indexPath": [0, 0], "item": osc}]}]}}
                        stream.write(json.dumps(reply, ensure_ascii=False) + "\\n"); stream.flush()
                        break
                    else:
                        reply = {"ok": False, "error": {"code": "invalid-argument", "message": "bad " + osc}}
                    stream.write(json.dumps(reply, ensure_ascii=False) + "\\n"); stream.flush()
                stream.close(); connection.close()
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", script, socketPath]
        let ready = makePipe()
        server.standardOutput = ready
        try server.start()
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit(within: .seconds(60))
        }
        let watchdog = server.killIfStillRunning(after: .seconds(120))
        _ = ready.fileHandleForReading.availableData  // "ready" (or nothing, once killed)
        watchdog.cancel()
        func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
            try runExecutable("listctl", ["--socket", socketPath] + arguments)
        }
        let visible = "osc\\u001b]52;c;QQ==\\u0007"
        for arguments in [
            ["show", "esc"], ["item-at", "esc", "0", "0"], ["watch", "esc", "--reconnect-seconds", "0", "--width", "0"],
            ["--json", "watch", "esc", "--reconnect-seconds", "0"], ["ping"],
        ] {
            let output = try run(arguments)
            #expect(controls(output.out).isEmpty && controls(output.err).isEmpty, "\(arguments): \(controls(output.out + output.err))")
            #expect((output.out + output.err).contains(visible), "\(arguments): \(output.out) \(output.err)")
        }
        #expect(try run(["show", "esc"]).out.contains("s\\u001b[2J\\u009b31m"))
        let json = try run(["--json", "show", "esc"])
        #expect(controls(json.out).isEmpty)
        let section = try JSONParser.parse(Array(json.out.utf8.dropLast()))["result"]?["sections"]?.arrayValue.first
        #expect(section?["id"] == "s\u{1B}[2J\u{9B}31m" && section?["items"]?.arrayValue.first?["id"] == "osc\u{1B}]52;c;QQ==\u{07}")
        #expect(section?["items"]?.arrayValue.first?["data"]?["t"] == "\u{85}", "exact, C1 included")
    }

    @Test func listctlJSONKeepsTheExactStrings() throws {
        let daemon = try Daemon()
        try makeData(daemon)
        let run = try listctl(daemon, ["--json", "show", "esc"])
        #expect(run.status == 0)
        #expect(controls(run.out).isEmpty, "raw controls \(controls(run.out))")
        let reply = try JSONParser.parse(Array(run.out.utf8.dropLast()))
        let section = reply["result"]?["sections"]?.arrayValue.first
        #expect(section?["data"]?["title"] == .string(Self.title))
        #expect(section?["items"]?.arrayValue.last?["data"] == .string(Self.clipboard + "\u{7F}"))
        #expect(section?["items"]?.arrayValue.first?["data"]?["note"] == "\u{9B}2J")
    }

    @Test func listviewDrawsEscapesVisibly() throws {
        let daemon = try Daemon()
        try makeData(daemon)
        let run = try runExecutable("listview", ["--socket", daemon.socketPath, "esc", "--once", "--width", "60", "--height", "6"])
        #expect(run.status == 0, "\(run.err)")
        #expect(controls(run.out).isEmpty && controls(run.err).isEmpty, "raw controls \(controls(run.out))")
        #expect(run.out.contains("t\\u001b]0;pwned\\u0007"), "\(run.out)")
        #expect(run.out.contains("\\u009b2J"), "\(run.out)")
        // An error that echoes a name from the command line and listd's message.
        let missing = try runExecutable("listview", ["--socket", daemon.socketPath, "no\u{1B}]52;c;QQ==\u{07}", "--once"])
        #expect(missing.status != 0)
        #expect(controls(missing.err).isEmpty, "raw controls in \(missing.err)")
    }
}
