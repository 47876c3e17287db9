import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// Plugins listd starts itself: `--plugin`, `plugins` in the configuration file, `--plugin-directory`.
@Suite("Supervised plugins", .serialized)
struct SupervisorTests {
    func supervised(_ daemon: Daemon) throws -> [JSONValue] {
        try daemon.request(["cmd": "stats"]).result()["supervisedPlugins"]?.arrayValue ?? []
    }

    func connectedPlugins(_ daemon: Daemon) throws -> [String] {
        try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue.compactMap { $0["name"]?.stringValue }.sorted()
    }

    /// Whether `pid` runs (a zombie waiting for a parent that does not reap it does not count).
    func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let state = stat.split(separator: ")").last?.split(separator: " ").first
        else { return false }
        return state != "Z"
    }

    @Test func listdStartsRestartsAndStopsItsPlugins() throws {
        let emoji = binaryDirectory.appendingPathComponent("emoji-plugin").path
        let daemon = try Daemon(
            arguments: ["--plugin", emoji],
            configuration: ["plugins": [["name": "py", "command": ["/usr/bin/env", "python3", .string(pycard)]]], "pluginStopGraceMilliseconds": 2_000])
        #expect(try eventually { try connectedPlugins(daemon) == ["emoji", "pycard"] })
        var plugins = try supervised(daemon)
        #expect(plugins.map { $0["name"] } == ["py", "emoji-plugin"])
        #expect(plugins.allSatisfy { $0["running"] == true && $0["starts"] == 1 })

        // The supervised plugin serves cells like any other.
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "register", "registration": "big", "contentConfiguration": ["type": "plugin:emoji"]])["ok"] == true)
        #expect(try connection.request(["cmd": "appendSections", "dataSource": "e", "sections": ["S"]])["ok"] == true)
        #expect(try connection.request(["cmd": "appendItems", "dataSource": "e", "items": [["id": "x", "data": ["text": "🐶"]]]])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "e", "rules": [], "default": "big"])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "e", "view": "v"])["ok"] == true)
        let cell = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(cell["content"]?["text"] == "🐶")

        // Killed: started again, and its type works again.
        let emojiPID = Int32(try #require(plugins[1]["pid"]?.intValue))
        kill(emojiPID, SIGKILL)
        #expect(try eventually { try supervised(daemon)[1]["starts"] == 2 && supervised(daemon)[1]["running"] == true })
        #expect(try eventually { try connectedPlugins(daemon) == ["emoji", "pycard"] })
        plugins = try supervised(daemon)
        #expect(plugins[1]["lastExit"] == "killed by signal 9")
        let again = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(again["content"]?["text"] == "🐶")

        // Stopped with listd: SIGTERM reaches them (listd resets the signal mask it blocks for itself).
        let pids = plugins.compactMap { $0["pid"]?.intValue.map(Int32.init) }
        #expect(pids.count == 2 && pids.allSatisfy(isAlive))
        #expect(try daemon.stop() == 0)
        #expect(pids.allSatisfy { !isAlive($0) })
        let log = daemon.log
        #expect(!log.contains("did not stop within"), "no plugin needed SIGKILL")
        #expect(log.contains("emoji: serving emoji on"), "the plugin's stderr is in listd's log")
        #expect(log.contains("plugin exited (killed by signal 9)"))
        #expect(log.contains("plugin stopped (killed by signal 15)"))
    }

    @Test func aFailingPluginIsRestartedLessAndLessOften() throws {
        let daemon = try Daemon(arguments: ["--plugin", "/bin/false"])
        let start = ContinuousClock.now
        // Delays of 0.1, 0.2, 0.4 and 0.8 s between the five starts: at least 1.5 s, however fast the
        // machine (without backoff, five starts would take milliseconds).
        #expect(try eventually { try supervised(daemon).first?["starts"]?.intValue ?? 0 >= 5 })
        #expect(ContinuousClock.now - start >= .milliseconds(1_400))
        let plugin = try #require(try supervised(daemon).first)
        #expect(plugin["lastExit"] == "exit status 1")
        #expect(try daemon.stop() == 0)
    }

    @Test func aPluginIgnoringSIGTERMIsKilledAfterTheGracePeriod() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = directory + "/stubborn"
        try "#!/bin/sh\ntrap '' TERM\necho stubborn plugin here >&2\nwhile :; do sleep 0.1; done\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try "not executable".write(toFile: directory + "/notes.txt", atomically: true, encoding: .utf8)
        let daemon = try Daemon(arguments: ["--plugin-directory", directory], configuration: ["pluginStopGraceMilliseconds": 500])
        #expect(try eventually { try supervised(daemon).first?["running"] == true })
        #expect(try supervised(daemon).map { $0["name"] } == ["stubborn"], "only the directory's executables")
        let pid = Int32(try #require(try supervised(daemon)[0]["pid"]?.intValue))
        // The script has set its trap once the kernel says it ignores SIGTERM.
        func ignoresSIGTERM() -> Bool {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
                let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { return false }
            return mask & (1 << (UInt64(SIGTERM) - 1)) != 0
        }
        #expect(try eventually { ignoresSIGTERM() }, "the plugin set its trap")
        let start = ContinuousClock.now
        #expect(try daemon.stop() == 0)
        let took = ContinuousClock.now - start
        #expect(took >= .milliseconds(450), "waited the grace period: \(took)")
        #expect(!isAlive(pid))
        let log = daemon.log
        #expect(log.contains("stubborn plugin here"))
        #expect(log.contains("did not stop within"))
        #expect(log.contains("plugin stopped (killed by signal 9)"))
    }

    @Test func reloadStartsAndStopsPlugins() throws {
        let daemon = try Daemon(configuration: ["plugins": [["name": "py", "command": ["/usr/bin/env", "python3", .string(pycard)]]]])
        #expect(try eventually { try connectedPlugins(daemon) == ["pycard"] })
        let pid = Int32(try #require(try supervised(daemon)[0]["pid"]?.intValue))
        let emoji = binaryDirectory.appendingPathComponent("emoji-plugin").path
        try Data(JSONValue.object(["plugins": [.string(emoji)]]).jsonBytes).write(to: URL(fileURLWithPath: daemon.directory + "/listd.json"))
        kill(daemon.process.processIdentifier, SIGHUP)
        #expect(try eventually { try connectedPlugins(daemon) == ["emoji"] })
        #expect(try eventually { !isAlive(pid) })
        #expect(try supervised(daemon).map { $0["name"] } == ["emoji-plugin"])
        #expect(try daemon.stop() == 0)
    }

    @Test func aPluginWhoseListdIsGoneExits() throws {
        let emoji = binaryDirectory.appendingPathComponent("emoji-plugin").path
        let daemon = try Daemon(arguments: ["--plugin", emoji])
        #expect(try eventually { try connectedPlugins(daemon) == ["emoji"] })
        let pid = Int32(try #require(try supervised(daemon)[0]["pid"]?.intValue))
        // listd killed outright (no chance to stop its plugins): the plugin notices and exits.
        #expect(try daemon.stop(signal: SIGKILL) == SIGKILL)
        #expect(try eventually { !isAlive(pid) })
    }

    @Test func badPluginSettingsStopListdAtStart() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #"{"plugins": ["relative/path"]}"#.write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
        let run = try runExecutable("listd", ["--socket", directory + "/s", "--ephemeral", "--config", directory + "/bad.json"])
        #expect(run.status != 0)
        #expect(run.err.contains("absolute executable path"))
    }
}
