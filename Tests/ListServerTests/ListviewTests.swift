import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

let framesDirectory = protocolDirectory.deletingLastPathComponent().appendingPathComponent("Tests/ListServerTests/Frames")

/// Runs `listview` to completion; returns its exit status, standard output and standard error.
func runListview(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
    try runExecutable("listview", arguments)
}

/// A data source showing every list appearance and a vertical grid: "gallery".
func makeGallery(_ daemon: Daemon) throws {
    let connection = try daemon.connect()
    let definitions: [(String, JSONValue)] = [
        ("row", ["contentConfiguration": ["type": "cell", "text": "{{title}}"], "accessories": [["type": "disclosureIndicator"]]]),
        ("detail", ["contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{note}}"]]),
        ("value", ["contentConfiguration": ["type": "valueCell", "text": "{{title}}", "secondaryText": "{{note}}"], "accessories": [["type": "checkmark", "hidden": false]]]),
        ("header", ["kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": "plainHeader", "text": "{{title}}"]]),
        ("footer", ["kind": "supplementary", "elementKind": "footer", "contentConfiguration": ["type": "plainFooter", "text": "{{items}} items"]]),
        ("folder", ["contentConfiguration": ["type": "sidebarCell", "text": "{{title}}"], "accessories": [["type": "outlineDisclosure"]]]),
    ]
    for (name, definition) in definitions {
        var request = definition
        if case .object(var members) = request {
            members["cmd"] = "register"
            members["registration"] = .string(name)
            request = .object(members)
        }
        #expect(try connection.request(request)["ok"] == true)
    }
    func items(_ prefix: String, _ count: Int) -> JSONValue {
        .array((1...count).map { ["id": .string("\(prefix)\($0)"), "data": ["title": .string("\(prefix.capitalized) \($0)"), "note": .string("note \($0)")]] })
    }
    #expect(try connection.request([
        "cmd": "apply", "dataSource": "gallery",
        "snapshot": ["sections": [
            ["id": "plain", "data": ["title": "Plain", "items": 2], "items": items("plain", 2)],
            ["id": "grouped", "data": ["title": "Grouped", "items": 2], "items": items("grouped", 2)],
            ["id": "inset", "data": ["title": "Inset grouped", "items": 2], "items": items("inset", 2)],
            ["id": "sidebar", "data": ["title": "Sidebar", "items": 2], "items": items("side", 2)],
            ["id": "tiles", "data": ["title": "Tiles", "items": 5], "items": items("tile", 5)],
        ]],
    ])["ok"] == true)
    #expect(try connection.request([
        "cmd": "setCellProvider", "dataSource": "gallery", "default": "row",
        "rules": [
            ["section": "grouped", "registration": "detail"], ["section": "inset", "registration": "value"],
            ["section": "tree", "match": ["field": "kind", "equals": "folder"], "registration": "folder"],
        ],
    ])["ok"] == true)
    // An outline three levels deep: an expanded folder inside an expanded one, and a collapsed one.
    #expect(try connection.request([
        "cmd": "applySectionSnapshot", "dataSource": "gallery", "section": "tree",
        "snapshot": ["items": [
            ["id": "docs", "data": ["title": "Docs", "kind": "folder"], "expanded": true, "children": [
                ["id": "guides", "data": ["title": "Guides", "kind": "folder"], "expanded": true, "children": [
                    ["id": "setup", "data": ["title": "Setting up"]],
                ]],
                ["id": "faq", "data": ["title": "FAQ"]],
            ]],
            ["id": "archive", "data": ["title": "Archive", "kind": "folder"], "children": [["id": "old", "data": ["title": "Old notes"]]]],
        ]],
    ])["ok"] == true)
    #expect(try connection.request(["cmd": "setSupplementaryProvider", "dataSource": "gallery", "elementKind": "header", "rules": [], "default": "header"])["ok"] == true)
    #expect(try connection.request(["cmd": "setSupplementaryProvider", "dataSource": "gallery", "elementKind": "footer", "rules": [], "default": "footer"])["ok"] == true)
    #expect(try connection.request([
        "cmd": "setLayout", "dataSource": "gallery",
        "layout": [
            "default": ["list": ["appearance": "plain", "headerMode": "supplementary", "footerMode": "supplementary"]],
            "sections": [
                "grouped": ["list": ["appearance": "grouped", "headerMode": "supplementary"]],
                "inset": ["list": ["appearance": "insetGrouped", "headerMode": "supplementary", "footerMode": "supplementary"]],
                "sidebar": ["list": ["appearance": "sidebar"]],
                "tiles": [
                    "item": ["width": ["fractionalWidth": 0.5], "height": ["fractionalHeight": 1], "contentInsets": ["trailing": 1]],
                    "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 3]],
                    "interGroupSpacing": 0, "header": [:], "footer": [:], "contentInsets": ["leading": 1],
                ],
                "tree": ["list": ["appearance": "sidebar"]],
            ],
        ],
    ])["ok"] == true)
}

@Suite("listview", .serialized)
struct ListviewTests {
    static let frames: [(name: String, dataSource: String, arguments: [String])] = [
        ("home-60x30", "home", ["--width", "60", "--height", "30"]),
        ("home-44x14-scrolled", "home", ["--width", "44", "--height", "14", "--scroll", "9"]),
        ("emoji-48x22", "emoji", ["--width", "48", "--height", "22"]),
        ("gallery-50x44", "gallery", ["--width", "50", "--height", "44"]),
    ]

    /// Each frame against its golden file (`LISTVIEW_UPDATE_GOLDEN=1` rewrites them; review the diff).
    @Test func goldenFrames() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        try makeGallery(daemon)
        let update = ProcessInfo.processInfo.environment["LISTVIEW_UPDATE_GOLDEN"] == "1"
        for frame in Self.frames {
            let run = try runListview(["--socket", daemon.socketPath, frame.dataSource, "--once"] + frame.arguments)
            #expect(run.status == 0, "\(frame.name): \(run.err)")
            let file = framesDirectory.appendingPathComponent(frame.name + ".txt")
            if update { try run.out.write(to: file, atomically: true, encoding: .utf8) }
            let golden = try String(contentsOf: file, encoding: .utf8)
            #expect(run.out == golden, "\(frame.name) differs from its golden frame:\n\(run.out)")
        }
        // docs/listview.md's frames are what listview prints.
        let readme = try String(contentsOf: framesDirectory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/listview.md"), encoding: .utf8)
        let shown = try runListview(["--socket", daemon.socketPath, "home", "--once", "--width", "60", "--height", "18"])
        var lines = shown.out.split(separator: "\n", omittingEmptySubsequences: false)
        while lines.last?.isEmpty == true { lines.removeLast() }
        #expect(readme.contains("```text\n" + lines.joined(separator: "\n") + "\n```"), "docs/listview.md shows another frame")
        #expect(try daemon.request(["cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["smileys"]])["ok"] == true)
        let outline = try runListview(["--socket", daemon.socketPath, "emoji", "--once", "--width", "50", "--height", "11"])
        let outlineLines = outline.out.split(separator: "\n", omittingEmptySubsequences: false).reversed().drop { $0.isEmpty }.reversed()
        #expect(readme.contains("```text\n" + outlineLines.joined(separator: "\n") + "\n```"), "docs/listview.md shows another outline frame")
        // --once leaves nothing behind: its view is detached, its cells gone.
        let views = try daemon.request(["cmd": "stats"]).result()["cells"]?["views"]?.arrayValue ?? []
        #expect(views.isEmpty)
    }

    /// The first thing everyone makes, a data source without a cell provider, shows its items in the
    /// default presentation: titles (else the ids) with their subtitles below.
    @Test func aDataSourceWithoutAProviderShowsItsTitles() throws {
        let daemon = try Daemon()
        _ = try daemon.request([
            "cmd": "apply", "dataSource": "tasks",
            "snapshot": ["sections": [["id": "Today", "items": [["id": "t1", "data": ["title": "Buy milk", "subtitle": "2 litres"]], ["id": "t2", "data": ["title": "Call mom"]], "t3"]]]],
        ]).result()
        let frame = try runListview(["--socket", daemon.socketPath, "tasks", "--once", "--width", "30", "--height", "5"])
        #expect(frame.status == 0, "\(frame)")
        #expect(frame.out.split(separator: "\n", omittingEmptySubsequences: false).prefix(4).map { $0.trimmingCharacters(in: .whitespaces) } == [
            "Buy milk", "2 litres", "Call mom", "t3",
        ], "\(frame.out)")
    }

    @Test func onceFailsClearlyWithoutADaemonOrDataSource() throws {
        let daemon = try Daemon()
        let missing = try runListview(["--socket", daemon.socketPath, "nothing", "--once"])
        #expect(missing.status == 1 && (missing.err.contains("data source \"nothing\"") || missing.err.contains("Data source \"nothing\" does not exist")))
        let nowhere = try runListview(["--socket", daemon.directory + "/absent.sock", "home", "--once"])
        #expect(nowhere.status == 1 && nowhere.err.contains("cannot connect"))
    }

    @Test func followPrintsAFramePerChange() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listview")
        process.arguments = ["--socket", daemon.socketPath, "emoji", "--follow", "--width", "40", "--height", "4", "--view", "follower"]
        let output = makePipe()
        let errors = makePipe()
        process.standardOutput = output
        process.standardError = errors
        let collected = PipeCollector(output)
        let collectedErrors = PipeCollector(errors)
        try process.start()
        defer { killAndWait(process) }
        // Each change only once listview has drawn what came before (it dequeues a frame's cells, then prints it).
        func cellsTaken() throws -> Int {
            let view = try daemon.request(["cmd": "stats"]).result()["cells"]?["views"]?.arrayValue.first { $0["view"] == "follower" }
            return (view?["created"]?.intValue ?? 0) + (view?["reused"]?.intValue ?? 0)
        }
        #expect(try eventually { try cellsTaken() > 0 })
        let before = try cellsTaken()
        #expect(try daemon.request(["cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["smileys"]])["ok"] == true)
        #expect(try eventually { try cellsTaken() > before })
        #expect(try eventually { collected.text.contains("Laughing") })
        #expect(collected.text == """
             EMOJI
             › Smileys
             › Nature
             › Food
            ── emoji version 1 ──
             EMOJI
             ⌄ Smileys
               😀 Happy                      Smileys
               😂 Laughing                   Smileys

            """)
        // Dropped, it waits (saying so) and shows the data source made again under the same name.
        #expect(try daemon.request(["cmd": "dropDataSource", "dataSource": "emoji"])["ok"] == true)
        #expect(try eventually { collectedErrors.text.contains("listview: the data source \"emoji\" was dropped; waiting for it to be created again") },
                "\(collectedErrors.text)")
        #expect(process.isRunning)
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "emoji", "sections": ["again"]])["ok"] == true)
        #expect(try daemon.request(["cmd": "appendItems", "dataSource": "emoji", "items": ["made-again"]])["ok"] == true)
        #expect(try eventually { collected.lastFrame.contains("made-again") }, "\(collected.text)")
        #expect(collectedErrors.text.contains("listview: the data source \"emoji\" is back"))
        killAndWait(process)
    }
}

/// Ends a child process for good (SIGKILL: a Foundation child may have SIGTERM blocked) and reaps it.
func killAndWait(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit(within: .seconds(60))
}

/// What a running process writes to a pipe, collected as it comes (to see frames as they are drawn).
final class PipeCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []

    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }  // the end: stop being called
            lock.lock()
            bytes += data
            lock.unlock()
        }
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text after the last frame header (`── DS version N ──`), i.e. the newest frame.
    var lastFrame: String { text.components(separatedBy: "── ").last ?? "" }
}

@Suite("listview keeps going", .serialized)
struct ListviewResilienceTests {
    /// One cell's failure (a rule names a registration that was deleted) draws an error cell instead of
    /// ending the view; the cells come back when the registration does, follow a cell provider change,
    /// and `apply` with reloadData shows the new snapshot. Every frame is out as it is drawn (a pipe).
    @Test func followSurvivesMissingRegistrationsAndRedrawsOnProviderAndReload() throws {
        let daemon = try Daemon()
        let row: JSONValue = ["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "row {{text}}"]]
        _ = try daemon.request(row).result()
        _ = try daemon.request(["cmd": "appendSections", "dataSource": "t", "sections": ["s"]]).result()
        _ = try daemon.request(["cmd": "appendItems", "dataSource": "t", "items": [["id": "a", "data": ["text": "Alpha"]]]]).result()
        _ = try daemon.request(["cmd": "setCellProvider", "dataSource": "t", "rules": [], "default": "row"]).result()
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listview")
        process.arguments = ["--socket", daemon.socketPath, "t", "--follow", "--width", "30", "--height", "4", "--view", "f"]
        let output = makePipe()
        let errors = makePipe()
        process.standardOutput = output
        process.standardError = errors
        let collected = PipeCollector(output)
        let collectedErrors = PipeCollector(errors)
        try process.start()
        defer { killAndWait(process) }
        #expect(try eventually { collected.text.contains("row Alpha") }, "the first frame, before any change: \(collected.text)")

        _ = try daemon.request(["cmd": "unregister", "registration": "row"]).result()
        _ = try daemon.request(["cmd": "appendItems", "dataSource": "t", "items": [["id": "b", "data": ["text": "Beta"]]]]).result()
        #expect(try eventually { collected.lastFrame.contains("version 4") && collected.lastFrame.contains("⚠ registration-not-found") },
                "error cells: \(collected.text)")
        #expect(process.isRunning, "the view goes on")

        _ = try daemon.request(row).result()
        _ = try daemon.request(["cmd": "appendItems", "dataSource": "t", "items": [["id": "c", "data": ["text": "Gamma"]]]]).result()
        #expect(try eventually { collected.lastFrame.contains("version 5") && collected.lastFrame.contains("row Beta") }, "\(collected.text)")
        #expect(!collected.lastFrame.contains("⚠"))

        _ = try daemon.request(["cmd": "register", "registration": "second", "contentConfiguration": ["type": "cell", "text": "second {{text}}"]]).result()
        _ = try daemon.request(["cmd": "setCellProvider", "dataSource": "t", "rules": [], "default": "second"]).result()
        #expect(try eventually { collected.lastFrame.contains("version 6") && collected.lastFrame.contains("second Alpha") },
                "the new provider's cells: \(collected.text)")

        // The registration replaced in place: the same version, drawn anew.
        _ = try daemon.request(["cmd": "register", "registration": "second", "replace": true, "contentConfiguration": ["type": "cell", "text": "SECOND {{text}}"]]).result()
        #expect(try eventually { collected.lastFrame.contains("version 6") && collected.lastFrame.contains("SECOND Alpha") },
                "the replaced registration's cells: \(collected.text)")

        let snapshot: JSONValue = ["sections": [["id": "s", "items": [["id": "z", "data": ["text": "Zed"]]]]]]
        _ = try daemon.request(["cmd": "apply", "dataSource": "t", "snapshot": snapshot, "reloadData": true]).result()
        #expect(try eventually { collected.lastFrame.contains("version 7") && collected.lastFrame.contains("SECOND Zed") },
                "the new snapshot after reloadData: \(collected.text)")
        #expect(!collected.lastFrame.contains("Alpha"))

        _ = try daemon.request(["cmd": "dropDataSource", "dataSource": "t"]).result()
        #expect(try eventually { collectedErrors.text.contains("was dropped; waiting") }, "\(collectedErrors.text)")
        #expect(!collectedErrors.text.contains("failed"), "\(collectedErrors.text)")
        #expect(process.isRunning, "a dropped data source does not end the view")
    }

    /// A pinned header stays on the first row while its section scrolls under it; an unpinned one
    /// scrolls away.
    @Test func pinnedHeadersStayOnTheFirstRow() throws {
        let daemon = try Daemon()
        _ = try daemon.request(["cmd": "register", "registration": "h", "kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": "plainHeader", "text": "Head {{title}}"]]).result()
        _ = try daemon.request(["cmd": "apply", "dataSource": "p", "snapshot": ["sections": [["id": "s", "data": ["title": "S"], "items": .array((1...20).map { .string("row\($0)") })]]]]).result()
        _ = try daemon.request(["cmd": "setSupplementaryProvider", "dataSource": "p", "elementKind": "header", "rules": [], "default": "h"]).result()
        func frame(pinned: Bool) throws -> [String] {
            _ = try daemon.request(["cmd": "setLayout", "dataSource": "p", "layout": ["default": ["list": ["headerMode": "supplementary", "pinsHeaderToVisibleBounds": .bool(pinned)]]]]).result()
            let run = try runListview(["--socket", daemon.socketPath, "p", "--once", "--width", "20", "--height", "3", "--scroll", "6"])
            #expect(run.status == 0, "\(run)")
            return run.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(try frame(pinned: true).prefix(3) == ["Head S", "row7", "row8"], "the header over row 6")
        #expect(try frame(pinned: false).prefix(3) == ["row6", "row7", "row8"])
    }

    /// Headers asked for by the layout (headerMode supplementary) without a supplementary provider are
    /// not blank rows without a word: listview says what is missing and how to give it.
    @Test func aMissingHeaderProviderIsExplained() throws {
        let daemon = try Daemon()
        _ = try daemon.request(["cmd": "appendSections", "dataSource": "g", "sections": ["s"]]).result()
        _ = try daemon.request(["cmd": "appendItems", "dataSource": "g", "items": ["a"]]).result()
        _ = try daemon.request(["cmd": "setLayout", "dataSource": "g", "layout": ["default": ["list": ["appearance": "plain", "headerMode": "supplementary"]]]]).result()
        let run = try runListview(["--socket", daemon.socketPath, "g", "--once", "--width", "40", "--height", "4"])
        #expect(run.status == 0 && run.out.hasPrefix("a\n"), "\(run)")
        #expect(run.err.contains("no supplementary provider gives them: listctl cell-provider g --element-kind header FILE"), "\(run.err)")
    }

    /// A read-only user's `o` expands in its own view when the data source's expansion is per view (the
    /// demo's emoji); once the owner makes it shared, `o` is refused by listd: the refusal shows in the
    /// status line (with the view's name) and the view goes on.
    @Test func aReaderExpandsInItsOwnViewAndARefusedExpandGoesToTheStatusLine() throws {
        let daemon = try sharedDaemon(arguments: ["--demo"])
        // listview as nobody, from a directory nobody may enter (the build directory may not be).
        let copy = daemon.directory + "/listview"
        try FileManager.default.copyItem(atPath: binaryDirectory.appendingPathComponent("listview").path, toPath: copy)
        chmod(copy, 0o755)
        let terminal = try TmuxSession(
            "cd \(daemon.directory) && setpriv --reuid=\(otherUID) --regid=\(otherGID) --clear-groups ./listview --socket \(daemon.socketPath) emoji --view ro",
            width: 90, height: 10)
        try terminal.waitForScreen { $0.contains("› Smileys") && $0.contains("view ro") }
        try terminal.keys("o")
        // Smileys' emojis show under it in this view; the data source's own outline stays collapsed.
        let expanded = try terminal.waitForScreen { $0.contains("⌄ Smileys") && $0.contains("Laughing") }
        #expect(!expanded.contains("failed"), "\(expanded)")
        #expect(try daemon.request(["cmd": "numberOfItems", "dataSource": "emoji", "section": "outline"]).result()["count"] == 7)
        try terminal.keys("o")
        try terminal.waitForScreen { $0.contains("› Smileys") && !$0.contains("Laughing") }
        _ = try daemon.request(["cmd": "setExpansionScope", "dataSource": "emoji", "scope": "shared"]).result()
        try terminal.keys("o")
        let refused = try terminal.waitForScreen { $0.contains("expand failed") }
        #expect(refused.contains("expand failed") && refused.contains("› Smileys"), "\(refused)")
        try terminal.keys("j")
        let moved = try terminal.waitForScreen { !$0.contains("expand failed") && $0.contains("view ro") }
        #expect(!moved.contains("EXITED"), "\(moved)")
        try terminal.keys("q")
        #expect(try terminal.waitForScreen { $0.contains("EXITED") }.contains("EXITED 0"))
    }
}

/// Runs a program to completion (`spawnProgram`, then waitpid), standard output to a temporary file and
/// standard error to /dev/null; returns its status and output.
func spawnAndWait(_ arguments: [String], environment extra: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let outputPath = NSTemporaryDirectory() + "spawn-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
    defer { unlink(outputPath) }
    let pid = try spawnProgram(arguments, outputPath: outputPath, errorPath: "/dev/null", environment: extra)
    // Waited for at most five minutes: a tmux command that hangs is killed rather than holding the run.
    var status: Int32 = 0
    let deadline = ContinuousClock.now + .seconds(300)
    while true {
        let ended = waitpid(pid, &status, WNOHANG)
        if ended == pid || (ended < 0 && errno != EINTR) { break }
        if ContinuousClock.now >= deadline {
            FileHandle.standardError.write(Data("test harness: \(arguments.joined(separator: " ")) still ran after 300 s: killed\n".utf8))
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            break
        }
        Thread.sleep(forTimeInterval: 0.005)
    }
    let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (exitStatus, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
}

/// listview in a real terminal: a detached tmux session on its own server socket.
final class TmuxSession {
    let server = "listd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let name = "view"

    /// Starts `command` in a `width` × `height` terminal; after it exits, the shell prints its status
    /// and whether the terminal is in canonical mode again, then waits.
    init(_ command: String, width: Int, height: Int) throws {
        try tmux(["new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)",
                  "\(command); echo EXITED $?; stty -a | grep -o -- '-\\?icanon'; sleep 60"])
    }

    deinit { _ = try? tmux(["kill-server"]) }

    /// Runs tmux on this session's server (see `spawnAndWait`); returns what it printed.
    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        try spawnAndWait(["tmux", "-L", server] + arguments).output
    }

    func keys(_ keys: String...) throws { try tmux(["send-keys", "-t", name] + keys) }

    /// The screen as text (with `escapes`, the SGR sequences too).
    func screen(escapes: Bool = false) throws -> String {
        try tmux(["capture-pane", "-p", "-t", name] + (escapes ? ["-e"] : []))
    }

    /// Waits until the screen satisfies `condition` (at most 30 seconds, a guard against a hang on a busy
    /// machine: then the test fails); returns the last screen.
    @discardableResult
    func waitForScreen(_ condition: (String) -> Bool) throws -> String {
        var text = ""
        for _ in 0..<600 {
            text = try screen()
            if condition(text) { return text }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("the screen never became what the test waits for; the last screen:\n\(text)")
        return text
    }

    /// listview's process id (the pane's child).
    func viewPID() throws -> Int32? {
        let pane = try tmux(["display-message", "-p", "-t", name, "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let children = (try? String(contentsOfFile: "/proc/\(pane)/task/\(pane)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").first.flatMap { Int32($0) }
    }
}

@Suite("listview in a terminal", .serialized)
struct ListviewTerminalTests {
    func listview(_ daemon: Daemon, _ arguments: String) -> String {
        "\(binaryDirectory.appendingPathComponent("listview").path) --socket \(daemon.socketPath) \(arguments)"
    }

    /// J/K move the cursor's item where its cell provider rule says reorderable (the move is listd's
    /// moveItem, the owner hears didReorder); elsewhere the status line says why not.
    @Test func jAndKReorderItems() throws {
        let daemon = try Daemon()
        _ = try daemon.request(["cmd": "apply", "dataSource": "todo", "snapshot": ["sections": [["id": "today", "items": ["alpha", "beta", "gamma"]], ["id": "done", "items": ["delta"]]]]]).result()
        _ = try daemon.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "{{item}}"]]).result()
        _ = try daemon.request(["cmd": "setCellProvider", "dataSource": "todo", "rules": [["section": "today", "registration": "row", "reorderable": true]], "default": "row"]).result()
        let owner = try daemon.connect()
        _ = try owner.request(["cmd": "watchDisplay", "dataSource": "todo"]).result()
        let terminal = try TmuxSession(listview(daemon, "todo --view mover"), width: 50, height: 8)
        try terminal.waitForScreen { $0.contains("gamma") && $0.contains("todo · v") }
        try terminal.keys("J")
        try terminal.waitForScreen { $0.contains("beta\nalpha\ngamma") }
        func items() throws -> JSONValue? { try daemon.request(["cmd": "snapshot", "dataSource": "todo", "section": "today"]).result()["sections"]?.arrayValue.first?["items"] }
        #expect(try items() == ["beta", "alpha", "gamma"])
        var told: JSONValue?
        while told?["event"] != "didReorder" {
            guard let next = try owner.readJSON(timeout: .seconds(20)) else {
                Issue.record("the owner's connection ended before didReorder")
                break
            }
            told = next
        }
        #expect(told?["item"] == "alpha" && told?["view"] == "mover", "\(String(describing: told))")
        // K brings it back; on the last item of "done", J says why not.
        try terminal.keys("K")
        try terminal.waitForScreen { $0.contains("alpha\nbeta\ngamma") }
        try terminal.keys("G", "J")
        let screen = try terminal.waitForScreen { $0.contains("cannot be moved") }
        #expect(screen.contains("delta cannot be moved"), "\(screen)")
        try terminal.keys("q")
    }

    @Test func scrollSelectExpandUpdateAndResize() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let terminal = try TmuxSession(listview(daemon, "emoji --view tv"), width: 50, height: 12)
        var screen = try terminal.waitForScreen { $0.contains("› Smileys") && $0.contains("emoji · v0") }
        #expect(screen.contains("› Smileys"))

        // o expands the outline item under the cursor: its children appear under it.
        try terminal.keys("o")
        screen = try terminal.waitForScreen { $0.contains("😂 Laughing") }
        #expect(screen.contains("⌄ Smileys") && screen.contains("😀 Happy"))

        // j moves the cursor; Enter selects its cell (setState): listd now shows it selected for this view.
        try terminal.keys("j", "Enter")
        // (A displayed cell's dequeue returns that same cell: asking again changes nothing.)
        func selectedCell() throws -> JSONValue {
            try daemon.request(["cmd": "dequeue", "view": "tv", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        }
        #expect(try eventually { try selectedCell()["state"]?["selected"] == true })
        #expect(try selectedCell()["item"] == "smileys/😀")
        #expect(try terminal.screen(escapes: true).contains("\u{1B}[7m"), "drawn in reverse video")

        // A change from another client shows up live.
        #expect(try daemon.request(["cmd": "insertItems", "dataSource": "emoji", "items": [["id": "live", "data": ["text": "🆕"]]], "beforeItem": "😀"])["ok"] == true)
        // G goes to the end (the numbers), and g back.
        try terminal.keys("G")
        screen = try terminal.waitForScreen { $0.contains("100") }
        #expect(screen.contains("100") && !screen.contains("EMOJI"))
        try terminal.keys("g")
        screen = try terminal.waitForScreen { $0.contains("EMOJI") }
        try terminal.keys("PageDown")
        screen = try terminal.waitForScreen { $0.contains("🆕") }
        #expect(screen.contains("🆕"), "the inserted emoji")

        // A narrower terminal: laid out again at the new width.
        try terminal.tmux(["resize-window", "-t", terminal.name, "-x", "30", "-y", "12"])
        screen = try terminal.waitForScreen { text in text.split(separator: "\n").allSatisfy { $0.count <= 30 } && text.contains("emoji · v") }
        #expect(screen.contains("emoji · v"))

        try terminal.keys("q")
        screen = try terminal.waitForScreen { $0.contains("icanon") }
        #expect(screen.contains("EXITED 0") && screen.contains("icanon") && !screen.contains("-icanon"), "\(screen)")
        #expect(try daemon.request(["cmd": "stats"]).result()["views"] == 0, "q detaches the view")
    }

    /// `?` shows every key over the view and Esc (or ?, or q) hides them again; Esc over the view does not
    /// quit but says how; the status line's hints are whole at 80 and at 100 columns.
    @Test func questionMarkShowsTheKeysAndEscapeDoesNotQuit() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let terminal = try TmuxSession(listview(daemon, "emoji --view keys"), width: 80, height: 24)
        func statusLine(_ screen: String) -> String {
            (screen.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }).map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        }
        var screen = try terminal.waitForScreen { $0.contains("› Smileys") && $0.contains("q quit") }
        #expect(statusLine(screen).hasPrefix("emoji · v0 · view keys") && statusLine(screen).hasSuffix("j/k h/l ␣ o J/K r · ? keys · q quit"), "\(screen)")
        try terminal.keys("?")
        screen = try terminal.waitForScreen { $0.contains("listview keys") && $0.contains("quit (here: hide these keys)") }
        for action in ["move down, up", "move sideways", "page down, up", "top, bottom", "select, deselect", "expand, collapse an outline item",
                       "move the item down, up", "re-attach", "show, hide these keys", "Esc alone never quits"] {
            #expect(screen.contains(action), "\(action):\n\(screen)")
        }
        try terminal.keys("Escape")
        screen = try terminal.waitForScreen { !$0.contains("listview keys") && $0.contains("› Smileys") }
        try terminal.keys("Escape")
        screen = try terminal.waitForScreen { $0.contains("Esc does not quit: q quits, ? shows the keys") }
        #expect(!screen.contains("EXITED") && statusLine(screen).hasSuffix("? keys · q quit"), "\(screen)")
        // ? shows the passing message in full with the keys.
        try terminal.keys("?")
        screen = try terminal.waitForScreen { $0.contains("listview keys") }
        #expect(screen.contains("Esc does not quit: q quits, ? shows the keys"), "\(screen)")
        try terminal.keys("Escape")
        try terminal.waitForScreen { !$0.contains("listview keys") && $0.contains("› Smileys") }
        // q over the keys hides them; the view goes on.
        try terminal.keys("?")
        try terminal.waitForScreen { $0.contains("listview keys") }
        try terminal.keys("q")
        screen = try terminal.waitForScreen { !$0.contains("listview keys") && $0.contains("› Smileys") }
        #expect(!screen.contains("EXITED"))
        try terminal.tmux(["resize-window", "-t", terminal.name, "-x", "100", "-y", "24"])
        screen = try terminal.waitForScreen { text in text.split(separator: "\n").contains { $0.count > 80 } && text.contains("q quit") }
        #expect(statusLine(screen).hasSuffix("j/k h/l ␣ o J/K r · ? keys · q quit"), "\(screen)")
        try terminal.keys("q")
        #expect(try terminal.waitForScreen { $0.contains("EXITED") }.contains("EXITED 0"))
    }

    /// The seed's company row pages sideways (groupPaging): l brings the next card in and the cursor
    /// with it, h goes back; the last page stops at the end of the row.
    @Test func hAndLPageTheCompanyRow() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let terminal = try TmuxSession(listview(daemon, "home --view pager"), width: 62, height: 24)
        var screen = try terminal.waitForScreen { $0.contains("서울 특별시") && $0.contains("home · v0") }
        #expect(screen.contains("닥프렌즈 병원") && !screen.contains("부산 광역시"), "the second card is cut off at first:\n\(screen)")
        // Consult 1 → consult 2 → the first company card; l pages to the second one.
        try terminal.keys("j", "j", "l")
        screen = try terminal.waitForScreen { $0.contains("부산 광역시") }
        #expect(screen.contains("닥프렌즈 한의원") && !screen.contains("서울 특별시"), "\(screen)")
        // The cursor moved with the page: Enter selects the second card.
        try terminal.keys("Enter")
        func selectedCell() throws -> JSONValue {
            try daemon.request(["cmd": "dequeue", "view": "pager", "indexPaths": [[1, 1]]]).result()["cells"]!.arrayValue[0]
        }
        #expect(try eventually { try selectedCell()["state"]?["selected"] == true })
        #expect(try selectedCell()["item"] == "company-2")
        // Past the last card nothing moves; h pages back to the first.
        try terminal.keys("l")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try terminal.screen().contains("부산 광역시"))
        try terminal.keys("h")
        screen = try terminal.waitForScreen { $0.contains("서울 특별시") && $0.contains("김민수") }
        #expect(screen.contains("닥프렌즈 병원") && !screen.contains("부산 광역시"), "\(screen)")
        // The other sections did not move sideways.
        #expect(screen.contains("박지혜") && screen.contains("김민수"))
        try terminal.keys("q")
        #expect(try terminal.waitForScreen { $0.contains("EXITED") }.contains("EXITED 0"))
    }

    /// The README's `scripts/demo --tmux`: listd with its plugins, listview home, listview emoji and
    /// listctl watch home in one tmux window; a change shows up in a view and in watch; closing the
    /// session stops listd and its plugins.
    @Test func theDemoScriptOpensTheViewsInTmux() throws {
        let directory = NSTemporaryDirectory() + "listd-demo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/listd.sock"
        let server = "listd-demo-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let script = protocolDirectory.deletingLastPathComponent().appendingPathComponent("scripts/demo").path
        // listweb's preferred port taken by the test (never rely on 8111 being free): it takes another.
        let held = try HeldPort()
        let started = try spawnAndWait(
            ["bash", "-c", "exec bash \"$0\" --tmux --detached 2>&1", script],
            environment: [
                "LISTD_DEMO_BIN": binaryDirectory.path, "LISTD_DEMO_TMUX": server, "LISTD_SOCKET": socket, "XDG_STATE_HOME": directory + "/state",
                "LISTD_DEMO_WEB_PORT": "\(held.port)",
            ])
        #expect(started.status == 0, "\(started.output)")
        func pane(_ index: Int) throws -> String { try spawnAndWait(["tmux", "-L", server, "capture-pane", "-p", "-t", "demo:0.\(index)"]).output }
        // The first line is listweb's address (it listens by then), in the status line too and first in listd's pane.
        let lines = started.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Open in a browser: http://127.0.0.1:") == true && lines.dropFirst().first?.hasPrefix("demo: running in tmux") == true,
                "\(started.output)")
        let served = try #require(ServedAddress(lines.first ?? ""), "\(started.output)")
        #expect(served.port != held.port && served.notes == "(port \(held.port) was taken)")
        #expect(try httpGet(port: served.port, "/api/sources", token: served.token).body.contains("\"home\""))
        let status = try spawnAndWait(["tmux", "-L", server, "show-options", "-v", "-t", "demo", "status-left"]).output
        #expect(status.replacingOccurrences(of: "##", with: "#").contains(lines[0]), "the status line: \(status)")
        let listdPane = try spawnAndWait(["tmux", "-L", server, "capture-pane", "-p", "-J", "-S", "-", "-t", "demo:0.2"]).output
        #expect(listdPane.split(separator: "\n").first.map(String.init) == lines[0], "listd's pane:\n\(listdPane)")
        func waitFor(_ index: Int, _ condition: (String) -> Bool) throws -> String {
            var text = ""
            for _ in 0..<600 {
                text = try pane(index)
                if condition(text) { return text }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return text
        }
        var closed = false
        defer { if !closed { _ = try? spawnAndWait(["tmux", "-L", server, "kill-server"]) } }

        // (A frame is written top to bottom: wait for all of it, status line included.)
        let home = try waitFor(0) { $0.contains("닥프렌즈 병원") && $0.contains("박지혜") && $0.contains("home · v") }
        #expect(home.contains("닥프렌즈 병원") && home.contains("home · v"), "listview home:\n\(home)")
        #expect(try waitFor(1) { $0.contains("› Smileys") && $0.contains("😀") }.contains("😀"), "listview emoji")
        #expect(try waitFor(3) { $0.contains("watching home") }.contains("watching home"), "listctl watch home")
        // A change from another client, shown by listview and by watch (the connection closes after it);
        // the demo's data owner grew the company row as listview was about to show its end.
        let plugins = try { () throws -> [Int] in
            let connection = try LineConnection(path: socket)
            #expect(try eventually { try connection.request(["cmd": "numberOfItems", "dataSource": "home", "section": "company"]).result()["count"]?.intValue ?? 0 > 2 },
                    "home-owner appended companies")
            #expect(try connection.request(["cmd": "appendItems", "dataSource": "home", "toSection": "consult", "items": [["id": "consult-3", "data": ["title": "허리 통증", "readCnt": 0]]]])["ok"] == true)
            #expect(try waitFor(0) { $0.contains("허리 통증") }.contains("허리 통증"))
            #expect(try waitFor(3) { $0.contains("[0,2] consult-3") }.contains("[0,2] consult-3"))
            return try connection.request(["cmd": "stats"]).result()["supervisedPlugins"]?.arrayValue.compactMap { $0["pid"]?.intValue } ?? []
        }()
        #expect(plugins.count == 2)

        // Closing everything (the terminal going away) stops listd, which stops its plugins.
        _ = try spawnAndWait(["tmux", "-L", server, "kill-server"])
        closed = true
        for _ in 0..<600 where FileManager.default.fileExists(atPath: socket) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!FileManager.default.fileExists(atPath: socket), "listd stopped and removed its socket")
        for _ in 0..<600 where plugins.contains(where: { kill(pid_t($0), 0) == 0 }) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(plugins.allSatisfy { kill(pid_t($0), 0) != 0 }, "the plugins stopped")
    }

    /// `scripts/demo --tmux --detached` returns once listd answers; when listd cannot start, it exits 1
    /// with the end of listd's log, and leaves no tmux session behind.
    @Test func theDetachedDemoReportsAFailedStart() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = "listd-demo-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? spawnAndWait(["tmux", "-L", server, "kill-server"]) }
        let script = protocolDirectory.deletingLastPathComponent().appendingPathComponent("scripts/demo").path
        let failed = try spawnAndWait(
            ["bash", "-c", "exec bash \"$0\" --tmux --detached --max-line-bytes nope 2>&1", script],
            environment: ["LISTD_DEMO_BIN": binaryDirectory.path, "LISTD_DEMO_TMUX": server, "LISTD_SOCKET": directory + "/listd.sock"])
        #expect(failed.status == 1)
        #expect(failed.output.contains("demo: listd did not start on \(directory)/listd.sock; the end of its log:"), "\(failed.output)")
        #expect(failed.output.contains("The value 'nope' is invalid for '--max-line-bytes"), "\(failed.output)")
        #expect(try spawnAndWait(["tmux", "-L", server, "has-session", "-t", "demo"]).status != 0, "no session left")
    }

    @Test func scrollingTenThousandItemsReusesCells() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "{{n}}"]])["ok"] == true)
        let items: [JSONValue] = (0..<10_000).map { ["id": .string("i\($0)"), "data": ["n": .string("Item \($0)")]] }
        #expect(try connection.request(["cmd": "apply", "dataSource": "big", "snapshot": ["sections": [["id": "S", "items": .array(items)]]]])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "big", "rules": [], "default": "row"])["ok"] == true)
        let terminal = try TmuxSession(listview(daemon, "big --view scroller"), width: 40, height: 21)
        try terminal.waitForScreen { $0.contains("Item 19") }
        // 20 rows on screen, a page is 19 rows: about 530 page turns to the bottom, a few at a time so
        // that listview draws (and so dequeues and hands back) most pages on the way.
        for _ in 0..<110 {
            try terminal.tmux(["send-keys", "-t", terminal.name, "-N", "5", "NPage"])
            Thread.sleep(forTimeInterval: 0.01)
        }
        let screen = try terminal.waitForScreen { $0.contains("Item 9999") }
        #expect(screen.contains("Item 9999"))
        let view = try #require(try daemon.request(["cmd": "stats"]).result()["cells"]?["views"]?.arrayValue.first { $0["view"] == "scroller" })
        let created = try #require(view["created"]?.intValue)
        // The visible rows, one registration, and a small constant (a page turn shows a new page before
        // the old one is handed back).
        #expect(created <= 20 + 1 + 20, "\(created) cells created")
        #expect((view["reused"]?.intValue ?? 0) >= 1_000, "pages drawn on the way reuse the cells of the pages before")
        try terminal.keys("q")
    }

    @Test func theTerminalIsRestoredAfterSIGTERMAndALostDaemon() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let terminal = try TmuxSession(listview(daemon, "home"), width: 60, height: 20)
        try terminal.waitForScreen { $0.contains("상담") }
        let pid = try #require(try terminal.viewPID())
        kill(pid, SIGTERM)
        var screen = try terminal.waitForScreen { $0.contains("icanon") }
        #expect(screen.contains("EXITED 143") && !screen.contains("-icanon") && !screen.contains("상담"), "\(screen)")

        // Without listd for longer than --reconnect-seconds: it gives up, and the terminal is restored.
        let second = try TmuxSession(listview(daemon, "home --reconnect-seconds 1"), width: 60, height: 20)
        try second.waitForScreen { $0.contains("상담") }
        #expect(try daemon.stop(signal: SIGKILL) == SIGKILL)
        screen = try second.waitForScreen { $0.contains("icanon") }
        #expect(screen.contains("listview: listd stopped: nothing answered at ") && screen.contains("EXITED 1") && !screen.contains("-icanon"), "\(screen)")

        // Its data source dropped: it says so, waits, and shows the data source made again.
        let restarted = try Daemon(arguments: ["--demo"])
        let third = try TmuxSession(listview(restarted, "home"), width: 60, height: 20)
        try third.waitForScreen { $0.contains("상담") }
        #expect(try restarted.request(["cmd": "dropDataSource", "dataSource": "home"])["ok"] == true)
        screen = try third.waitForScreen { $0.contains("dropped; waiting for it") }
        #expect(!screen.contains("상담") && !screen.contains("EXITED"), "\(screen)")
        #expect(try restarted.request(["cmd": "appendSections", "dataSource": "home", "sections": ["again"]])["ok"] == true)
        #expect(try restarted.request(["cmd": "appendItems", "dataSource": "home", "items": ["made-again"]])["ok"] == true)
        screen = try third.waitForScreen { $0.contains("made-again") }
        #expect(screen.contains("home · v2 · view") && !screen.contains("EXITED"), "\(screen)")
        try third.keys("q")
        screen = try third.waitForScreen { $0.contains("EXITED") }
        #expect(screen.contains("EXITED 0"), "\(screen)")
    }

    /// listd restarts (its state kept): the view shows "reconnecting…", then resumes where it was and
    /// follows the changes made after the restart.
    @Test func aViewReconnectsAndResumesAfterARestart() throws {
        let state = try makeTemporaryDirectory() + "/state"
        defer { try? FileManager.default.removeItem(atPath: (state as NSString).deletingLastPathComponent) }
        let first = try Daemon(arguments: ["--demo", "--state-directory", state])
        #expect(try first.request(["cmd": "appendItems", "dataSource": "home", "toSection": "consult", "items": [["id": "before", "data": ["title": "Before the restart"]]]])["ok"] == true)
        let terminal = try TmuxSession(listview(first, "home --view tv"), width: 70, height: 24)
        try terminal.waitForScreen { $0.contains("home · v1") }
        #expect(try first.stop() == 0)
        #expect(try terminal.waitForScreen { $0.contains("reconnecting to listd") }.contains("reconnecting to listd"))
        let second = try Daemon(arguments: ["--demo", "--state-directory", state], directory: first.directory)
        #expect(try second.request(["cmd": "updateItems", "dataSource": "home", "items": [["id": "before", "data": ["title": "After the restart"]]]])["ok"] == true)
        let screen = try terminal.waitForScreen { $0.contains("home · v") && $0.contains("After the restart") && !$0.contains("reconnecting") }
        #expect(screen.contains("After the restart") && !screen.contains("EXITED"), "\(screen)")
    }
}
