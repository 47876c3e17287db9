import Foundation
import ListClient
import ListWire
import Testing

/// Every example in the man pages (the `.Bd -literal` blocks of man/*.mdoc) runs as a shell runs it:
/// bash, with the programs under test first on PATH and `LISTD_SOCKET` and `XDG_RUNTIME_DIR` naming a
/// demo listd. Only what needs a booted systemd (`systemctl`, `journalctl`) is left to the unit tests.
@Suite("man page examples", .serialized)
struct ManPageExampleTests {
    /// The example lines of a page, in order (continuation lines joined).
    static func examples(in page: String) throws -> [String] {
        let text = try String(contentsOf: InstallTests.repository.appendingPathComponent("man/\(page).mdoc"), encoding: .utf8)
        var lines: [String] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix(".Bd -literal") {
                inBlock = true
            } else if line.hasPrefix(".Ed") {
                inBlock = false
            } else if inBlock, !line.trimmingCharacters(in: .whitespaces).isEmpty {
                lines.append(line)
            }
        }
        return lines
    }

    /// Runs `command` with bash in `directory` (no signal blocked, as from a login shell, so that
    /// `timeout` works); returns its status and standard output.
    static func shell(_ command: String, in directory: String, socket: String) throws -> (status: Int32, output: String) {
        try spawnAndWait(
            ["/bin/bash", "-c", "cd '\(directory)' && \(command)"],
            environment: [
                "PATH": binaryDirectory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                "LISTD_SOCKET": socket, "XDG_RUNTIME_DIR": (socket as NSString).deletingLastPathComponent,
            ])
    }

    @Test(arguments: ["listctl.1", "listview.1", "listd.8"])
    func everyExampleRuns(page: String) throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let other = try Daemon()
        let lines = try Self.examples(in: page)
        #expect(!lines.isEmpty)
        for line in lines {
            let program = line.split(separator: " ").first.map(String.init) ?? ""
            if ["systemctl", "journalctl"].contains(program) { continue }  // needs a booted systemd (UnitFileTests check the units)
            if program == "listd" {
                // A listd of its own, with the example's arguments (and a socket of the test's).
                var arguments = line.split(separator: " ").dropFirst().map(String.init)
                arguments.removeAll { $0 == "--ephemeral" }
                let started = try Daemon(arguments: arguments)
                #expect(try started.request(["cmd": "ping"])["ok"] == true, "\(page): \(line)")
                continue
            }
            var command = line.replacingOccurrences(of: "/run/other/listd.sock", with: other.socketPath)
            // listview is interactive: the example's frame, printed once.
            command = command.replacingOccurrences(of: #"listview (\S+)$"#, with: "listview $1 --once", options: .regularExpression)
            command = command.replacingOccurrences(of: #"listview (\S+) "#, with: "listview $1 --once ", options: .regularExpression)
            let follows = command.contains("listctl watch")
            if follows { command = "timeout 2 " + command }  // watch runs until stopped
            let run = try Self.shell(command, in: daemon.directory, socket: daemon.socketPath)
            if follows {
                #expect(run.status == 124 && run.output.hasPrefix("watching"), "\(page): \(line)\n\(run)")
            } else {
                #expect(run.status == 0, "\(page): \(line)\n\(run)")
            }
        }
    }
}
