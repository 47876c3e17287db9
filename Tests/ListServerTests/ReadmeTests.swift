import Foundation
import TestSupport
import Testing

/// The repository's root directory.
let repositoryDirectory = protocolDirectory.deletingLastPathComponent()

/// The documentation a reader meets: README.md, then the pages under docs/ in the order of their names
/// (paths relative to the repository).
func documentationFiles() throws -> [String] {
    let docs = try FileManager.default.contentsOfDirectory(atPath: repositoryDirectory.appendingPathComponent("docs").path)
        .filter { $0.hasSuffix(".md") }.sorted()
    return ["README.md"] + docs.map { "docs/" + $0 }
}

@Suite("README examples replayed against listd", .serialized)
struct ReadmeTests {
    /// A replayed block: where it is, and its commands, each with its exact output.
    struct Block {
        var file: String
        var line: Int
        var commands: [(command: String, output: [String])]
    }

    /// The `console` blocks marked as replayed (a `<!-- replayed by` line right before the fence), in
    /// README.md and then in docs/*.md: each `$ ` line is a shell command, the lines up to the next one
    /// its exact output.
    static func replayedBlocks() throws -> [Block] {
        var blocks: [Block] = []
        for file in try documentationFiles() {
            let text = try String(contentsOf: repositoryDirectory.appendingPathComponent(file), encoding: .utf8)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().makeIterator()
            while let (number, line) = lines.next() {
                guard line.hasPrefix("<!-- replayed by") else { continue }
                guard lines.next()?.element == "```console" else { continue }
                var block = Block(file: file, line: number + 1, commands: [])
                while let (_, line) = lines.next(), line != "```" {
                    if line.hasPrefix("$ ") {
                        block.commands.append((String(line.dropFirst(2)), []))
                    } else if !block.commands.isEmpty {
                        block.commands[block.commands.count - 1].output.append(String(line))
                    }
                }
                blocks.append(block)
            }
        }
        return blocks
    }

    @Test func readmeHasReplayedExamples() throws {
        let blocks = try Self.replayedBlocks()
        #expect(blocks.count == 5, "each block has a replay test: \(blocks.map { "\($0.file):\($0.line)" })")
        let readme = blocks.filter { $0.file == "README.md" }.flatMap(\.commands)
        #expect(readme.contains { $0.command.contains("socat") })
        #expect(readme.contains { $0.command.hasPrefix("listctl") })
        #expect(blocks.allSatisfy { !$0.commands.isEmpty })
    }

    @Test(arguments: 0..<5)
    func replay(block index: Int) throws {
        let blocks = try Self.replayedBlocks()
        try #require(blocks.indices.contains(index))
        let block = blocks[index]
        let daemon = try Daemon(arguments: ["--demo"])
        for (command, expected) in block.commands {
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
                "\(block.file):\(block.line): $ \(command)\n\(errors)")
        }
    }
}
