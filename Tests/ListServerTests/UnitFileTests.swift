import Foundation
import TestSupport
import Testing

@Suite("systemd units")
struct UnitFileTests {
    static let systemdDirectory = protocolDirectory.deletingLastPathComponent().appendingPathComponent("systemd")

    /// Copies the units into a temporary directory with `ExecStart=` pointing at the binary under test
    /// (`systemd-analyze verify` insists that it exists).
    static func stagedUnits() throws -> String {
        let directory = try makeTemporaryDirectory()
        for name in ["listd.service", "listd.socket", "listweb.service"] {
            var text = try String(contentsOf: systemdDirectory.appendingPathComponent(name), encoding: .utf8)
            text = text.replacingOccurrences(of: "/usr/local/bin/listd ", with: binaryDirectory.appendingPathComponent("listd").path + " ")
            text = text.replacingOccurrences(of: "/usr/local/bin/listweb ", with: binaryDirectory.appendingPathComponent("listweb").path + " ")
            try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
        return directory
    }

    /// `manualPath`: where `verify` looks for the `man:` pages the units name (`MANPATH`).
    static func run(_ arguments: [String], in directory: String, manualPath: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = arguments
        if let manualPath { process.environment = ProcessInfo.processInfo.environment.merging(["MANPATH": manualPath]) { _, new in new } }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let pipe = makePipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.start()
        let watchdog = process.killIfStillRunning(after: .seconds(300))
        defer { watchdog.cancel() }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit(within: .seconds(60))
        return (process.terminationStatus, output)
    }

    /// Other users are told apart by their uids: no private user namespace (where every other uid reads
    /// as 65534), and the socket lets the listd group in, nobody else.
    @Test func unitsKeepUsersApart() throws {
        let service = try String(contentsOf: Self.systemdDirectory.appendingPathComponent("listd.service"), encoding: .utf8)
        let socket = try String(contentsOf: Self.systemdDirectory.appendingPathComponent("listd.socket"), encoding: .utf8)
        #expect(!service.split(separator: "\n").contains { $0.hasPrefix("PrivateUsers=") })
        #expect(socket.contains("SocketMode=0660") && socket.contains("SocketGroup=listd"))
    }

    @Test func verifyIsClean() throws {
        let directory = try Self.stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The man page the units name is installed by scripts/install (InstallTests verifies it there).
        let (status, output) = try Self.run(["verify", "--man=no", "./listd.service", "./listd.socket", "./listweb.service"], in: directory)
        #expect(status == 0)
        #expect(output.isEmpty, "systemd-analyze verify printed: \(output)")
    }

    @Test(arguments: ["listd.service", "listweb.service"]) func exposureIsAtMostTwo(unit: String) throws {
        let directory = try Self.stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, output) = try Self.run(["security", "--offline=true", "--no-pager", "./" + unit], in: directory)
        let line = try #require(output.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let number = line.split(separator: ":").last!.split(separator: " ").first { Double($0) != nil }.flatMap { Double($0) }
        let exposure = try #require(number)
        #expect(exposure <= 2.0, "\(line)")
    }

    @Test func socketUnitFollowsTheConventions() throws {
        let socket = try String(contentsOf: Self.systemdDirectory.appendingPathComponent("listd.socket"), encoding: .utf8)
        let service = try String(contentsOf: Self.systemdDirectory.appendingPathComponent("listd.service"), encoding: .utf8)
        #expect(socket.contains("SocketMode=0660") && socket.contains("SocketGroup=listd"))
        #expect(!service.contains("RuntimeDirectory="), "the socket must not live in a runtime directory")
        #expect(service.contains("Type=notify") && service.contains("ExecReload=") && service.contains("WatchdogSec="))
        let sysusers = try String(contentsOf: Self.systemdDirectory.appendingPathComponent("listd.sysusers.conf"), encoding: .utf8)
        #expect(sysusers.contains("u listd"))
    }

    /// listweb's unit: notify, loopback only, its token a credential (never on the command line), in the
    /// listd group to reach the socket.
    @Test func listwebUnitIsLoopbackOnlyWithItsTokenAsACredential() throws {
        let service = try String(contentsOf: Self.systemdDirectory.appendingPathComponent("listweb.service"), encoding: .utf8)
        #expect(service.contains("Type=notify") && service.contains("--host 127.0.0.1") && service.contains("IPAddressAllow=localhost"))
        #expect(service.contains("LoadCredential=token:") && service.contains("--token-file ${CREDENTIALS_DIRECTORY}/token"))
        #expect(service.contains("SupplementaryGroups=listd") && !service.contains("--allow-actions\n"))
    }
}
