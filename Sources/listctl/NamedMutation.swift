import DiffableCore
import ListClient
import ListWire

/// How listctl sends a mutation of one data source and prints its reply: as `listctl watch` prints a
/// `changes` event (`WatchOutput.lines(forChanges:heading:snapshot:)`), every stage with every item and
/// section it touches named.
///
/// A reply names inserted and reconfigured items, but deletes, move sources and reloads only by their
/// positions before their stage. So listctl reads the data source first (`snapshot`) and sends the
/// mutation with `ifVersion` set to the version it read: the stages then fit exactly that copy, and are
/// applied to it one at a time to name each position. When someone changes the data source in between
/// (`version-conflict`), listctl reads again, up to `attempts` times, then sends the mutation as given
/// and prints positions only. A user's own `--if-version` is sent as given (a conflict with it is
/// theirs to see), named when the copy read is at that version. A data source of more than
/// `largestNamed` items is not read: positions only, as listd replies them. With `--json`, the reply
/// as listd wrote it, nothing read first.
struct NamedMutation {
    /// The most items a data source may hold for listctl to read it and name a mutation's stages.
    static let largestNamed = 100_000
    /// How many times listctl reads the data source and sends the mutation pinned to that version.
    static let attempts = 3

    let connection: Connection
    /// The request as the user gave it: `cmd`, `dataSource`, the arguments, their `ifVersion` if any.
    let members: [String: JSONValue]

    /// Sends the mutation `request` (an object with `cmd` and `dataSource`) and prints its reply.
    static func send(_ request: JSONValue, on connection: Connection) throws {
        guard case .object(let members) = request else { return }
        try NamedMutation(connection: connection, members: members).run()
    }

    private func run() throws {
        let request = JSONValue.object(members)
        guard !connection.json, let dataSource = members["dataSource"]?.stringValue else {
            return try connection.run(request) { Self.render($0, before: nil) }
        }
        let line = try connection.open()
        if let given = members["ifVersion"]?.intValue {
            let copy = try read(dataSource, on: line)
            return Self.render(try connection.send(request, on: line), before: copy?.version == given ? copy?.snapshot : nil)
        }
        for _ in 0..<Self.attempts {
            guard let copy = try read(dataSource, on: line) else { break }
            var pinned = members
            pinned["ifVersion"] = .int(copy.version)
            let reply = try connection.reply(to: .object(pinned), on: line)
            if reply["error"]?["code"] == "version-conflict" { continue }
            return Self.render(try connection.result(of: reply, for: .object(pinned), on: line), before: copy.snapshot)
        }
        Self.render(try connection.send(request, on: line), before: nil)
    }

    /// The data source now, with its version; `nil` when it holds more than `largestNamed` items or
    /// cannot be read. One that does not exist is empty at version 0 (as an `apply` creates it).
    private func read(_ dataSource: String, on line: LineConnection) throws -> (version: Int, snapshot: Snapshot)? {
        let name: [String: JSONValue] = ["dataSource": .string(dataSource)]
        let counted = try connection.reply(to: request("numberOfItems", name), on: line)
        if counted["error"]?["code"] == "data-source-not-found" { return (0, Snapshot()) }
        guard let count = counted["result"]?["count"]?.intValue, count <= Self.largestNamed else { return nil }
        let read = try connection.reply(to: request("snapshot", name), on: line)
        guard let result = read["result"], let version = result["version"]?.intValue, let snapshot = WatchOutput.snapshot(in: result) else {
            return nil
        }
        return (version, snapshot)
    }

    /// Prints a mutation's result: its version, the stages (named from `before`, the data source the
    /// mutation was applied to, when known), its warnings on stderr.
    static func render(_ result: JSONValue, before: Snapshot?) {
        let heading = "version \(result["version"]?.intValue ?? 0)"
        if let changes = result["changes"] {
            var snapshot = before
            for line in WatchOutput(width: nil).lines(forChanges: changes, heading: heading, snapshot: &snapshot) { print(line) }
        } else {
            print(heading)
        }
        for warning in result["warnings"]?.arrayValue ?? [] {
            Output.error("warning: \(warning["code"]?.stringValue ?? ""): \(warning["message"]?.stringValue ?? "")")
        }
    }
}
