import ArgumentParser
import DiffableCore
import ListClient
import ListViewCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// `listctl`: talk to listd from a shell.
@main
struct Listctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listctl",
        abstract: "Query and change listd's data sources.",
        discussion: """
            Items and sections are given as `id` or `id=JSON` (the payload), e.g. `c1='{"title":"감기"}'`. \
            Exit status: 0 on success, 1 when listd answers with an error (its code on stderr), 2 when \
            listd cannot be reached. Shell completions: `listctl --generate-completion-script bash`.

            A change (apply, batch, the snapshot edits, expand, collapse, …) prints the new version, then \
            each stage as `watch` prints it, every item and section named, deleted, moved and reloaded ones \
            included: listctl reads the data source first and sends the change with ifVersion set to the \
            version it read (when the data source changes in between, it reads again, up to 3 times, then \
            sends the change without ifVersion and prints positions only). A --if-version of your own is sent as given, and \
            the stages are named when the data source listctl read was at that version. A data source of \
            more than 100,000 items (or one listctl may not read) is not read first: deletes, moves and \
            reloads are printed by position only. --json prints the reply listd sent (the same JSON value).

            Nothing from listd reaches the terminal raw that could make one text pass for another: \
            control characters are shown as `\\u001b`, invisible and direction-changing ones (zero-width \
            characters, bidi marks, overrides and isolates) as `\\u{202e}`, and in names the Cyrillic and \
            Greek letters among Latin ones as `\\u{43e}`. --json output writes them as JSON escapes \
            (`\\u202e`, `\\u043e`), which decode to the exact strings.
            """,
        version: ListdVersion.number,
        subcommands: [
            Ping.self, Hello.self, Describe.self, Stats.self, List.self, Access.self, Create.self, Drop.self, Show.self, Outline.self,
            Apply.self,
        ] + EditTable.subcommands + [
            Batch.self, ApplySectionSnapshot.self, EditSectionSnapshot.self, Expand.self, Collapse.self, ExpansionScopeCommand.self,
            ItemInfo.self, IndexPathOf.self, ItemAt.self, SectionAt.self, IndexOf.self, Count.self, Watch.self,
            Register.self, ShowRegistration.self, Unregister.self, Registrations.self, Styles.self, SetCellProvider.self, Layout.self, Dequeue.self,
            EndDisplaying.self, SetState.self, Export.self, Import.self, Backup.self, Call.self,
        ])

    /// Accepts the global options before the command too (`listctl --socket PATH ls`), as after it.
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var global: [String] = []
        while let first = arguments.first, first.hasPrefix("--socket") || first == "--json" {
            global.append(arguments.removeFirst())
            if first == "--socket", let value = arguments.first {
                global.append(value)
                arguments.removeFirst()
            }
        }
        if let command = arguments.first, !command.hasPrefix("-"), command != "help" {
            let names = configuration.subcommands.map { $0._commandName }
            if !names.contains(command) {
                let hint = Spelling.closest(to: command, in: names).map { "; did you mean \"\($0)\"?" } ?? "; listctl --help lists them"
                Output.error("listctl: no command \"\(command)\"\(hint)")
                Glibc.exit(ExitStatus.usage.rawValue)
            }
        }
        if !global.isEmpty && !arguments.isEmpty { arguments.insert(contentsOf: global, at: 1) }
        main(arguments.isEmpty ? global : arguments)
    }
}

/// Options every subcommand takes.
struct Connection: ParsableArguments {
    @Option(help: "listd's socket (default: $LISTD_SOCKET; as root /run/listd.sock; else $XDG_RUNTIME_DIR/listd.sock or /tmp/listd-$USER/listd.sock, or /run/listd.sock when only that one exists).")
    var socket: String?

    @Flag(help: "Print the raw JSON reply instead of a table.")
    var json = false

    var socketPath: String { socket ?? SocketPath.forClient() }


    /// Sends one request on a new connection and prints the reply: raw with `--json`, else through `render`.
    func run(_ request: JSONValue, render: (JSONValue) -> Void = { print(Output.describe($0)) }) throws {
        let result = try send(request, on: open())
        if !json { render(result) }
    }

    /// Sends one request on a new connection and returns its result without printing the reply, even
    /// with `--json` (for commands that print a part of it themselves).
    func result(of request: JSONValue) throws -> JSONValue {
        var quiet = self
        quiet.json = false
        return try quiet.send(request, on: quiet.open())
    }

    /// A connection to listd, for commands that send several requests or read events; exit status 2
    /// when listd cannot be reached.
    func open() throws -> LineConnection {
        do {
            return try LineConnection(path: socketPath)
        } catch {
            throw ExitStatus.fail(.unreachable, "\(error)")
        }
    }

    /// Sends one request on `connection`: the reply printed raw (at once) with `--json`; exit status 1
    /// for an error reply, 2 when listd cannot be reached; else the result.
    func send(_ request: JSONValue, on connection: LineConnection) throws -> JSONValue {
        try result(of: reply(to: request, on: connection), for: request, on: connection)
    }

    /// Sends one request on `connection` and returns its whole reply, an error reply too (printed raw,
    /// at once, with `--json`); exit status 2 when listd cannot be reached, 1 for a line over its limit.
    func reply(to request: JSONValue, on connection: LineConnection) throws -> JSONValue {
        let encoded = request.jsonBytes
        if encoded.count + 1 > Self.smallestLineLimit { try checkLineLimit(encoded.count + 1, on: connection) }
        do {
            let received = try connection.requestLine(encoded: encoded)
            // The reply exactly as listd wrote it (re-encoding a large snapshot would double the work).
            if json { Output.line(bytes: received.line) }
            return received.reply
        } catch {
            throw ExitStatus.fail(.unreachable, "\(error)")
        }
    }

    /// The result of `reply` (to `request`, sent on `connection`); for an error reply, its code and
    /// message on stderr and exit status 1.
    func result(of reply: JSONValue, for request: JSONValue, on connection: LineConnection) throws -> JSONValue {
        guard reply["ok"] == true else {
            let code = reply["error"]?["code"]?.stringValue ?? "error"
            let message = reply["error"]?["message"]?.stringValue ?? ""
            throw ExitStatus.fail(.refused, "\(code): \(message)" + suggestion(for: reply, of: request, on: connection))
        }
        return reply["result"] ?? [:]
    }

    /// " Did you mean "home"?" after a `data-source-not-found` for a name close to one listd serves
    /// (asked on the same connection), else nothing.
    private func suggestion(for reply: JSONValue, of request: JSONValue, on connection: LineConnection) -> String {
        guard reply["error"]?["code"] == "data-source-not-found", let name = request["dataSource"]?.stringValue,
            let list = try? connection.request(["cmd": "listDataSources"]), let entries = list["result"]?["dataSources"]?.arrayValue
        else { return "" }
        let names = entries.compactMap { $0["name"]?.stringValue }
        return Spelling.closest(to: name, in: names).map { " Did you mean \"\($0)\"?" } ?? ""
    }

    /// Requests up to this size are sent without asking listd for its line limit first.
    static let smallestLineLimit = 4096

    /// Refuses a request line of `size` bytes (newline included) that listd would refuse: the limit is
    /// `maxLineBytes` from `hello`. Exit status 1, nothing sent.
    func checkLineLimit(_ size: Int, on connection: LineConnection) throws {
        let limit: Int
        do {
            guard let value = try connection.request(["cmd": "hello", "client": "listctl"])["result"]?["limits"]?["maxLineBytes"]?.intValue else { return }
            limit = value
        } catch {
            throw ExitStatus.fail(.unreachable, "\(error)")
        }
        guard size > limit else { return }
        Output.error(
            "listctl: the request is \(Output.bytes(size)) but listd accepts lines of at most \(Output.bytes(limit)) (maxLineBytes); nothing was sent. Send it in parts (e.g. appendItems or applySectionSnapshot per section) or raise maxLineBytes in listd's configuration.")
        throw ExitStatus.refused.exitCode
    }
}

/// `id` or `id=JSON` → the wire form of an item or section. A payload that is not JSON is a string
/// (`k=hello`), unless it looks like JSON (starts with `{`, `[` or `"`): then it must parse, and an
/// error names the argument, instead of storing a typo as text.
func element(_ argument: String) throws -> JSONValue {
    guard let equals = argument.firstIndex(of: "=") else { return .string(argument) }
    let id = String(argument[..<equals])
    let text = String(argument[argument.index(after: equals)...])
    do {
        return ["id": .string(id), "data": try JSONParser.parse(text)]
    } catch {
        guard let first = text.first(where: { !$0.isWhitespace }), "{[\"".contains(first) else {
            return ["id": .string(id), "data": .string(text)]
        }
        Output.error(
            "listctl: \(TerminalText.visible(argument)): the payload looks like JSON but is not valid JSON (\(error)); fix it, or quote it as a JSON string (\(TerminalText.visible(id))='\"…\"')")
        throw ExitStatus.refused.exitCode
    }
}

/// The JSON in a file, or on standard input for `-`.
func readJSON(_ path: String) throws -> JSONValue {
    let bytes = try readFile(path)
    do {
        return try JSONParser.parse(bytes)
    } catch {
        throw ExitStatus.fail(.refused, "\(path == "-" ? "standard input" : path): not valid JSON: \(error)")
    }
}

/// `--before X` / `--after X` for insertions and moves.
struct Placement: ParsableArguments {
    @Option(help: "Place before this one.") var before: String?
    @Option(help: "Place after this one.") var after: String?

    func members(_ beforeKey: String, _ afterKey: String) throws -> [String: JSONValue] {
        switch (before, after) {
        case (let before?, nil): return [beforeKey: .string(before)]
        case (nil, let after?): return [afterKey: .string(after)]
        default: throw ValidationError("Give exactly one of --before and --after.")
        }
    }
}

func request(_ command: String, _ members: [String: JSONValue]) -> JSONValue {
    var all = members
    all["cmd"] = .string(command)
    return .object(all)
}

// MARK: Housekeeping

struct Ping: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check that listd answers.")
    @OptionGroup var connection: Connection
    func run() throws { try connection.run(request("ping", [:])) { _ in print("pong") } }
}

struct Hello: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show listd's protocol, version, features and limits.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("hello", ["protocol": 1, "client": "listctl"])) { result in
            print("\(Output.cell(result["server"])), protocol \(Output.cell(result["protocol"])), pid \(Output.cell(result["pid"]))")
            print("you are \(Output.cell(result["user"])) (uid \(Output.cell(result["uid"])), gid \(Output.cell(result["gid"])))")
            print("features: " + (result["features"]?.arrayValue ?? []).map { Output.cell($0) }.joined(separator: ", "))
            if case .object(let limits)? = result["limits"] {
                Output.table(["LIMIT", "VALUE"], limits.keys.sorted().map { [$0, Output.cell(limits[$0])] })
            }
        }
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show connections, views, data sources, memory and counters.")
    @OptionGroup var connection: Connection
    func run() throws {
        try connection.run(request("stats", [:])) { result in
            print("uptime \(result["uptimeSeconds"]?.intValue ?? 0)s, connections \(result["connections"]?["current"]?.intValue ?? 0) "
                + "(\(result["connections"]?["accepted"]?.intValue ?? 0) accepted), views \(result["views"]?.intValue ?? 0), "
                + "items \(result["items"]?.intValue ?? 0), memory \((result["memory"]?["residentBytes"]?.intValue ?? 0) >> 20) MiB")
            Output.table(
                ["DATA SOURCE", "VERSION", "SECTIONS", "ITEMS", "VIEWS"],
                (result["dataSources"]?.arrayValue ?? []).map {
                    [$0["name"], $0["version"], $0["sections"], $0["items"], $0["views"]].map { Output.cell($0) }
                })
            if case .object(let commands)? = result["commands"], !commands.isEmpty {
                print("")
                Output.table(["COMMAND", "COUNT"], commands.keys.sorted().map { [$0, Output.cell(commands[$0])] })
            }
            if case .object(let errors)? = result["errors"], !errors.isEmpty {
                print("")
                Output.table(["ERROR", "COUNT"], errors.keys.sorted().map { [$0, Output.cell(errors[$0])] })
            }
        }
    }
}
