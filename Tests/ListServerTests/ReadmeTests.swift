import Foundation
import TestSupport
import Testing

@Suite("README examples replayed against listd", .serialized)
struct ReadmeTests {
    /// The `console` blocks marked as replayed: each `$ ` line is a shell command, the lines up to the
    /// next one its exact output.
    static func replayedBlocks() throws -> [[(command: String, output: [String])]] {
        let readme = try String(contentsOf: protocolDirectory.deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [[(String, [String])]] = []
        var lines = readme.split(separator: "\n", omittingEmptySubsequences: false).makeIterator()
        while let line = lines.next() {
            guard line.hasPrefix("<!-- replayed by") else { continue }
            guard lines.next() == "```console" else { continue }
            var block: [(String, [String])] = []
            while let line = lines.next(), line != "```" {
                if line.hasPrefix("$ ") {
                    block.append((String(line.dropFirst(2)), []))
                } else if !block.isEmpty {
                    block[block.count - 1].1.append(String(line))
                }
            }
            blocks.append(block)
        }
        return blocks
    }

    @Test func readmeHasReplayedExamples() throws {
        let blocks = try Self.replayedBlocks()
        #expect(blocks.count == 5, "each block has a replay test")
        #expect(blocks.flatMap { $0 }.contains { $0.command.contains("socat") })
        #expect(blocks.flatMap { $0 }.contains { $0.command.hasPrefix("listctl") })
    }

    @Test(arguments: 0..<5)
    func replay(block index: Int) throws {
        let blocks = try Self.replayedBlocks()
        try #require(blocks.indices.contains(index))
        let daemon = try Daemon(arguments: ["--demo"])
        for (command, expected) in blocks[index] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            var environment = ProcessInfo.processInfo.environment
            environment["LISTD_SOCKET"] = daemon.socketPath
            environment["PATH"] = binaryDirectory.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["SWIFT_BACKTRACE"] = "enable=no"
            process.environment = environment
            let out = makePipe()
            let err = makePipe()
            process.standardOutput = out
            process.standardError = err
            try process.start()
            let watchdog = process.killIfStillRunning(after: .seconds(300))
            defer { watchdog.cancel() }
            let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit(within: .seconds(60))
            #expect(
                output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) == expected,
                "$ \(command)\n\(errors)")
        }
    }
}
