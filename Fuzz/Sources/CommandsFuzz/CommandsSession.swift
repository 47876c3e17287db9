import DiffableCore
import ListServer
import ListServerTestKit
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// Reports a broken invariant and aborts: libFuzzer saves the input as a crash.
func violation(_ message: String, request: [UInt8]) -> Never {
    let shown = String(decoding: request.prefix(2_000), as: UTF8.self).debugDescription
    fputs("INVARIANT VIOLATED: \(message)\n  after request: \(shown)\n", stderr)
    abort()
}

/// One input's run: a new ephemeral in-process server and a connection without a channel
/// (`DetachedInProcessConnection`: each line goes straight to the router and the engine), and optionally
/// a twin server that gets every line spelt another way (`LineVariant`) and must answer byte for byte
/// the same and end in the same state.
///
/// After every line: the decoder's fast and general paths agree on it (`DecoderDifferential`); a
/// non-blank line is answered with one reply, valid JSON with `ok` a boolean and, when false, a string
/// `error.code` (`WrittenLine`; every `parseInterval`th reply also parsed with `JSONParser`, which must
/// agree); a failed request leaves the state's digest (every data source's incarnation, version, counts
/// and bytes, and the number of registrations) as it was, and every `fullCheckInterval`th line the whole
/// state byte for byte; versions never decrease within an incarnation. After the input: no reply is
/// still owed and every snapshot keeps its invariants.
final class CommandsSession {
    /// `LISTD_FUZZ_TRACE=1`: each request line and its reply go to stderr.
    static let tracing = getenv("LISTD_FUZZ_TRACE") != nil
    /// Lines per input are at most `maximumLines`: the whole-state check comes on the last line of a
    /// full input at least.
    static let fullCheckInterval = maximumLines
    static let parseInterval = 16
    private let main: Side
    private let twin: Side?
    private var highestVersion: [String: Int] = [:]
    private var lineCount = 0
    /// The twin's incarnations and main's for the same data source (the same bytes in either server's
    /// replies and state once swapped).
    private var twinIncarnations: [(twin: [UInt8], main: [UInt8])] = []

    /// The limits every server is made with: small, so that inputs reach them.
    private static let configuration: ServerConfiguration = {
        var configuration = ServerConfiguration(listener: .path("/unused"))
        configuration.maximumLineBytes = 64 << 10
        configuration.maximumItemsPerDataSource = 2_000
        configuration.maximumBatchOperations = 200
        configuration.maximumDataSources = 16
        configuration.maximumRegistrations = 16
        return configuration
    }()

    /// One server and its client connection.
    private final class Side {
        let server = InProcessServer(configuration: CommandsSession.configuration)
        lazy var client = server.connectDetached()
        /// The state's digest after the last line.
        var digest: StateDigest
        var replyCount = 0

        init() { digest = server.digest() }

        /// Runs a line (a blank one gets no reply); returns its reply, checked to be one.
        func send(_ line: [UInt8]) -> [UInt8]? {
            let reply = client.run(line)
            for late in client.takeLateReplies() { check(late, request: line) }
            if let reply {
                check(reply, request: line)
            } else if !isBlank(line), client.pendingReplies == 0 {
                violation("a request got no reply", request: line)
            }
            return reply
        }

        private func check(_ reply: [UInt8], request: [UInt8]) {
            let kind = WrittenLine(reply)
            replyCount += 1
            if case .malformed(let why) = kind { violation("the reply \(String(decoding: reply.prefix(600), as: UTF8.self).debugDescription) is \(why)", request: request) }
            if kind == .event { violation("an event where a reply was due: \(String(decoding: reply.prefix(600), as: UTF8.self))", request: request) }
            if replyCount % CommandsSession.parseInterval == 0 { crossCheck(reply, kind, request: request) }
        }

        /// `WrittenLine`'s view of a reply against the JSON parser's.
        private func crossCheck(_ reply: [UInt8], _ kind: WrittenLine, request: [UInt8]) {
            guard let value = try? JSONParser.parse(reply) else { violation("WrittenLine took a reply JSONParser refuses", request: request) }
            let parsed: WrittenLine =
                switch (value["ok"], value.value(atPath: "error.code")) {
                case (.bool(true)?, _): .success
                case (.bool(false)?, .string?): .failure
                default: .malformed("")
                }
            if parsed != kind { violation("WrittenLine says \(kind), JSONParser \(parsed)", request: request) }
        }

        func finish() {
            for late in client.takeLateReplies() { check(late, request: []) }
            if client.pendingReplies != 0 { violation("\(client.pendingReplies) requests were never answered", request: []) }
            let problems = server.consistencyProblems
            if !problems.isEmpty { violation("inconsistent state: \(problems.prefix(3))", request: []) }
        }
    }

    /// A session with new servers (a new server costs a few lines' time; nothing of one input can
    /// reach the next).
    init(withTwin: Bool) {
        main = Side()
        twin = withTwin ? Side() : nil
    }

    /// Runs one request line (without newline; a trailing `\r` is dropped, as the framer does) and
    /// checks the invariants.
    func request(_ given: [UInt8]) {
        let line = given.last == 0x0D ? Array(given.dropLast()) : given
        lineCount += 1
        if !isBlank(line) { DecoderDifferential.check(line) }
        let before = main.digest
        let encodingBefore = lineCount % Self.fullCheckInterval == 0 ? main.server.stateEncoding : nil
        let reply = main.send(line)
        if Self.tracing {
            fputs("> \(String(decoding: line.prefix(300), as: UTF8.self))\n", stderr)
            if let reply { fputs("< \(String(decoding: reply.prefix(300), as: UTF8.self))\n", stderr) }
        }
        let failed = reply.map { WrittenLine($0) == .failure } ?? false
        if failed {
            main.digest = main.server.digest()
            if main.digest != before { violation("a failed request changed the state's digest", request: line) }
            if let encodingBefore, encodingBefore != main.server.stateEncoding { violation("a failed request changed the state's content", request: line) }
        } else {
            main.digest = main.server.digest { incarnation, version in
                if let highest = highestVersion[incarnation], version < highest {
                    violation("a version went back from \(highest) to \(version)", request: line)
                }
                highestVersion[incarnation] = version
            }
        }
        if let twin { compare(line, reply: reply, twin: twin) }
    }

    /// The twin gets the line spelt another way and must answer the same and hold the same state.
    private func compare(_ line: [UInt8], reply: [UInt8]?, twin: Side) {
        let variant = LineVariant.of(line, seed: lineCount) ?? line
        let twinReply = twin.send(variant)
        let digestBefore = twin.digest
        twin.digest = twin.server.digest()
        if twin.digest != digestBefore { mapIncarnations(twin) }
        let normalized = twinReply.map { inMainTerms($0) }
        if normalized != reply {
            let shown = { (bytes: [UInt8]?) in bytes.map { String(decoding: $0.prefix(600), as: UTF8.self) } ?? "nothing" }
            violation(
                "the same request spelt \(String(decoding: variant.prefix(600), as: UTF8.self).debugDescription) was answered \(shown(normalized)) instead of \(shown(reply))",
                request: line)
        }
        if twin.digest.ignoringIncarnations != main.digest.ignoringIncarnations { violation("the twin's state differs (its digest)", request: line) }
        if lineCount % Self.fullCheckInterval == 0 { compareStates(twin, line: line) }
    }

    /// Pairs the twin's incarnations with main's, by data source name.
    private func mapIncarnations(_ twin: Side) {
        let mainVersions = main.server.versions
        for (name, twinVersion) in twin.server.versions {
            guard let mainVersion = mainVersions[name], !twinIncarnations.contains(where: { $0.twin.elementsEqual(twinVersion.incarnation.utf8) }) else { continue }
            twinIncarnations.append((Array(twinVersion.incarnation.utf8), Array(mainVersion.incarnation.utf8)))
        }
    }

    private func compareStates(_ twin: Side, line: [UInt8]) {
        if inMainTerms(twin.server.stateEncoding) != main.server.stateEncoding { violation("the twin's state content differs", request: line) }
    }

    /// Twin bytes with the twin's incarnations replaced by main's.
    private func inMainTerms(_ bytes: [UInt8]) -> [UInt8] {
        var result = bytes
        for (twinIncarnation, mainIncarnation) in twinIncarnations { result = replacing(twinIncarnation, with: mainIncarnation, in: result) }
        return result
    }

    private func replacing(_ pattern: [UInt8], with replacement: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard !pattern.isEmpty, bytes.count >= pattern.count, let first = pattern.first else { return bytes }
        var out: [UInt8] = []
        var copied = 0
        var index = 0
        while index + pattern.count <= bytes.count {
            if bytes[index] == first, bytes[index..<index + pattern.count].elementsEqual(pattern) {
                if out.isEmpty { out.reserveCapacity(bytes.count) }
                out += bytes[copied..<index]
                out += replacement
                index += pattern.count
                copied = index
            } else {
                index += 1
            }
        }
        if copied == 0 { return bytes }
        out += bytes[copied...]
        return out
    }

    /// Every request answered, every snapshot consistent; the twin in the same state.
    func finish() {
        main.finish()
        if let twin {
            twin.finish()
            compareStates(twin, line: [])
        }
    }
}

/// What the connection handler ignores: a line of spaces and tabs.
func isBlank(_ line: [UInt8]) -> Bool {
    line.allSatisfy { $0 == 0x20 || $0 == 0x09 }
}
