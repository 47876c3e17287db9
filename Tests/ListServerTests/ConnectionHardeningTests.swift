import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// What one process may cost listd, measured on a real `listd --ephemeral` over its socket: clients that
/// pipeline requests and never read, a peer that never reads its events, running out of file
/// descriptors, lines that never end, and settings that cannot work.
@Suite("Connection hardening: output, descriptors, unfinished lines, settings", .serialized)
struct ConnectionHardeningTests {
    /// Four clients each pipeline 250 `snapshot`s of a 100,000-item data source (about 9 MB a reply) and
    /// read nothing. Without back-pressure listd builds every reply (gigabytes, and the event loop is
    /// busy for minutes); with it each connection stops being read once its unsent output passes
    /// `maxOutputBytes`, so memory stays bounded and other clients are answered.
    @Test func pipelinedRequestsThatAreNotReadKeepMemoryBounded() throws {
        let daemon = try Daemon()
        let pid = daemon.process.processIdentifier
        let setup = try daemon.connect()
        let payload = JSONValue.string(String(repeating: "x", count: 60))
        let items = JSONValue.array((0..<100_000).map { ["id": .string("item-\($0)"), "data": ["t": payload]] })
        _ = try setup.request(["cmd": "apply", "dataSource": "big", "snapshot": ["sections": [["id": "s", "items": items]]]]).result()
        let baseline = try residentBytes(of: pid)

        let request = Array(#"{"cmd":"snapshot","dataSource":"big"}"#.utf8) + [0x0A]
        let burst = Array(repeatElement(request, count: 250).joined())
        var attackers: [LineConnection] = []
        for _ in 0..<4 {
            let attacker = try daemon.connect()
            try attacker.send(bytes: burst)
            attackers.append(attacker)
        }
        // Meanwhile another client pings in a loop; listd's memory is sampled every 100 ms throughout.
        // The first ping waits for what the event loop is doing when it arrives: the replies to the
        // attackers' first requests, each connection's until it pauses (seconds in a debug build on a
        // busy machine). It is bounded on its own; the pings after it measure how listd answers while
        // the attackers stay paused.
        let prober = try daemon.connect()
        var peak = baseline
        let firstStarted = ContinuousClock.now
        try prober.send(["cmd": "ping"])
        while true {
            peak = max(peak, try residentBytes(of: pid))
            if let line = try? prober.readLine(timeout: .milliseconds(100)) {
                #expect(try JSONParser.parse(line)["ok"] == true)
                break
            }
            try #require(ContinuousClock.now - firstStarted < .seconds(60), "the first ping was not answered within 60 s")
        }
        let first = ContinuousClock.now - firstStarted
        var latencies: [Duration] = []
        let end = ContinuousClock.now + .seconds(12)
        pinging: while ContinuousClock.now < end {
            let start = ContinuousClock.now
            try prober.send(["cmd": "ping"])
            while true {
                peak = max(peak, try residentBytes(of: pid))
                guard ContinuousClock.now < end else {
                    latencies.append(ContinuousClock.now - start)
                    break pinging
                }
                if let line = try? prober.readLine(timeout: .milliseconds(100)) {
                    #expect(try JSONParser.parse(line)["ok"] == true)
                    break
                }
            }
            latencies.append(ContinuousClock.now - start)
            Thread.sleep(forTimeInterval: 0.1)
        }
        let sorted = latencies.sorted()
        let (median, slowest) = (sorted[sorted.count / 2], sorted.last!)
        print("pipelining attack: RSS \(baseline >> 20) MB before, peak \(peak >> 20) MB; first ping \(first); \(sorted.count) pings, median \(median), slowest \(slowest)")
        #expect(peak < 300 << 20, "listd grew to \(peak >> 20) MB")
        #expect(median < .seconds(1) && slowest < .seconds(10), "pings took \(median) (median), \(slowest) (slowest)")

        // The paused requests still run, in order, once their client reads.
        let reader = attackers[0]
        for _ in 0..<5 {
            let reply = try #require(try reader.readJSON(timeout: .seconds(60)))
            #expect(reply["result"]?["sections"]?.arrayValue.first?["items"]?.arrayValue.count == 100_000)
        }
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
    }

    /// A view that never reads while a writer makes events: at `maxOutputBytesHard` (here below the view
    /// queue limit) its connection is closed and logged; the writer carries on.
    @Test func aPeerThatNeverReadsIsClosedAtTheHardOutputLimit() throws {
        let daemon = try Daemon(configuration: [
            "maxOutputBytes": 65_536, "maxOutputBytesHard": 1_048_576, "maxViewQueueBytes": 67_108_864,
        ])
        let writer = try daemon.connect()
        #expect(try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]])["ok"] == true)
        let lazy = try daemon.connect()
        #expect(try lazy.request(["cmd": "attach", "dataSource": "d"])["ok"] == true)
        let padding = String(repeating: "p", count: 900)
        var closed = false
        for index in 0..<5_000 {
            #expect(try writer.request(["cmd": "appendItems", "dataSource": "d", "items": [.string("\(padding)\(index)")]])["ok"] == true)
            if index % 50 == 49, try writer.request(["cmd": "stats"]).result()["connections"]?["current"] == 1 {
                closed = true
                break
            }
        }
        #expect(closed, "the connection that never reads is still open")
        let stats = try writer.request(["cmd": "stats"]).result()
        #expect(stats["events"]?["viewsOverflowed"] == 0, "closed by the output limit, not the view queue's")
        // The lazy peer finds events, then the end (no overflow event: it was cut off).
        var last: JSONValue?
        while let line = try lazy.readJSON(timeout: .seconds(20)) { last = line }
        #expect(last?["event"] == "changes")
        try daemon.stop()
        #expect(daemon.log.contains("closing a connection that does not read its output"))
    }

    /// Several connections ask for a big snapshot and never read it: each is under the hard limit, but
    /// together they pass `maxOutputBytesTotal`, so the largest holders are closed; the total stays near
    /// the cap and others are served.
    @Test func outputHeldForPeersThatDoNotReadIsCappedAcrossConnections() throws {
        let daemon = try Daemon(configuration: ["maxOutputBytesTotal": 30_000_000])
        let payload = JSONValue.string(String(repeating: "x", count: 1_000_000))
        let items = JSONValue.array((0..<12).map { ["id": .string("item-\($0)"), "data": ["t": payload]] })
        _ = try daemon.request(["cmd": "apply", "dataSource": "big", "snapshot": ["sections": [["id": "s", "items": items]]]]).result()
        var readers: [LineConnection] = []
        for _ in 0..<6 {
            let reader = try daemon.connect()
            try reader.send(["cmd": "snapshot", "dataSource": "big"])
            readers.append(reader)
        }
        func connections() throws -> JSONValue { try daemon.request(["cmd": "stats"]).result()["connections"] ?? .null }
        let shed = try eventually { try connections()["closedForHeldOutput"]?.intValue ?? 0 >= 3 }
        let after = try connections()
        #expect(shed, "\(after)")
        let held = try connections()["heldOutputBytes"]?.intValue ?? -1
        print("held output across connections: \(held) bytes, cap 30000000")
        #expect(held <= 30_000_000)
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
        // The connections left open still get their whole reply once they read.
        var whole = 0
        for reader in readers {
            if let reply = try? reader.readJSON(timeout: .seconds(20)), reply["ok"] == true { whole += 1 }
        }
        #expect(whole >= 1 && whole <= 3, "\(whole) of 6 replies were kept")
    }

    /// Views whose peers never read hold events up to `maxViewQueueBytes` each; together they are capped
    /// by `maxOutputBytesTotal` too (the largest holders closed), and the writer carries on.
    @Test func eventsHeldForViewsThatDoNotReadAreCappedAcrossConnections() throws {
        let daemon = try Daemon(configuration: [
            "maxOutputBytesTotal": 2_000_000, "maxOutputBytes": 65_536, "maxViewQueueBytes": 4_000_000, "maxOutputBytesHard": 8_000_000,
        ])
        let writer = try daemon.connect()
        _ = try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]]).result()
        var lazy: [LineConnection] = []
        for _ in 0..<8 {
            let view = try daemon.connect()
            _ = try view.request(["cmd": "attach", "dataSource": "d"]).result()
            lazy.append(view)
        }
        let padding = String(repeating: "p", count: 2_000)
        func connections() throws -> JSONValue { try writer.request(["cmd": "stats"]).result()["connections"] ?? .null }
        var closed = 0
        for index in 0..<5_000 {
            _ = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": [.string("\(padding)\(index)")]]).result()
            if index % 100 == 99 {
                closed = try connections()["closedForHeldOutput"]?.intValue ?? 0
                if closed >= 2 { break }
            }
        }
        let stats = try connections()
        #expect(closed >= 2, "\(stats)")
        #expect(try writer.request(["cmd": "stats"]).result()["events"]?["viewsOverflowed"] == 0, "cut by the total, before any view queue filled")
        #expect(stats["heldOutputBytes"]?.intValue ?? .max <= 2_000_000 + 8 * 65_536 * 2, "\(stats)")
    }

    /// Views on one connection are bounded (`maxViewsPerConnection`); a detached one makes room again.
    @Test func viewsPerConnectionAreBounded() throws {
        let daemon = try Daemon(arguments: ["--demo"], configuration: ["maxViewsPerConnection": 3])
        let connection = try daemon.connect()
        for index in 0..<3 { _ = try connection.request(["cmd": "attach", "dataSource": "home", "view": .string("v\(index)")]).result() }
        let refused = try connection.request(["cmd": "attach", "dataSource": "emoji"])
        #expect(refused.errorCode == "limit-exceeded" && refused["error"]?["message"]?.stringValue?.contains("maxViewsPerConnection") == true, "\(refused)")
        _ = try connection.request(["cmd": "detach", "view": "v0"]).result()
        _ = try connection.request(["cmd": "attach", "dataSource": "emoji"]).result()
        #expect(try daemon.connect().request(["cmd": "attach", "dataSource": "home"])["ok"] == true, "per connection, not per user")
    }

    /// Layout changes are events like any other: a view that never reads them is cut at
    /// `maxViewQueueBytes` (overflow, counted), and each is counted as sent.
    @Test func aViewThatNeverReadsLayoutChangesIsCutAtTheViewQueueLimit() throws {
        let daemon = try Daemon(configuration: ["maxViewQueueBytes": 262_144, "maxOutputBytes": 65_536])
        let writer = try daemon.connect()
        _ = try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["S"]]).result()
        let lazy = try daemon.connect()
        _ = try lazy.request(["cmd": "attach", "dataSource": "d"]).result()
        let sections = JSONValue.object(Dictionary(uniqueKeysWithValues: (0..<20).map { ("section-\($0)", ["list": ["appearance": "grouped"]] as JSONValue) }))
        var overflowed = false
        for round in 0..<5_000 {
            _ = try writer.request(["cmd": "setLayout", "dataSource": "d", "layout": ["sections": sections, "default": ["list": ["appearance": round % 2 == 0 ? "plain" : "insetGrouped"]]]]).result()
            if round % 100 == 99, try writer.request(["cmd": "stats"]).result()["events"]?["viewsOverflowed"] == 1 {
                overflowed = true
                break
            }
        }
        #expect(overflowed, "the view that never reads was not cut")
        #expect(try writer.request(["cmd": "stats"]).result()["events"]?["sent"]?.intValue ?? 0 > 0, "layout changes are counted")
    }

    /// With 64 descriptors, connections beyond them wait in the backlog: listd pauses accepting (no
    /// 100% CPU loop), logs the limit once, and serves again once descriptors are free.
    @Test func outOfDescriptorsListdPausesAcceptingInsteadOfSpinning() throws {
        let daemon = try Daemon()
        let pid = daemon.process.processIdentifier
        let limited = try runProgram("/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=64:64"])
        try #require(limited.status == 0, "prlimit: \(limited.err)")
        var held: [LineConnection] = []
        for _ in 0..<100 { held.append(try daemon.connect()) }  // the backlog (256) holds what is not accepted
        // listd has run out: all 64 descriptors are open.
        func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0 }
        #expect(try eventually { openDescriptors() >= 64 }, "listd holds \(openDescriptors()) descriptors")
        let before = try cpuTicks(of: pid)
        Thread.sleep(forTimeInterval: 2)
        let used = try cpuTicks(of: pid) - before
        print("out of descriptors: listd used \(used) CPU ticks (1/100 s) in 2 s")
        #expect(used < 40, "listd used \(used)/100 s of CPU in 2 s while out of descriptors")

        held.removeFirst(60)  // closes every accepted connection: their descriptors are free again
        let fresh = try daemon.connect()
        #expect(try fresh.request(["cmd": "ping"], timeout: .seconds(20))["ok"] == true)
        #expect(try held.last!.request(["cmd": "ping"], timeout: .seconds(20))["ok"] == true, "the backlog was accepted")
        try daemon.stop()
        let log = daemon.log
        let reports = log.split(separator: "\n").filter { $0.contains("out of file descriptors") }
        #expect(reports.count == 1, "\(reports)")
        #expect(reports.first?.contains("RLIMIT_NOFILE) is 64") == true, "\(reports)")
        #expect(log.contains("accepting connections again"))
    }

    /// A line not finished within `partialLineTimeoutSeconds` gets `line-too-long` and its connection
    /// closes; an idle connection (no unfinished line) and a line finished in time are untouched.
    @Test func aLineNotFinishedInTimeClosesItsConnection() throws {
        let daemon = try Daemon(configuration: ["partialLineTimeoutSeconds": 1])
        let idle = try daemon.connect()
        let slow = try daemon.connect()
        try slow.send(bytes: Array(#"{"cmd":"pi"#.utf8))
        let quick = try daemon.connect()
        try quick.send(bytes: Array(#"{"cmd":"pi"#.utf8))
        Thread.sleep(forTimeInterval: 0.2)
        try quick.send(line: #"ng"}"#)
        #expect(try quick.readJSON(timeout: .seconds(20))?["ok"] == true)

        let reply = try #require(try slow.readJSON(timeout: .seconds(20)))
        #expect(reply.errorCode == "line-too-long")
        #expect(reply["error"]?["message"]?.stringValue?.contains("not finished within 1 second") == true, "\(reply)")
        #expect(try slow.readLine(timeout: .seconds(20)) == nil, "the connection is closed")
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try idle.request(["cmd": "ping"])["ok"] == true)
        #expect(try quick.request(["cmd": "ping"])["ok"] == true)
    }

    /// Unfinished lines across connections above `maxPartialLineBytesTotal`: the largest holder gets
    /// `line-too-long` and is closed; the others finish their lines and are answered.
    @Test func theLargestUnfinishedLinesAreClosedPastTheGlobalCap() throws {
        let daemon = try Daemon(configuration: ["maxPartialLineBytesTotal": 1_000_000])
        var holders: [LineConnection] = []
        for size in [300_000, 600_000, 50_000] {
            let holder = try daemon.connect()
            try holder.send(bytes: Array(repeating: 0x20, count: size))  // leading spaces: still valid JSON once finished
            holders.append(holder)
        }
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
        let last = try daemon.connect()
        try last.send(bytes: Array(repeating: 0x20, count: 200_000))
        holders.append(last)

        let largest = holders[1]
        let reply = try #require(try largest.readJSON(timeout: .seconds(20)))
        #expect(reply.errorCode == "line-too-long")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxPartialLineBytesTotal") == true, "\(reply)")
        #expect(try largest.readLine(timeout: .seconds(20)) == nil, "the connection is closed")
        for index in [0, 2, 3] {
            try holders[index].send(line: #"{"cmd":"ping"}"#)
            #expect(try holders[index].readJSON(timeout: .seconds(20))?["ok"] == true, "holder \(index)")
        }
    }

    /// Settings that cannot work stop listd at start, naming the key and where it came from.
    @Test func settingsThatCannotWorkAreRefusedAtStart() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/listd.sock"
        let file = directory + "/listd.json"
        let cases: [(String, [String], [String])] = [
            (#"{"logLevel": "loud"}"#, [], ["logLevel", file, "loud"]),
            (#"{"logLevel": "debug",}"#, [], [file + ", line 1, column 22: not valid JSON"]),
            ("// a comment\n{\n  \"maxConnections\": 10,\n  \"bogus\":\n}\n", [], [file + ", line 5, column 1: not valid JSON"]),
            ("[]", [], [file + ": not a JSON object"]),
            (#"{"pluginDirectory": "/nonexistent/plugins"}"#, [], ["pluginDirectory", file, "/nonexistent/plugins"]),
            ("{\n  \"maxLineByte\": 1000\n}", [], [file + ", line 2: unknown setting \"maxLineByte\"; did you mean \"maxLineBytes\"?"]),
            (#"{"maxLineBytes": "16M"}"#, [], ["maxLineBytes", file, "positive integer"]),
            (#"{"maxOutputBytes": 2000, "maxOutputBytesHard": 1000}"#, [], ["maxOutputBytes", "maxOutputBytesHard", file]),
            ("{}", ["--log-level", "loud"], ["--log-level", "loud"]),
            ("{}", ["--plugin-directory", "/nonexistent/plugins"], ["--plugin-directory", "/nonexistent/plugins"]),
        ]
        for (contents, arguments, mentions) in cases {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: file))
            let run = try runProgram(
                binaryDirectory.appendingPathComponent("listd").path, ["--socket", socket, "--ephemeral", "--config", file] + arguments,
                timeout: .seconds(20))
            #expect(run.status != 0, "\(contents) \(arguments) was accepted")
            for mention in mentions { #expect(run.err.contains(mention), "\(contents) \(arguments): \(run.err)") }
            #expect(!FileManager.default.fileExists(atPath: socket), "listd must not have listened")
        }
    }

    /// `systemd/listd.conf.example` names every setting (with its comment) and is accepted as it is,
    /// its values the defaults: a listd started with it has the limits of one started without.
    @Test func theExampleConfigurationIsCompleteAndAccepted() throws {
        let example = protocolDirectory.deletingLastPathComponent().appendingPathComponent("systemd/listd.conf.example").path
        let text = try String(contentsOfFile: example, encoding: .utf8)
        let plain = try Daemon()
        let configured = try Daemon(arguments: ["--config", example])
        let defaults = try plain.request(["cmd": "stats"]).result()["limits"]
        #expect(try configured.request(["cmd": "stats"]).result()["limits"] == defaults)
        // Every setting listd knows appears in the file (an unknown one lists them all).
        let file = configured.directory + "/unknown.json"
        try Data(#"{"notASetting": 1}"#.utf8).write(to: URL(fileURLWithPath: file))
        let refused = try runProgram(
            binaryDirectory.appendingPathComponent("listd").path, ["--ephemeral", "--socket", configured.directory + "/other.sock", "--config", file],
            timeout: .seconds(20))
        let list = try #require(refused.err.split(separator: "(the settings are ").last?.split(separator: ")").first)
        let settings = list.split(separator: ", ").map(String.init)
        #expect(settings.count >= 29)
        for setting in settings { #expect(text.contains("\"\(setting)\":"), "\(setting) is missing from the example") }
    }

    /// A SIGHUP with a file that cannot work keeps the running settings and logs why; a good one applies.
    @Test func aReloadThatCannotWorkKeepsTheRunningSettings() throws {
        let daemon = try Daemon(configuration: ["maxLineBytes": 1000])
        let file = daemon.directory + "/listd.json"
        func maxLineBytes() throws -> JSONValue? { try daemon.request(["cmd": "stats"]).result()["limits"]?["maxLineBytes"] }
        #expect(try maxLineBytes() == 1000)
        for contents in [#"{"maxLineBytes": 2000, "logLevel": "loud"}"#, #"{"maxLineBytes": 3000, "pluginDirectory": "/nonexistent"}"#,
                         #"{"maxLineByts": 4000}"#] {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: file))
            try reload(daemon)
            #expect(try maxLineBytes() == 1000, "after reloading \(contents)")
        }
        try Data(#"{"maxLineBytes": 5000}"#.utf8).write(to: URL(fileURLWithPath: file))
        kill(daemon.process.processIdentifier, SIGHUP)
        let deadline = ContinuousClock.now + .seconds(20)
        while try maxLineBytes() != 5000, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try maxLineBytes() == 5000, "a good file is applied")
        try daemon.stop()
        let failures = daemon.log.split(separator: "\n").filter { $0.contains("reload failed") }
        #expect(failures.count == 3, "\(failures)")
        for (failure, key) in zip(failures, ["logLevel", "pluginDirectory", "maxLineByts"]) {
            #expect(failure.contains(key) && failure.contains(file), "\(failure)")
        }
    }
}

/// Sends SIGHUP and waits for the READY=1 that ends the reload (listd sends one after each reload,
/// whether or not the file could be used).
func reload(_ daemon: Daemon) throws {
    func readyCount() -> Int { daemon.notify.messages.filter { $0.split(separator: "\n").contains("READY=1") }.count }
    daemon.notify.receive()
    let before = readyCount()
    kill(daemon.process.processIdentifier, SIGHUP)
    let deadline = ContinuousClock.now + .seconds(20)
    while readyCount() == before {
        guard ContinuousClock.now < deadline else { throw ClientError("no READY=1 after SIGHUP") }
        daemon.notify.receive(waitMilliseconds: 50)
    }
}

/// `VmRSS` of a process, in bytes.
func residentBytes(of pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
    let kilobytes = try #require(Int(line.split(separator: " ")[1]))
    return kilobytes << 10
}

/// User plus system CPU time of a process, in clock ticks (1/100 s).
func cpuTicks(of pid: Int32) throws -> Int {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // After "pid (name) ": state is field 3, utime 14 and stime 15.
    let fields = try #require(stat.split(separator: ")").last).split(separator: " ")
    return try #require(Int(fields[11])) + #require(Int(fields[12]))
}

/// Runs a program to completion; one still running after `timeout` (a listd that accepted what it
/// should have refused) is stopped with SIGTERM.
func runProgram(_ path: String, _ arguments: [String], timeout: Duration = .seconds(60)) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["SWIFT_BACKTRACE"] = "enable=no"
    environment.removeValue(forKey: "NOTIFY_SOCKET")
    process.environment = environment
    let out = makePipe()
    let err = makePipe()
    process.standardOutput = out
    process.standardError = err
    try process.start()
    let deadline = ContinuousClock.now + timeout
    while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
    if process.isRunning { process.terminate() }
    // SIGTERM may be blocked in a child of the test process: killed for good if it still runs then.
    let watchdog = process.killIfStillRunning(after: .seconds(10))
    defer { watchdog.cancel() }
    let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit(within: .seconds(60))
    return (process.terminationStatus, output, errors)
}
