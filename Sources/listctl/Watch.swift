import ArgumentParser
import DiffableCore
import ListClient
import ListViewCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Watching and raw calls

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Attach as a view and print change events as they come; when listd goes away, reconnect and resume.")
    @OptionGroup var connection: Connection
    @Argument(help: "The data source.") var dataSource: String
    @Option(help: "The view's name.") var view: String?
    @Option(help: "Cut lines to this many columns (default: the terminal's width when printing to one; 0: never).")
    var width: Int?
    @Option(help: "How long to keep trying to reconnect when listd goes away, in seconds (0: exit at once).")
    var reconnectSeconds: Double = 30
    @Flag(help: "Also follow the selections other views make (setState selected): theirs now, then every change.")
    var selection = false
    @Flag(help: "Also print what the views will display and prefetch (display events; needs write access).")
    var display = false

    func validate() throws {
        if let width, width < 0 { throw ValidationError("--width must not be negative") }
        if reconnectSeconds < 0 { throw ValidationError("--reconnect-seconds must not be negative") }
    }

    /// The formatter for the width now: `--width`, else the terminal's (read again per event: the pane
    /// may have been resized).
    var output: WatchOutput { WatchOutput(width: width.map { $0 == 0 ? nil : $0 } ?? WatchOutput.terminalWidth()) }

    /// What the watch follows: the view's name, and the incarnation and version it has seen.
    struct Position {
        var view: String?
        var incarnation: String?
        var version = 0
    }

    func run() throws {
        var line = try connection.open()
        var position = Position(view: view)
        let result = try connection.send(request("attach", attachMembers(position, resume: false)), on: line)
        attached(result, &position)
        // The data source as this watch saw it last, to name what the changes name by position only.
        var snapshot = connection.json ? nil : Self.snapshot(attached: result)
        if display { _ = try connection.send(request("watchDisplay", ["dataSource": .string(dataSource)]), on: line) }
        if !connection.json {
            Output.line(output.fit("watching \(TerminalText.name(dataSource)) as \(TerminalText.name(position.view ?? "")) from version \(position.version)"))
            for text in output.lines(forSelections: result["selections"]) { Output.line(text) }
        }
        while true {
            let event: JSONValue? = try? line.readJSON(timeout: .seconds(365 * 24 * 3600))
            if let event {
                if connection.json {
                    Output.line(bytes: event.jsonBytes)
                } else {
                    for text in output.lines(for: event, snapshot: &snapshot) { Output.line(text) }
                }
                let name = event["event"]?.stringValue
                if name == "changes" || name == "layoutChanged", let version = event["version"]?.intValue { position.version = version }
                if name == "overflow", event["watch"] == "display" {
                    // Only the display watch fell behind (the connection stays): watch again from what the views show.
                    _ = try connection.send(request("watchDisplay", ["dataSource": .string(dataSource)]), on: line)
                    continue
                }
                if name == "overflow" || name == "dropped" || (name == "shutdown" && reconnectSeconds == 0) { return }
                if name != "shutdown" { continue }
            } else if reconnectSeconds == 0 {
                if !connection.json { Output.line("listd closed the connection") }
                return
            }
            line = try reconnect(&position, snapshot: &snapshot)
        }
    }

    /// The snapshot an `attach` result carries; `nil` when it resumed (the missed changes follow) or
    /// carries none readable.
    static func snapshot(attached result: JSONValue) -> Snapshot? {
        result["resumed"] == true ? nil : WatchOutput.snapshot(in: result)
    }

    private func attachMembers(_ position: Position, resume: Bool) -> [String: JSONValue] {
        var members: [String: JSONValue] = ["dataSource": .string(dataSource)]
        if let view = position.view { members["view"] = .string(view) }
        if selection { members["selectionEvents"] = true }
        if resume, let incarnation = position.incarnation {
            members["fromVersion"] = .int(position.version)
            members["incarnation"] = .string(incarnation)
        }
        return members
    }

    private func attached(_ result: JSONValue, _ position: inout Position) {
        position.view = result["view"]?.stringValue ?? position.view
        position.incarnation = result["incarnation"]?.stringValue
        if result["resumed"] != true { position.version = result["version"]?.intValue ?? 0 }
    }

    /// Connects and attaches again, resuming from the last version printed: tries with a growing pause
    /// (0.1 s doubling to 2 s) for `--reconnect-seconds`; exit status 2 (unreachable) when it gives up.
    private func reconnect(_ position: inout Position, snapshot: inout Snapshot?) throws -> LineConnection {
        if !connection.json { Output.line(output.fit("listd went away; reconnecting…")) }
        let deadline = ContinuousClock.now + .milliseconds(Int(reconnectSeconds * 1_000))
        var pause = Duration.milliseconds(100)
        while true {
            if let line = try? LineConnection(path: connection.socketPath),
                let received = try? line.requestLine(request("attach", attachMembers(position, resume: true))),
                received.reply["ok"] == true, let result = received.reply["result"]
            {
                if connection.json { Output.line(bytes: received.line) }
                if display { _ = try? line.requestLine(request("watchDisplay", ["dataSource": .string(dataSource)])) }
                let resumed = result["resumed"] == true
                attached(result, &position)
                if !resumed && !connection.json { snapshot = Self.snapshot(attached: result) }
                if !connection.json {
                    Output.line(
                        output.fit(
                            resumed
                                ? "reconnected; resuming after version \(position.version)"
                                : "reconnected; could not resume, watching again from version \(position.version)"))
                }
                return line
            }
            guard ContinuousClock.now + pause <= deadline else {
                throw ExitStatus.fail(.unreachable, "lost the connection to listd")
            }
            usleep(UInt32(pause / .microseconds(1)))
            pause = min(pause * 2, .seconds(2))
        }
    }
}
