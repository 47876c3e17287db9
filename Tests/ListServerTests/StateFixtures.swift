import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Tests/Fixtures: what earlier releases stored (made by scripts/make-state-fixtures, see its README).
let stateFixturesDirectory = protocolDirectory.deletingLastPathComponent().appendingPathComponent("Tests/Fixtures")

/// One request a release answered just before it stopped, as `<fixture>.expected.jsonl` records it.
struct RecordedExchange {
    /// Exchanges with the same number were made on one connection, in order.
    let connection: Int
    let request: JSONValue
    let reply: JSONValue
    /// The lines sent after the reply and before the reply to a following `ping` (a resuming view's events).
    let events: [String]

    /// The exchanges of an expected file, in order.
    static func all(in file: URL) throws -> [RecordedExchange] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map { line in
            let record = try JSONParser.parse(String(line))
            return RecordedExchange(
                connection: record["connection"]?.intValue ?? 0, request: record["request"] ?? .null, reply: record["reply"] ?? .null,
                events: (record["events"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
    }

    /// Sends `request` on `connection`, then a `ping`: the reply and every line before the ping's reply.
    static func exchange(_ request: JSONValue, on connection: LineConnection) throws -> (reply: JSONValue, events: [String]) {
        try connection.send(request)
        guard let line = try connection.readLine(timeout: .seconds(30)) else { throw ClientError("listd closed the connection") }
        let reply = try JSONParser.parse(line)
        try connection.send(["cmd": "ping"])
        var events: [String] = []
        while true {
            guard let next = try connection.readLine(timeout: .seconds(30)) else { throw ClientError("listd closed the connection") }
            guard try JSONParser.parse(next)["event"] != nil else { return (reply, events) }
            events.append(String(decoding: next, as: UTF8.self))
        }
    }

    /// Sends every exchange to `daemon` and expects the recorded reply (every member it has, see
    /// `servesEverything`; in today's form when `providersBeforeNamespaces`, see `providersBoundToOwners`)
    /// and events (byte for byte: retained events are replayed as stored).
    static func replay(
        _ exchanges: [RecordedExchange], on daemon: Daemon, providersBeforeNamespaces: Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var connections: [Int: LineConnection] = [:]
        let owners = registrationOwners(in: exchanges)
        for recorded in exchanges {
            let connection = try connections[recorded.connection] ?? daemon.connect()
            connections[recorded.connection] = connection
            let (reply, events) = try exchange(recorded.request, on: connection)
            let expected = providersBeforeNamespaces ? providersBoundToOwners(recorded.reply, owners: owners) : recorded.reply
            #expect(servesEverything(of: expected, in: reply), "\(recorded.request) → \(reply)", sourceLocation: sourceLocation)
            #expect(events == recorded.events, "\(recorded.request)", sourceLocation: sourceLocation)
        }
    }

    /// A `cellProvider` reply of a release before registrations had owners' namespaces (SQLite format 2,
    /// PostgreSQL 1) as a later listd reads the same provider back: "Providers stored before namespaces
    /// keep the owners they were bound to … each such name is read back as {name, owner}" (PROTOCOL.md,
    /// "Registrations a cell provider names"). Other replies as they are.
    static func providersBoundToOwners(_ reply: JSONValue, owners: [String: JSONValue]) -> JSONValue {
        guard case .object(var result)? = reply["result"], result["rules"] != nil, result["default"] != nil else { return reply }
        func named(_ value: JSONValue?) -> JSONValue? {
            guard case .string(let name)? = value else { return value }
            return ["name": .string(name), "owner": owners[name] ?? 0]
        }
        result["default"] = named(result["default"])
        var rules: [JSONValue] = []
        for rule in result["rules"]?.arrayValue ?? [] {
            guard case .object(var fields) = rule else { return reply }
            fields["registration"] = named(fields["registration"])
            rules.append(.object(fields))
        }
        result["rules"] = .array(rules)
        guard case .object(var fields) = reply else { return reply }
        fields["result"] = .object(result)
        return .object(fields)
    }

    /// The owner of each registration, by name, as the recorded `registrations` reply gives them.
    static func registrationOwners(in exchanges: [RecordedExchange]) -> [String: JSONValue] {
        let listed = exchanges.first { $0.request["cmd"] == "registrations" }?.reply["result"]?["registrations"]?.arrayValue ?? []
        return Dictionary(listed.compactMap { entry in entry["registration"]?.stringValue.map { ($0, entry["owner"] ?? 0) } }) { first, _ in first }
    }

    /// Whether `served` has everything `recorded` has: equal values, except that an object may have members
    /// the recorded one lacks (replies gain members over releases; none may lose or change one).
    static func servesEverything(of recorded: JSONValue, in served: JSONValue) -> Bool {
        switch (recorded, served) {
        case (.object(let old), .object(let new)):
            return old.allSatisfy { key, value in new[key].map { servesEverything(of: value, in: $0) } ?? false }
        case (.array(let old), .array(let new)):
            return old.count == new.count && zip(old, new).allSatisfy { servesEverything(of: $0, in: $1) }
        default:
            return recorded == served
        }
    }
}

/// Unregisters the newest stored registration of another owner than root (as an administrator): a change
/// to what an earlier format stored under its own key, which must be found under this listd's key (a stale
/// key leaves the row, and the registration comes back at the next start). Expects one (every fixture's
/// session has some).
/// Returns it as `registrations` listed it.
@discardableResult
func unregisterAnotherOwnersRegistration(on daemon: Daemon) throws -> JSONValue {
    let listed = try daemon.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue ?? []
    let registration = try #require(listed.last { ($0["owner"]?.intValue ?? 0) != 0 }, "no registration of another owner than root")
    let reply = try daemon.request(["cmd": "unregister", "registration": registration["registration"] ?? .null, "owner": registration["owner"] ?? .null])
    #expect(reply["ok"] == true, "\(reply)")
    return registration
}

/// Whether `daemon` lists a registration of that name and owner.
/// What every upgrade test does once the release's state is open: a view that saw the release's last
/// version of `changed` resumes across the upgrade and gets the next change, and another owner's
/// registration is unregistered. Returns the change's event line, that registration and the state then
/// served (to compare after a restart).
func resumeChangeAndUnregister(_ changed: RecordedDataSource, on daemon: Daemon) throws -> (event: String, unregistered: JSONValue, served: JSONValue) {
    let view = try daemon.connect()
    let resumed = try view.request([
        "cmd": "attach", "dataSource": .string(changed.name), "fromVersion": .int(changed.version), "incarnation": .string(changed.incarnation),
    ]).result()
    #expect(resumed["resumed"] == true && resumed["version"] == .int(changed.version), "\(resumed)")
    let change = try daemon.request(["cmd": "appendSections", "dataSource": .string(changed.name), "sections": ["after-upgrade"]])
    #expect(change.result()["version"] == .int(changed.version + 1), "\(change)")
    let event = try #require(try view.readLine(timeout: .seconds(30)).map { String(decoding: $0, as: UTF8.self) })
    #expect(event.contains(#""version":\#(changed.version + 1)"#), "\(event)")
    let unregistered = try unregisterAnotherOwnersRegistration(on: daemon)
    return (event, unregistered, try servedState(daemon))
}

func listsRegistration(_ registration: JSONValue, on daemon: Daemon) throws -> Bool {
    let listed = try daemon.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue ?? []
    return listed.contains { $0["registration"] == registration["registration"] && $0["owner"] == registration["owner"] }
}

/// A data source as the release served it: its version (`listDataSources`) and incarnation (`snapshot`).
struct RecordedDataSource {
    let name: String
    let version: Int
    let incarnation: String

    static func all(in exchanges: [RecordedExchange]) -> [RecordedDataSource] {
        let listed = exchanges.first { $0.request["cmd"] == "listDataSources" }?.reply["result"]?["dataSources"]?.arrayValue ?? []
        return listed.compactMap { source in
            guard let name = source["name"]?.stringValue, let version = source["version"]?.intValue,
                let snapshot = exchanges.first(where: { $0.request["cmd"] == "snapshot" && $0.request["dataSource"]?.stringValue == name }),
                let incarnation = snapshot.reply["result"]?["incarnation"]?.stringValue
            else { return nil }
            return RecordedDataSource(name: name, version: version, incarnation: incarnation)
        }
    }
}

/// What a listd stores of every data source and registration, as it serves it (views and cell counters
/// left out): compared before and after a restart.
func servedState(_ daemon: Daemon) throws -> JSONValue {
    let connection = try daemon.connect()
    var listed = try connection.request(["cmd": "listDataSources"]).result()["dataSources"]?.arrayValue ?? []
    // Registrations as stored (their cell counters are the process's own).
    let stored: Set<String> = ["registration", "kind", "type", "owner", "ownerName", "definition"]
    let registrations = try connection.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue ?? []
    var state: [String: JSONValue] = [
        "registrations": .array(registrations.map { registration in
            guard case .object(let fields) = registration else { return registration }
            return .object(fields.filter { stored.contains($0.key) })
        })
    ]
    for (index, source) in listed.enumerated() {
        guard case .object(var fields) = source, let name = fields["name"]?.stringValue else { continue }
        fields["views"] = nil
        listed[index] = .object(fields)
        for command in ["snapshot", "layout", "cellProvider"] {
            state[command + " " + name] = try connection.request(["cmd": .string(command), "dataSource": .string(name)])
        }
    }
    state["listDataSources"] = .array(listed)
    return .object(state)
}

/// The fixture's numbers in names such as `state-format-3` or `postgres-format-2.sql`.
func fixtureFormat(of name: String, prefix: String, suffix: String = "") -> Int? {
    guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
    return Int(name.dropFirst(prefix.count).dropLast(suffix.count))
}

/// The names in a directory, sorted.
func directoryEntries(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// The bytes and modification time (nanoseconds) of a file; `nil` when there is none.
func fileFingerprint(_ path: String) -> (bytes: Data, modified: Int)? {
    var status = stat()
    guard stat(path, &status) == 0, let bytes = FileManager.default.contents(atPath: path) else { return nil }
    return (bytes, status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec)
}

/// Runs listd expecting it to refuse to start: whether it ended within 20 s, its exit status, and what it
/// wrote to stderr. One that started after all is killed then (it would serve for ever), `ended` false.
func runRefusedListd(_ arguments: [String]) throws -> (ended: Bool, status: Int32, err: String) {
    let process = Process()
    process.executableURL = binaryDirectory.appendingPathComponent("listd")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["SWIFT_BACKTRACE"] = "enable=no"
    environment.removeValue(forKey: "NOTIFY_SOCKET")
    process.environment = environment
    let errors = makePipe()
    let reader = PipeReader()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.start()
    reader.start(reading: errors)
    let ended = process.waitUntilExit(within: .seconds(20))
    return (ended, process.terminationStatus, reader.text(within: .seconds(10)))
}
