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

/// One input's run: an ephemeral in-process server and one client connection, and optionally a twin
/// server that gets every line spelt another way (`LineVariant`) and must answer byte for byte the same
/// and end in the same state.
///
/// After every line: the decoder's fast and general paths agree on it (`DecoderDifferential`); every
/// line written is a JSON object, a reply (`ok` a boolean, an error with a string `code`) or an event;
/// no more replies than requests; a failed request leaves the state's fingerprint (every data source's
/// incarnation, version, counts and bytes) as it was, and every 8th line the whole state byte for byte;
/// versions never decrease within an incarnation. After the input: every request was answered and every
/// snapshot keeps its invariants.
final class CommandsSession {
    /// `LISTD_FUZZ_TRACE=1`: each request line and its replies go to stderr.
    static let tracing = getenv("LISTD_FUZZ_TRACE") != nil
    static let fullCheckInterval = 8
    private var main: Side
    private var twin: Side?
    private var highestVersion: [String: Int] = [:]
    private var lineCount = 0
    /// The twin's incarnations and main's for the same data source (the same bytes in either server's
    /// replies and state once swapped).
    private var twinIncarnations: [String: String] = [:]

    /// One server and its client connection.
    private final class Side {
        let server: InProcessServer
        var client: InProcessConnection
        /// Non-blank lines sent and not answered yet.
        var unanswered = 0

        init() {
            var configuration = ServerConfiguration(listener: .path("/unused"))
            configuration.maximumLineBytes = 64 << 10
            configuration.maximumItemsPerDataSource = 2_000
            configuration.maximumBatchOperations = 200
            configuration.maximumDataSources = 16
            configuration.maximumRegistrations = 16
            server = InProcessServer(configuration: configuration)
            client = try! server.connect()
        }

        /// Sends a line; returns what was written (replies and events) and the replies among it.
        func send(_ line: [UInt8]) -> (output: [[UInt8]], replies: [JSONValue]) {
            let output: [[UInt8]]
            do {
                output = try client.send(line + [0x0A])
            } catch {
                violation("the channel failed: \(error)", request: line)
            }
            if !isBlank(line) { unanswered += 1 }
            let replies = CommandsSession.replies(in: output, request: line)
            unanswered -= replies.count
            if unanswered < 0 { violation("more replies than requests", request: line) }
            if !client.isOpen {
                // Closed after `line-too-long`: carry on with a new connection.
                client.close()
                client = try! server.connect()
                unanswered = 0
            }
            return (output, replies)
        }

        func finish() {
            do {
                unanswered -= CommandsSession.replies(in: try client.advanceTime(milliseconds: 60_000), request: []).count
            } catch {
                violation("the channel failed: \(error)", request: [])
            }
            if client.isOpen && unanswered != 0 { violation("\(unanswered) requests were never answered", request: []) }
            let problems = server.consistencyProblems
            if !problems.isEmpty { violation("inconsistent state: \(problems.prefix(3))", request: []) }
            if client.unterminatedOutputBytes != 0 { violation("an unterminated output line", request: []) }
        }

        /// Drops every data source and unregisters every registration; whether the server is empty then.
        func empty() -> Bool {
            for dataSource in server.fingerprint.dataSources {
                _ = try? client.send(Array(#"{"cmd":"dropDataSource","dataSource":"#.utf8) + JSONValue.string(dataSource.name).jsonBytes + Array("}\n".utf8))
            }
            for key in server.registrationKeys {
                _ = try? client.send(Array(#"{"cmd":"unregister","registration":"#.utf8) + JSONValue.string(key).jsonBytes + Array("}\n".utf8))
            }
            unanswered = 0
            let left = server.fingerprint
            return client.isOpen && left.dataSources.isEmpty && left.registrations == 0 && client.unterminatedOutputBytes == 0
        }

        deinit { client.close() }
    }

    /// The session inputs share: its servers are emptied after each input rather than made anew (a new
    /// server and connection cost more than a dozen request lines).
    private static var shared: CommandsSession?
    /// The twin, kept between inputs that use one.
    private var spareTwin: Side?

    private init() { main = Side() }

    /// The session for the next input, its servers empty: the shared one when it could be emptied.
    static func begin(withTwin: Bool) -> CommandsSession {
        let session = shared ?? CommandsSession()
        shared = session
        session.highestVersion.removeAll(keepingCapacity: true)
        session.twinIncarnations.removeAll(keepingCapacity: true)
        session.lineCount = 0
        if withTwin && session.spareTwin == nil { session.spareTwin = Side() }
        session.twin = withTwin ? session.spareTwin : nil
        return session
    }

    /// After the input: empties the servers for the next one (drops every data source, unregisters every
    /// registration); with `connectionUsed` (the input may have left something with its connection: a
    /// view, a plugin's hello, cells) or when emptying fails, the next input gets new servers.
    func end(connectionUsed: Bool) {
        if connectionUsed || !main.empty() || !(spareTwin?.empty() ?? true) { Self.shared = nil }
    }

    /// Runs one request line (a newline is added) and checks the invariants.
    func request(_ line: [UInt8]) {
        lineCount += 1
        let blank = isBlank(line)
        if !blank { DecoderDifferential.check(line.last == 0x0D ? Array(line.dropLast()) : line) }
        let before = main.server.fingerprint
        let encodingBefore = lineCount % Self.fullCheckInterval == 0 ? main.server.stateEncoding : nil
        let (output, replies) = main.send(line)
        if Self.tracing {
            fputs("> \(String(decoding: line.prefix(300), as: UTF8.self))\n", stderr)
            for written in output { fputs("< \(String(decoding: written.prefix(300), as: UTF8.self))\n", stderr) }
        }
        let after = main.server.fingerprint
        if !blank, replies.count == 1, replies[0]["ok"] == false {
            if after != before { violation("a failed request changed the state: \(before) → \(after)", request: line) }
            if let encodingBefore, encodingBefore != main.server.stateEncoding { violation("a failed request changed the state's content", request: line) }
        }
        for dataSource in after.dataSources {
            if let highest = highestVersion[dataSource.incarnation], dataSource.version < highest {
                violation("a version went back from \(highest) to \(dataSource.version)", request: line)
            }
            highestVersion[dataSource.incarnation] = dataSource.version
        }
        if let twin { compare(line, output: output, after: after, twin: twin) }
    }

    /// The twin gets the line spelt another way and must write the same lines and hold the same state.
    private func compare(_ line: [UInt8], output: [[UInt8]], after: StateFingerprint, twin: Side) {
        let variant = LineVariant.of(line, seed: lineCount) ?? line
        let twinOutput = twin.send(variant).output
        let twinAfter = twin.server.fingerprint
        for dataSource in twinAfter.dataSources {
            if let mainSide = after.dataSource(dataSource.name) { twinIncarnations[dataSource.incarnation] = mainSide.incarnation }
        }
        let normalized = twinOutput.map { inMainTerms($0) }
        if normalized != output {
            violation(
                "the same request spelt \(String(decoding: variant.prefix(600), as: UTF8.self).debugDescription) was answered "
                    + "\(normalized.map { String(decoding: $0.prefix(600), as: UTF8.self) }) instead of \(output.map { String(decoding: $0.prefix(600), as: UTF8.self) })",
                request: line)
        }
        var mapped = twinAfter
        for index in mapped.dataSources.indices { mapped.dataSources[index].incarnation = twinIncarnations[mapped.dataSources[index].incarnation] ?? "?" }
        if mapped != after { violation("the twin's state differs: \(after) vs \(mapped)", request: line) }
        if lineCount % Self.fullCheckInterval == 0 { compareStates(twin, line: line) }
    }

    private func compareStates(_ twin: Side, line: [UInt8]) {
        if inMainTerms(twin.server.stateEncoding) != main.server.stateEncoding { violation("the twin's state content differs", request: line) }
    }

    /// Twin bytes with the twin's incarnations replaced by main's.
    private func inMainTerms(_ bytes: [UInt8]) -> [UInt8] {
        var result = bytes
        for (twinIncarnation, mainIncarnation) in twinIncarnations { result = replacing(Array(twinIncarnation.utf8), with: Array(mainIncarnation.utf8), in: result) }
        return result
    }

    private func replacing(_ pattern: [UInt8], with replacement: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if index + pattern.count <= bytes.count, bytes[index] == pattern[0], bytes[index..<index + pattern.count].elementsEqual(pattern) {
                out += replacement
                index += pattern.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
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

    /// The replies among `output`; fails on anything that is neither a reply nor an event.
    static func replies(in output: [[UInt8]], request: [UInt8]) -> [JSONValue] {
        var replies: [JSONValue] = []
        for bytes in output {
            let value: JSONValue
            do {
                value = try JSONParser.parse(bytes)
            } catch {
                violation("output is not JSON: \(String(decoding: bytes.prefix(500), as: UTF8.self))", request: request)
            }
            switch (value["ok"], value["event"]) {
            case (.bool(true)?, nil): replies.append(value)
            case (.bool(false)?, nil):
                guard case .string? = value.value(atPath: "error.code") else { violation("an error reply without a string code", request: request) }
                replies.append(value)
            case (nil, .string?): break
            default: violation("output is neither a reply nor an event: \(String(decoding: bytes.prefix(500), as: UTF8.self))", request: request)
            }
        }
        return replies
    }
}

/// What the connection handler ignores: a line of spaces and tabs (after the framer drops a `\r`).
func isBlank(_ line: [UInt8]) -> Bool {
    let content = line.last == 0x0D ? line.dropLast() : line[...]
    return content.allSatisfy { $0 == 0x20 || $0 == 0x09 }
}
