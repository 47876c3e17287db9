import Foundation
import Testing

/// The guides under `docs/`: their `transcript` blocks, in order, are one transcript replayed against a
/// new listd (as `protocol/transcripts` are), so a guide cannot drift from what listd answers.
@Suite("docs/ guides replayed against listd", .serialized)
struct GuideTests {
    static let docsDirectory = protocolDirectory.deletingLastPathComponent().appendingPathComponent("docs")

    /// The pages of `docs/` that hold `transcript` blocks (design notes hold none).
    static var guides: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: docsDirectory.path)) ?? []).filter { name in
            name.hasSuffix(".md") && (try? String(contentsOf: docsDirectory.appendingPathComponent(name), encoding: .utf8))?.contains("```transcript\n") == true
        }.sorted()
    }

    /// The lines of a guide's `transcript` blocks, with their line numbers in the guide.
    static func transcript(of guide: String) throws -> (lines: [Substring], numbers: [Int]) {
        let text = try String(contentsOf: docsDirectory.appendingPathComponent(guide), encoding: .utf8)
        var lines: [Substring] = []
        var numbers: [Int] = []
        var inside = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line == "```transcript" {
                inside = true
            } else if inside && line == "```" {
                inside = false
            } else if inside {
                lines.append(line)
                numbers.append(index + 1)
            }
        }
        return (lines, numbers)
    }

    @Test func theToDoGuideIsReplayed() throws {
        #expect(Self.guides.contains("todo-list-from-scratch.md"))
        #expect(try Self.transcript(of: "todo-list-from-scratch.md").lines.count >= 30)
    }

    @Test(arguments: guides)
    func replay(_ guide: String) throws {
        let (lines, numbers) = try Self.transcript(of: guide)
        try replayTranscript(lines.joined(separator: "\n"), name: "docs/\(guide)", lineOffsets: numbers)
    }
}
