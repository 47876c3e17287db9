import Foundation
import Testing

/// The README and the pages under docs/ link to files of the repository and to headings in them; a link
/// that names nothing is a broken promise to the reader. These tests read the Markdown as GitHub renders
/// it: fenced blocks and code spans are code, not links, and a `#fragment` is a heading's slug.
@Suite("Documentation links")
struct DocumentationLinkTests {
    /// A link or image found in a Markdown file.
    struct Link: CustomStringConvertible {
        var file: String
        var line: Int
        var target: String
        var description: String { "\(file):\(line): \(target)" }
    }

    @Test("README links resolved")
    func readmeLinksResolved() throws {
        var checked = 0
        for file in try documentationFiles() {
            let text = try String(contentsOf: repositoryDirectory.appendingPathComponent(file), encoding: .utf8)
            for link in Self.links(in: text, file: file) {
                checked += 1
                if let problem = try Self.problem(with: link) {
                    Issue.record("\(link): \(problem)")
                }
            }
        }
        #expect(checked > 50, "the README and docs/ have links to check")
    }

    @Test("every page under docs/ is linked from the README")
    func everyPageIsLinkedFromTheReadme() throws {
        let readme = try String(contentsOf: repositoryDirectory.appendingPathComponent("README.md"), encoding: .utf8)
        let linked = Set(
            Self.links(in: readme, file: "README.md").map { link in
                String(link.target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
            })
        for page in try documentationFiles() where page != "README.md" {
            #expect(linked.contains(page), "README.md does not link \(page)")
        }
    }

    /// The finder and the slugs themselves, on a small document.
    @Test func linksAndSlugsFollowGitHubsRules() {
        let text = """
            # Title
            A [link](a.md#b-c) and ![an image](img/x.png "its title"), `[not](code.md)`,
            a [link over
            two lines](two.md) and <img src="screens/p.png" width="260"> and [ref]: ref.md
            ```sh
            [not a link](fenced.md)
            ```
            ## `Code` in a heading, and punctuation: yes!
            ## Title
            [mail](mailto:someone@example.org) [web](https://example.org) [here](#title-1)
            """
        let links = Self.links(in: text, file: "x.md")
        #expect(links.map(\.target) == ["a.md#b-c", "img/x.png", "two.md", "screens/p.png", "ref.md", "#title-1"])
        #expect(links.map(\.line) == [2, 2, 4, 4, 4, 10])
        #expect(Self.anchors(in: text) == ["title", "code-in-a-heading-and-punctuation-yes", "title-1"])
        #expect(Self.slug("Quotas: `maxBytesPerUser` (256 MiB) — über_alles") == "quotas-maxbytesperuser-256-mib--über_alles")
    }

    // MARK: - Reading Markdown

    /// The text with fenced code blocks blanked (their lines kept, so line numbers stay right).
    static func withoutFences(_ text: String) -> [Substring] {
        var fence: Substring?
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let trimmed = line.drop { $0 == " " }
            if let open = fence {
                if trimmed.hasPrefix(open) && trimmed.allSatisfy({ $0 == open.first }) { fence = nil }
                return ""
            }
            for marker in ["```", "~~~"] where trimmed.hasPrefix(marker) {
                fence = Substring(String(trimmed.prefix { $0 == marker.first }))
                return ""
            }
            return line
        }
    }

    /// The line with its code spans blanked.
    static func withoutCodeSpans(_ line: Substring) -> String {
        var result = ""
        var rest = line[...]
        while let tick = rest.firstIndex(of: "`") {
            result += rest[..<tick]
            let run = rest[tick...].prefix { $0 == "`" }
            let after = rest[run.endIndex...]
            guard let close = after.range(of: String(run)) else {
                result += rest[tick...]
                return result
            }
            result += String(repeating: " ", count: run.count + after.distance(from: after.startIndex, to: close.upperBound))
            rest = after[close.upperBound...]
        }
        return result + rest
    }

    private static let patterns: [NSRegularExpression] = [
        // [text](target) and ![alt](target), the text possibly over several lines, an optional title.
        #"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)"#,
        // [label]: target
        #"\[[^\]]+\]:\s+<?([^\s>]+)>?"#,
        // <img src="…"> and <a href="…">
        #"<(?:img|a)\b[^>]*\s(?:src|href)="([^"]+)""#,
    ].map { try! NSRegularExpression(pattern: $0) }

    /// Every link and image target in a Markdown text, outside code, in order.
    static func links(in text: String, file: String) -> [Link] {
        let lines = withoutFences(text).map(withoutCodeSpans)
        let prose = lines.joined(separator: "\n")
        let nsProse = prose as NSString
        var found: [(location: Int, target: String)] = []
        for pattern in patterns {
            for match in pattern.matches(in: prose, range: NSRange(location: 0, length: nsProse.length)) {
                let range = match.range(at: 1)
                found.append((range.location, nsProse.substring(with: range)))
            }
        }
        return found.sorted { $0.location < $1.location }.compactMap { entry in
            if entry.target.range(of: #"^[A-Za-z][A-Za-z0-9+.-]*:"#, options: .regularExpression) != nil { return nil }
            let line = nsProse.substring(to: entry.location).reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
            return Link(file: file, line: line, target: entry.target)
        }
    }

    /// GitHub's anchor for a heading's text: the rendered text lower-cased, without anything but letters,
    /// marks, numbers, `_`, `-` and spaces, and spaces made hyphens.
    static func slug(_ heading: String) -> String {
        var text = heading.replacingOccurrences(of: #"!?\[([^\]]*)\]\([^)]*\)"#, with: "$1", options: .regularExpression)
        text = text.replacingOccurrences(of: #"<[^>]+>"#, with: "", options: .regularExpression)
        text = text.replacingOccurrences(of: "`", with: "").replacingOccurrences(of: "*", with: "")
        return String(
            text.lowercased().unicodeScalars.compactMap { scalar -> Character? in
                switch scalar.properties.generalCategory {
                case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                    .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
                    .connectorPunctuation:
                    return Character(scalar)
                default:
                    if scalar == "-" { return "-" }
                    if scalar == " " { return "-" }
                    return nil
                }
            })
    }

    /// The anchors a Markdown text has: its headings' slugs (a repeated one numbered from 1, as GitHub
    /// does) and explicit `<a id>`/`<a name>` anchors.
    static func anchors(in text: String) -> [String] {
        var anchors: [String] = []
        var seen: [String: Int] = [:]
        for line in withoutFences(text) {
            let hashes = line.prefix { $0 == "#" }
            if (1...6).contains(hashes.count), line.dropFirst(hashes.count).first == " " {
                var heading = line.dropFirst(hashes.count).trimmingCharacters(in: .whitespaces)
                while heading.hasSuffix("#") { heading = String(heading.dropLast()).trimmingCharacters(in: .whitespaces) }
                let base = slug(heading)
                let count = seen[base, default: 0]
                seen[base] = count + 1
                anchors.append(count == 0 ? base : "\(base)-\(count)")
            }
            let explicit = try! NSRegularExpression(pattern: #"<a\s+(?:id|name)="([^"]+)""#)
            let string = String(line)
            for match in explicit.matches(in: string, range: NSRange(location: 0, length: (string as NSString).length)) {
                anchors.append((string as NSString).substring(with: match.range(at: 1)))
            }
        }
        return anchors
    }

    /// What is wrong with a link, or nil when it names an existing file (and heading).
    static func problem(with link: Link) throws -> String? {
        let parts = link.target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let fragment = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : nil
        let here = repositoryDirectory.appendingPathComponent(link.file)
        let target = path.isEmpty ? here : here.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
        let root = repositoryDirectory.standardizedFileURL.path
        guard target.path == root || target.path.hasPrefix(root + "/") else {
            return "points outside the repository"
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target.path, isDirectory: &isDirectory) else {
            return "no such file: \(target.path.dropFirst(root.count + 1))"
        }
        guard let fragment else { return nil }
        guard !isDirectory.boolValue, target.pathExtension == "md" else {
            return "a #fragment on a file that is not Markdown"
        }
        let headings = anchors(in: try String(contentsOf: target, encoding: .utf8))
        guard headings.contains(fragment) else {
            let close = headings.filter { $0.contains(fragment) || fragment.contains($0) }.prefix(3)
            return "no heading #\(fragment) in \(target.lastPathComponent)" + (close.isEmpty ? "" : " (did you mean \(close.map { "#" + $0 }.joined(separator: ", "))?)")
        }
        return nil
    }
}
