import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// listctl's exit statuses, in one table (the man page's EXIT STATUS section says the same; a test runs
/// each case).
enum ExitStatus: Int32, CaseIterable {
    /// The request was done.
    case success = 0
    /// listd refused the request (its error code and message are printed), or the request was not sent:
    /// a file that cannot be read, JSON that does not parse, a line over listd's limit.
    case refused = 1
    /// listd cannot be reached, or the connection broke (`watch` gave up reconnecting).
    case unreachable = 2
    /// A wrong command line: an unknown command or option, a missing argument.
    case usage = 64

    var exitCode: ExitCode { ExitCode(rawValue) }

    /// Prints `message` (as `listctl: message`) and returns the status to throw.
    static func fail(_ status: ExitStatus, _ message: String) -> ExitCode {
        Output.error("listctl: \(message)")
        return status.exitCode
    }
}

/// The closest of `candidates` to `word`, when it is close enough to be a typo (an edit distance of at
/// most a third of the word, and at least one): "did you mean".
func closest(to word: String, in candidates: some Sequence<String>) -> String? {
    let word = Array(word.lowercased())
    var best: (name: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(word, Array(candidate.lowercased()))
        if distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    guard let best, best.distance > 0, best.distance <= max(1, word.count / 3) else { return nil }
    return best.name
}

/// Levenshtein distance, with a swap of two neighbours counted as one edit.
func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var before = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], before[j - 2] + 1) }
        }
        before = previous
        previous = current
    }
    return previous[b.count]
}

/// A file's contents, or the refusal naming the file and why (`cannot read x.json: No such file or
/// directory`).
func readFile(_ path: String) throws -> [UInt8] {
    let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw ExitStatus.fail(.refused, "cannot read \(path): \(String(cString: strerror(errno)))") }
    defer { if path != "-" { close(descriptor) } }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count < 0 { throw ExitStatus.fail(.refused, "cannot read \(path == "-" ? "standard input" : path): \(String(cString: strerror(errno)))") }
        if count == 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return bytes
}
