import ArgumentParser
import ListClient
import ListWire
import DiffableCore
import ListViewCore

#if canImport(Glibc)
    import Glibc
#endif

/// `listview`: a terminal view of a data source, laid out with its compositional layout.
@main
struct Listview: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listview",
        abstract: "Shows a listd data source in the terminal, laid out with its compositional layout.",
        discussion: """
            Keys: j/k or ↓/↑ move, PgDn/PgUp page, g/G top/bottom, h/l or ←/→ move sideways (scrolling a \
            section that scrolls orthogonally), Enter/space select, o expand/collapse an outline item, J/K \
            move the item down/up (where its cell provider rule says reorderable), r re-attach, ? show (and hide) \
            the keys, q quit. Esc never quits: it hides the keys, else says that q quits. The status line ends with \
            the key hints. With --once, prints one frame as plain text and exits.
            """,
        version: ListdVersion.number)

    @Option(help: "listd's socket (default: as listctl finds it: $LISTD_SOCKET, else the user's or the system's).")
    var socket: String?

    @Argument(help: "The data source to show.")
    var dataSource: String

    @Option(help: "The view's name (default: listview-PID).")
    var view: String?

    @Flag(help: "Print one frame as plain text and exit.")
    var once = false

    @Flag(help: "Print a frame as plain text now and after every change, until stopped (a dropped data source is waited for).")
    var follow = false

    @Option(help: "Frame width for --once and --follow (default: the terminal's, else 80).")
    var width: Int?

    @Option(help: "Frame height for --once and --follow (default: the terminal's, else 24).")
    var height: Int?

    @Option(help: "With --once / --follow: rows scrolled down first.")
    var scroll: Int = 0

    @Option(help: "How long to keep trying to reconnect when listd goes away, in seconds (0: exit at once).")
    var reconnectSeconds: Double = 30

    func validate() throws {
        if let width, width < 10 { throw ValidationError("--width must be at least 10.") }
        if let height, height < 2 { throw ValidationError("--height must be at least 2.") }
        if scroll < 0 { throw ValidationError("--scroll cannot be negative.") }
        if reconnectSeconds < 0 { throw ValidationError("--reconnect-seconds cannot be negative.") }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let path = socket ?? Self.defaultSocketPath()
        let name = view ?? "listview-\(getpid())"
        if once || follow {
            try printFrames(socket: path, view: name)
        } else {
            try interactive(socket: path, view: name)
        }
    }

    static func defaultSocketPath() -> String { SocketPath.forClient() }

    // MARK: Plain frames

    func printFrames(socket: String, view: String) throws {
        let size = Terminal.size
        let session: ViewSession
        do {
            session = try ViewSession(
                socketPath: socket, dataSource: dataSource, viewName: view, width: width ?? size.width, height: height ?? size.height)
        } catch {
            throw fail("\(error)")
        }
        session.scroll(to: scroll)
        try session.synchronize(revealCursor: false)
        var lastFrame = session.frame(showCursor: false, status: false).plainLines.joined(separator: "\n")
        print(lastFrame)
        fflush(nil)  // each frame is out as it is drawn, also into a pipe
        if let hint = session.hint { printError("listview: \(hint)") }
        guard follow else {
            session.detach()
            return
        }
        var version = session.model.version
        while session.ended == nil || session.serverStopped {
            if session.awaitingDataSource {
                printError("listview: the data source \"\(dataSource)\" was dropped; waiting for it to be created again")
                guard try awaitDataSource(session) else { throw fail(stopped(socket)) }
                try session.synchronize(revealCursor: false)
                version = session.model.version
                printError("listview: the data source \"\(dataSource)\" is back")
                lastFrame = session.frame(showCursor: false, status: false).plainLines.joined(separator: "\n")
                print(TerminalText.visible("── \(dataSource) version \(version) ──"))
                print(lastFrame)
                fflush(nil)
                continue
            }
            let received: Bool
            do {
                received = session.serverStopped ? false : try session.receive(timeout: .seconds(365 * 24 * 3600))
            } catch let error as ListviewError {
                throw fail(error.description)
            } catch {
                received = false
            }
            if !received {
                printError("listview: listd went away; reconnecting…")
                guard reconnect(session, report: {}) else { throw fail(stopped(socket)) }
                printError("listview: reconnected at version \(session.model.version)")
            }
            try session.synchronize(revealCursor: false)
            // A new version, or the same one drawn otherwise (a registration replaced, a plugin's late cell).
            let frame = session.frame(showCursor: false, status: false).plainLines.joined(separator: "\n")
            if session.model.version != version || frame != lastFrame {
                version = session.model.version
                lastFrame = frame
                print(TerminalText.visible("── \(dataSource) version \(version) ──"))
                print(frame)
                fflush(nil)
            }
        }
        if let ended = session.ended { printError("listview: \(ended)") }
    }

    // MARK: Full screen

    func interactive(socket: String, view: String) throws {
        var size = Terminal.size
        let session: ViewSession
        do {
            session = try ViewSession(socketPath: socket, dataSource: dataSource, viewName: view, width: size.width, height: size.height - 1)
        } catch {
            throw fail("\(error)")
        }
        try Terminal.enter()
        defer { Terminal.restore() }
        var input: [UInt8] = []
        var needsDraw = true
        var revealCursor = true
        var nextLook = ContinuousClock.now
        do {
            while true {
                if Terminal.resized != 0 {
                    Terminal.resized = 0
                    size = Terminal.size
                    session.resize(width: size.width, height: size.height - 1)
                    Terminal.write("\u{1B}[2J")
                    needsDraw = true
                    revealCursor = true
                }
                if needsDraw && !session.serverStopped {
                    do {
                        try session.synchronize(revealCursor: revealCursor)
                        try session.refreshCounters()
                        if session.changedByEvents { try session.synchronize(revealCursor: false) }
                        Terminal.write(session.frame(showCursor: true, status: true).terminalFrame(colors: Terminal.colors))
                        needsDraw = false
                        revealCursor = false
                    } catch let error as ListviewError {
                        throw error
                    } catch {
                        session.connectionLost()  // listd went away in the middle of a request
                    }
                }
                if session.serverStopped {
                    guard reconnect(session, report: { Terminal.write(session.frame(showCursor: true, status: true).terminalFrame(colors: Terminal.colors)) }) else {
                        Terminal.restore()
                        throw fail(stopped(socket))
                    }
                    needsDraw = true
                    continue
                }
                if let ended = session.ended {
                    Terminal.restore()
                    throw fail(ended)
                }
                var pollers = [
                    pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: session.connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
                ]
                if session.connection.hasBufferedLine || !session.connection.events.isEmpty {
                    try session.handlePendingEvents()
                    if session.connection.hasBufferedLine { _ = try session.receive() }
                    needsDraw = true
                    continue
                }
                if session.awaitingDataSource {
                    // Dropped: look for the data source again every half second (keys still work).
                    if ContinuousClock.now >= nextLook {
                        nextLook = ContinuousClock.now + .milliseconds(500)
                        refusable(session) { if try session.attachIfCreated() { needsDraw = true } }
                        if needsDraw || session.serverStopped { continue }
                    }
                }
                var timeout = session.awaitingDataSource ? 500 : 1_000
                if let marksEnd = session.marksEnd {
                    let left = ContinuousClock.now.duration(to: marksEnd)
                    timeout = min(timeout, max(0, Int(left / .milliseconds(1)) + 1))
                }
                let ready = poll(&pollers, 2, Int32(timeout))
                if session.expireMarks() { needsDraw = true }
                if ready < 0 {
                    if errno == EINTR { continue }
                    throw ListviewError("poll failed")
                }
                if pollers[1].revents != 0 {
                    let received: Bool
                    do {
                        received = try session.receive()
                    } catch let error as ListviewError {
                        throw error
                    } catch {
                        received = false
                    }
                    if !received { session.connectionLost() }
                    needsDraw = true
                }
                if pollers[0].revents != 0 {
                    var chunk = [UInt8](repeating: 0, count: 256)
                    let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                    if count <= 0 { return }
                    input += chunk[0..<count]
                    for key in Key.decode(&input) {
                        // A key clears the passing message, but ? shows it in full with the keys.
                        let message = session.message
                        session.message = nil
                        // Over the view, ?, Esc and q hide the keys; another key hides them and does what it does.
                        let showedKeys = session.showsKeys
                        session.showsKeys = false
                        switch key {
                        case .character("?"):
                            session.showsKeys = !showedKeys
                            session.message = message
                        case .escape:
                            // Esc alone never quits (it ends the sequences of arrows and Alt keys): it says how.
                            if !showedKeys { session.message = KeyHelp.escapeMessage }
                        case .character("q"):
                            guard !showedKeys else { break }
                            session.detach()
                            return
                        case .character("j"), .down: session.moveCursorRow(1)
                        case .character("k"), .up: session.moveCursorRow(-1)
                        case .character("l"), .right: session.moveCursorSideways(1)
                        case .character("h"), .left: session.moveCursorSideways(-1)
                        case .character("g"), .home: session.jump(toEnd: false)
                        case .character("G"), .end: session.jump(toEnd: true)
                        case .pageDown, .character("\u{06}"): session.page(1)
                        case .pageUp, .character("\u{02}"): session.page(-1)
                        case .enter, .character(" "): refusable(session) { try session.toggleSelection() }
                        case .character("o"): refusable(session) { try session.toggleExpansion() }
                        case .character("J"): refusable(session) { try session.moveCursorItem(1) }
                        case .character("K"): refusable(session) { try session.moveCursorItem(-1) }
                        case .character("r"): if !session.awaitingDataSource { try session.reattach() }
                        default: if !showedKeys { continue }
                        }
                        revealCursor = true
                        needsDraw = true
                    }
                }
            }
        } catch let error as ListviewError {
            Terminal.restore()
            throw fail(error.description)
        } catch let exit as ExitCode {
            throw exit  // its message is out already
        } catch {
            Terminal.restore()
            throw fail("lost the connection to listd: \(error)")
        }
    }

    /// Runs an action a user may be refused (selecting or expanding without write access): listd's
    /// refusal goes to the status line, and the view goes on. Losing the connection is not a refusal.
    private func refusable(_ session: ViewSession, _ action: () throws -> Void) {
        do {
            try action()
        } catch let refusal as ListviewError {
            session.message = refusal.description
        } catch {
            session.connectionLost()
        }
    }

    /// Reconnects to listd (a restarted one, at the same socket), resuming from the view's version:
    /// tries with a growing pause (0.1 s doubling to 2 s) for `--reconnect-seconds`, showing
    /// "reconnecting…" through `report` before each try. Returns false when it gave up.
    private func reconnect(_ session: ViewSession, report: () -> Void) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(reconnectSeconds * 1_000))
        var pause = Duration.milliseconds(100)
        var attempt = 0
        defer { session.notice = nil }
        while true {
            attempt += 1
            session.notice = "reconnecting to listd… (attempt \(attempt))"
            report()
            if (try? session.reconnect(resume: true)) != nil { return true }
            guard ContinuousClock.now + pause <= deadline else { return false }
            usleep(UInt32(pause / .microseconds(1)))
            pause = min(pause * 2, .seconds(2))
        }
    }

    /// Waits for the dropped data source to be created again, asking listd with a growing pause (0.1 s
    /// doubling to 1 s) and reconnecting when listd goes away meanwhile. Returns false when listd stayed
    /// away past `--reconnect-seconds`.
    private func awaitDataSource(_ session: ViewSession) throws -> Bool {
        var pause = Duration.milliseconds(100)
        while session.awaitingDataSource {
            do {
                if session.serverStopped {
                    guard reconnect(session, report: {}) else { return false }
                    continue
                }
                if try session.attachIfCreated() { return true }
            } catch let refusal as ListviewError {
                throw fail(refusal.description)
            } catch {
                session.connectionLost()
                continue
            }
            usleep(UInt32(pause / .microseconds(1)))
            pause = min(pause * 2, .seconds(1))
        }
        return true
    }

    /// Why listview gives up reconnecting.
    private func stopped(_ socket: String) -> String {
        "listd stopped: nothing answered at \(socket) for \(reconnectSeconds == reconnectSeconds.rounded() ? String(Int(reconnectSeconds)) : String(reconnectSeconds)) s (--reconnect-seconds)"
    }

    private func fail(_ message: String) -> ExitCode {
        printError("listview: \(message)")
        return ExitCode(1)
    }

    /// Writes a message to stderr; control characters in it (it may echo listd's text) shown visibly.
    private func printError(_ message: String) {
        var bytes = Array((TerminalText.visible(message) + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
