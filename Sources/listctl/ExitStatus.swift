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
