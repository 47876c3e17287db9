import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// A supervised plugin's types are held for it before listd's socket accepts anything (issue 46,
/// finding 7): a trusted plugin connection that races listd's start never takes them.
@Suite("Plugin type race", .serialized)
struct PluginTypeRaceTests {
    /// What one racer saw: how many announcements it made, and the reply of the first that succeeded.
    final class RaceOutcome: @unchecked Sendable {
        private let lock = NSLock()
        private var attemptCount = 0
        private var winningReply: JSONValue?
        private var refusals: [String] = []
        private var stopped = false
        private let done = DispatchSemaphore(value: 0)

        var attempts: Int { lock.withLock { attemptCount } }
        var won: JSONValue? { lock.withLock { winningReply } }
        var refusalCodes: [String] { lock.withLock { refusals } }

        func stop() { lock.withLock { stopped = true } }
        var isStopped: Bool { lock.withLock { stopped } }

        func record(_ reply: JSONValue) {
            lock.withLock {
                attemptCount += 1
                if reply["ok"] == true { winningReply = reply } else { refusals.append(reply.errorCode ?? "?") }
            }
        }

        func finish() { done.signal() }
        func waitUntilFinished() { _ = done.wait(timeout: .now() + 30) }
    }

    /// Waits for `socketPath` to appear, then connects and announces `type` as plugin "evil" again and
    /// again (a fresh connection each time) until one is accepted or `outcome` is stopped.
    func race(socketPath: String, type: String, outcome: RaceOutcome) {
        Thread.detachNewThread {
            defer { outcome.finish() }
            let deadline = ContinuousClock.now + .seconds(30)
            while !outcome.isStopped, ContinuousClock.now < deadline {
                guard access(socketPath, F_OK) == 0, let connection = try? LineConnection(path: socketPath) else { continue }
                let hello: JSONValue = ["cmd": "hello", "role": "plugin", "name": "evil", "provides": [.string(type)], "protocol": 1]
                guard let reply = try? connection.request(hello, timeout: .seconds(10)) else { continue }
                outcome.record(reply)
                if reply["ok"] == true {
                    // Keeps the type while listd comes up, as the attacker's plugin would.
                    while !outcome.isStopped { Thread.sleep(forTimeInterval: 0.01) }
                    return
                }
            }
        }
    }

    /// Who provides `type` now (the plugin's name in `stats`).
    func provider(of type: String, _ daemon: Daemon) throws -> String? {
        let plugins = try daemon.request(["cmd": "stats"]).result()["plugins"]?.arrayValue ?? []
        return plugins.first { $0["provides"]?.arrayValue.contains(.string(type)) == true }?["name"]?.stringValue
    }

    @Test func aRacingPluginNeverTakesTheSupervisedPluginsTypeAtStart() throws {
        let emoji = binaryDirectory.appendingPathComponent("emoji-plugin").path
        for start in 1...6 {
            let directory = try makeTemporaryDirectory()
            let outcome = RaceOutcome()
            race(socketPath: directory + "/listd.sock", type: "emoji", outcome: outcome)
            let daemon = try Daemon(arguments: ["--plugin", emoji], directory: directory)
            #expect(try eventually { try provider(of: "emoji", daemon) != nil }, "start \(start)")
            let holder = try provider(of: "emoji", daemon)
            outcome.stop()
            outcome.waitUntilFinished()
            #expect(outcome.won == nil, "start \(start): the racer took emoji: \(outcome.won.map { "\($0)" } ?? "")")
            #expect(holder == "emoji", "start \(start): emoji is provided by \(holder ?? "nobody")")
            #expect(outcome.attempts > 0, "start \(start): the racer never got to announce")
            #expect(outcome.refusalCodes.allSatisfy { $0 == ErrorCode.pluginTypeTaken.rawValue }, "start \(start): \(outcome.refusalCodes)")
            #expect(try daemon.stop() == 0)
        }
    }
}
