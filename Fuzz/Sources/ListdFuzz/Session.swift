import DiffableCore
import ListAccess
import ListServer
import ListServerTestKit
import ListEngine
import ListStore
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

/// Commands that only read: an ok reply to one of them must leave the state as it was.
let queryCommands: Set<String> = [
    "ping", "describe", "stats", "listDataSources", "sectionSnapshot", "snapshot", "numberOfSections", "numberOfItems",
    "itemIdentifier", "indexPath", "sectionIdentifier", "index", "item", "layout", "registrations", "styles",
]

/// One fuzz input's run: a fresh ephemeral server, the client connection the input drives, and a
/// checker connection that queries the state at the end of the input.
///
/// Invariants checked after each line: every line written is a JSON object that is a reply (`ok` a
/// boolean) or an event (`event` a string); no more replies than requests; a failed request (and a
/// successful query) leaves the whole state byte for byte as it was; within one incarnation a data
/// source's version never decreases; the served state and the model agree and every snapshot keeps
/// its invariants. After the input: every request was answered, and per data source `snapshot` has
/// unique section and item identifiers and agrees with `numberOfSections`, `numberOfItems` and the
/// version.
final class Session {
    static let maximumLineBytes = 64 << 10
    /// `LISTD_FUZZ_TRACE=1`: each request line and how long it took (with its checks) go to stderr.
    static let tracing = getenv("LISTD_FUZZ_TRACE") != nil
    let server: InProcessServer
    private var client: InProcessConnection
    private let checker: InProcessConnection
    /// The highest version seen, by incarnation.
    private var highestVersion: [String: Int] = [:]
    /// The state's encoding now, when the last check took it (the next line's "before").
    private var knownEncoding: [UInt8]?
    /// Non-blank lines sent on the client connection and not answered yet.
    private var unanswered = 0

    /// - Parameter asAnotherUser: the input's requests come from uid 1000, an ordinary user, and root owns
    ///   data source "d" (a section, two items, a view) and registration "r" before the first line: the
    ///   generator's favourite names, so most requests meet the access policy and the per-user quotas.
    /// - Parameter store: a durable server over it (see `FlakyStore`); ephemeral when `nil`.
    init(asAnotherUser: Bool = false, store: FlakyStore? = nil) {
        var configuration = ServerConfiguration(listener: .path("/unused"))
        configuration.maximumLineBytes = Self.maximumLineBytes
        configuration.maximumItemsPerDataSource = 20_000
        configuration.maximumBatchOperations = 2_000
        configuration.maximumDataSources = 64
        configuration.maximumRegistrations = 64
        configuration.quota = OwnerQuota(maximumDataSources: 3, maximumItems: 200, maximumRegistrations: 2)
        self.store = store
        if let store {
            do {
                server = try InProcessServer(configuration: configuration, store: store)
            } catch {
                violation("the durable server does not start: \(error)", request: [])
            }
        } else {
            server = InProcessServer(configuration: configuration)
        }
        checker = try! server.connect()
        guard asAnotherUser else {
            client = try! server.connect()
            store?.injecting = true
            return
        }
        for setup in [
            #"{"cmd":"apply","dataSource":"d","snapshot":{"sections":[{"id":"s0","items":["a","b"]}]}}"#,
            #"{"cmd":"register","registration":"r","contentConfiguration":{"type":"cell","text":"{{title}}"}}"#,
            #"{"cmd":"attach","dataSource":"d","view":"w"}"#,
        ] {
            guard let reply = try? checker.send(Array(setup.utf8) + [0x0A]).first, (try? JSONParser.parse(reply))?["ok"] == true else {
                violation("the setup request failed", request: Array(setup.utf8))
            }
        }
        client = try! server.connect(as: PeerIdentity(uid: 1000, gid: 1000, pid: 1, user: "fuzz"))
        store?.injecting = true
    }

    deinit {
        client.close()
        checker.close()
        server.closeStore()
    }

    /// The durable mode's store.
    private let store: FlakyStore?
    /// Lines since the store was last compared with the state served.
    private var linesSinceStoreCheck = 0

    /// With a store: every change is written or undone once a line's replies are out, and (every 8
    /// lines and at the end) the store holds exactly the state served: nothing acknowledged is lost and
    /// nothing undone is kept.
    private func checkStore(after line: [UInt8], always: Bool = false) {
        guard let store else { return }
        if !server.isIdle { violation("a change is still in flight after its line was answered", request: line) }
        linesSinceStoreCheck += 1
        guard always || linesSinceStoreCheck >= 8 else { return }
        linesSinceStoreCheck = 0
        let stored: [UInt8]
        do {
            stored = try store.storedEncoding()
        } catch {
            violation("the store cannot be read back: \(error)", request: line)
        }
        if stored != server.stateEncoding { violation("the store does not hold the state served", request: line) }
    }

    /// Sends one request line (a newline is added) on the client connection and checks the invariants.
    func request(_ line: [UInt8]) {
        let started = Self.tracing ? ContinuousClock.now : nil
        defer {
            if let started {
                fputs("\(ContinuousClock.now - started) \(String(decoding: line.prefix(300), as: UTF8.self).debugDescription)\n", stderr)
            }
        }
        // The state before this line: the encoding taken after the last line when there was one.
        let before = knownEncoding ?? server.stateEncoding
        knownEncoding = nil
        let output: [[UInt8]]
        do {
            output = try client.send(line + [0x0A])
        } catch {
            violation("the channel failed: \(error)", request: line)
        }
        let blank = Self.isBlank(line)
        if !blank { unanswered += 1 }
        let replies = classify(output, request: line)
        unanswered -= replies.count
        if unanswered < 0 { violation("more replies than requests", request: line) }
        if !client.isOpen {
            // Closed after `line-too-long`: carry on with a new connection.
            client.close()
            client = try! server.connect()
            unanswered = 0
        } else if !blank, unanswered == 0, replies.count == 1 {
            // The reply is this line's: a failure, or a query, must not have changed anything.
            let failed = replies[0]["ok"] == false
            if failed || Self.command(of: line).map(queryCommands.contains) == true {
                let after = server.stateEncoding
                if after != before { violation("\(failed ? "a failed request" : "a query") changed the state", request: line) }
                knownEncoding = after
            }
        }
        checkState(after: line)
        checkStore(after: line)
    }

    /// Lets deferred replies come due (plugin deadlines); then every request must have been answered.
    func finish() {
        let started = Self.tracing ? ContinuousClock.now : nil
        defer { if let started { fputs("\(ContinuousClock.now - started) finish\n", stderr) } }
        do {
            let output = try client.advanceTime(milliseconds: 60_000) + (try checker.advanceTime(milliseconds: 60_000))
            unanswered -= classify(output, request: []).count
        } catch {
            violation("the channel failed: \(error)", request: [])
        }
        if client.isOpen && unanswered != 0 { violation("\(unanswered) requests were never answered", request: []) }
        checkQueries()
        checkStore(after: [], always: true)
        if client.unterminatedOutputBytes != 0 { violation("an unterminated output line", request: []) }
    }

    /// The replies among `output`; fails on anything that is neither a reply nor an event.
    private func classify(_ output: [[UInt8]], request: [UInt8]) -> [JSONValue] {
        var replies: [JSONValue] = []
        for bytes in output {
            let value: JSONValue
            do {
                value = try JSONParser.parse(bytes)
            } catch {
                violation("output is not JSON: \(String(decoding: bytes.prefix(500), as: UTF8.self))", request: request)
            }
            switch (value["ok"], value["event"]) {
            case (.bool?, nil): replies.append(value)
            case (nil, .string?): break
            default: violation("output is neither a reply nor an event: \(String(decoding: bytes.prefix(500), as: UTF8.self))", request: request)
            }
            if value["ok"] == false, case .string? = value.value(atPath: "error.code") {} else if value["ok"] == false {
                violation("an error reply without a string code", request: request)
            }
        }
        return replies
    }

    private func checkState(after line: [UInt8]) {
        let problems = server.consistencyProblems
        if !problems.isEmpty { violation("inconsistent state: \(problems.prefix(3))", request: line) }
        let versions = server.versions
        for (_, current) in versions {
            if let highest = highestVersion[current.incarnation], current.version < highest {
                violation("a version went back from \(highest) to \(current.version)", request: line)
            }
            highestVersion[current.incarnation] = current.version
        }
    }

    /// The queries a client sees agree with each other for every data source (once per input: they cost
    /// more than the rest of the checks together).
    private func checkQueries() {
        for (name, current) in server.versions.sorted(by: { $0.key < $1.key }) { checkQueries(of: name, version: current.version, after: []) }
    }

    /// `snapshot`, `numberOfSections` and `numberOfItems` of one data source must agree.
    private func checkQueries(of name: String, version: Int, after line: [UInt8]) {
        let dataSource = JSONValue.string(name).jsonBytes
        func query(_ command: String) -> JSONValue {
            let request = Array(#"{"cmd":"\#(command)","dataSource":"#.utf8) + dataSource + Array("}".utf8)
            guard let lines = try? checker.send(request + [0x0A]), lines.count == 1, let reply = try? JSONParser.parse(lines[0]),
                reply["ok"] == true, let result = reply["result"]
            else { violation("the checker's \(command) of \(String(decoding: dataSource, as: UTF8.self)) failed", request: line) }
            if result["version"] != .int(version) { violation("\(command) reports another version than \(version)", request: line) }
            return result
        }
        guard case .array(let sections)? = query("snapshot")["sections"] else { violation("a snapshot without sections", request: line) }
        var sectionIDs = Set<String>()
        var itemIDs = Set<String>()
        var itemCount = 0
        for section in sections {
            guard case .string(let id)? = section["id"], case .array(let items)? = section["items"] else {
                violation("a malformed snapshot section", request: line)
            }
            if !sectionIDs.insert(id).inserted { violation("section \(id.debugDescription) appears twice", request: line) }
            for item in items {
                let itemID: String
                switch item {
                case .string(let id): itemID = id
                case .object: guard case .string(let id)? = item["id"] else { violation("an item without id", request: line) }; itemID = id
                default: violation("a malformed snapshot item", request: line)
                }
                if !itemIDs.insert(itemID).inserted { violation("item \(itemID.debugDescription) appears twice", request: line) }
                itemCount += 1
            }
        }
        if query("numberOfSections")["count"] != .int(sections.count) { violation("numberOfSections ≠ the snapshot's sections", request: line) }
        if query("numberOfItems")["count"] != .int(itemCount) { violation("numberOfItems ≠ the snapshot's items", request: line) }
    }

    /// What the connection handler ignores: a line of spaces and tabs (after the framer drops a `\r`).
    static func isBlank(_ line: [UInt8]) -> Bool {
        let content = line.last == 0x0D ? line.dropLast() : line[...]
        return content.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// The request's `cmd`, when the line is a JSON object with a string one.
    static func command(of line: [UInt8]) -> String? {
        guard let value = try? JSONParser.parse(line), case .string(let command)? = value["cmd"] else { return nil }
        return command
    }
}
