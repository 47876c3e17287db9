import Foundation
import TestSupport
import Testing

/// listweb in a real browser: Tests/Browser/listweb_test.py drives Debian's chromium with Playwright
/// against a listd and two listwebs it starts (see that script for the checks). Its screenshots of the
/// demo's pages are kept in .build/artifacts/listweb.
@Suite("listweb in Chromium", .serialized)
struct BrowserTests {
    static let repository = protocolDirectory.deletingLastPathComponent()

    @Test func listwebInChromium() throws {
        let artifacts = Self.repository.appendingPathComponent(".build/artifacts/listweb").path
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/browser.log"
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.repository.appendingPathComponent("Tests/Browser/listweb_test.py").path, "--bin", binaryDirectory.path,
            "--artifacts", artifacts,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        environment.removeValue(forKey: "LISTD_SOCKET")
        process.environment = environment
        process.standardOutput = output
        process.standardError = output
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.start()
        let deadline = ContinuousClock.now + .seconds(600)
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit(within: .seconds(60))
        try output.close()
        let report = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "\(report)")
        #expect(report.contains(" passed, 0 failed"), "\(report)")
        for page in ["home", "emoji", "outline"] {
            #expect(FileManager.default.fileExists(atPath: artifacts + "/\(page).png"), "the screenshot of \(page)")
        }
    }
}

extension BrowserTests {
    /// Runs one of the other scripts of Tests/Browser (they take listweb_test.py's command line): its exit
    /// status and output, and the directory its screenshots go to (.build/artifacts/listweb).
    static func runScript(_ name: String) throws -> (status: Int32, output: String, artifacts: String) {
        let artifacts = repository.appendingPathComponent(".build/artifacts/listweb").path
        let script = repository.appendingPathComponent("Tests/Browser/\(name)").path
        let run = try runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "--bin", binaryDirectory.path, "--artifacts", artifacts])
        return (run.status, run.out + run.err, artifacts)
    }
}
