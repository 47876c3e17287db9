import DiffableCore
import Foundation
import ListClient
import TestSupport
import Testing

/// The to-do case of issue 45: rule `match done=true → todoDone`, default `todoOpen`. A view draws the
/// cell of the registration the rules pick now, after a reload and after a payload change that makes the
/// rules pick another registration.
@Suite("Views redraw a reloaded item from the registration its rules pick", .serialized)
struct ReloadRedrawTests {
    /// A to-do list "todo" (milk, eggs: not done) with the two registrations and the rule.
    static func makeTodoList(_ daemon: Daemon) throws {
        for line: JSONValue in [
            ["cmd": "register", "registration": "todoOpen", "contentConfiguration": ["type": "cell", "text": "open {{title}}"]],
            ["cmd": "register", "registration": "todoDone", "contentConfiguration": ["type": "cell", "text": "done {{title}}"]],
            [
                "cmd": "apply", "dataSource": "todo",
                "snapshot": [
                    "sections": [
                        ["id": "today", "items": [["id": "milk", "data": ["title": "Milk", "done": false]], ["id": "eggs", "data": ["title": "Eggs", "done": false]]]]
                    ]
                ],
            ],
            [
                "cmd": "setCellProvider", "dataSource": "todo", "default": "todoOpen",
                "rules": [["match": ["field": "done", "equals": true], "registration": "todoDone"]],
            ],
        ] {
            _ = try daemon.request(line).result()
        }
    }

    /// `listview todo --follow`: a frame per version, collected as printed.
    static func follow(_ daemon: Daemon) throws -> (Process, PipeCollector) {
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listview")
        process.arguments = ["--socket", daemon.socketPath, "todo", "--follow", "--width", "30", "--height", "3", "--view", "f"]
        let output = makePipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let collected = PipeCollector(output)
        try process.start()
        return (process, collected)
    }

    /// What the dequeue of a fresh view answers for `item` now: the registration the rules pick.
    static func freshRegistration(_ daemon: Daemon, of item: String) throws -> String? {
        let connection = try daemon.connect()
        _ = try connection.request(["cmd": "attach", "dataSource": "todo", "view": "probe"]).result()
        let path = try connection.request(["cmd": "indexPath", "dataSource": "todo", "item": .string(item)]).result()["indexPath"] ?? .null
        let cells = try connection.request(["cmd": "dequeue", "view": "probe", "indexPaths": [path]]).result()["cells"]?.arrayValue
        return cells?.first?["registration"]?.stringValue
    }

    /// `reloadItems` after the payload changed: listview draws the new registration's cell (before the
    /// fix it kept the old one until `r`, the reload carrying only a position). Passes with listview's
    /// fix alone, whatever `updateItems` does.
    @Test func listviewRedrawsAReloadedItemFromItsNewRegistration() throws {
        let daemon = try Daemon()
        try Self.makeTodoList(daemon)
        let (process, collected) = try Self.follow(daemon)
        defer { killAndWait(process) }
        #expect(try eventually { collected.text.contains("open Milk") && collected.text.contains("open Eggs") }, "\(collected.text)")
        for (item, title) in [("milk", "Milk"), ("eggs", "Eggs")] {
            _ = try daemon.request(["cmd": "updateItems", "dataSource": "todo", "items": [["id": .string(item), "data": ["title": .string(title), "done": true]]]]).result()
            let reloaded = try daemon.request(["cmd": "reloadItems", "dataSource": "todo", "items": [.string(item)]]).result()
            let version = try #require(reloaded["version"]?.intValue)
            #expect(try Self.freshRegistration(daemon, of: item) == "todoDone")
            #expect(
                try eventually { collected.lastFrame.contains("version \(version) ──") && collected.lastFrame.contains("done \(title)") },
                "after reloadItems \(item), version \(version): \(collected.text)")
            #expect(!collected.lastFrame.contains("open \(title)"))
        }
    }

    /// `updateItems milk {"done": true}`: the rules pick todoDone now, so listd turns the reconfigure into
    /// a reload (warning `reconfigure-became-reload`) and listview draws todoDone's cell. Needs the
    /// engine's change for issue 45 point 2 (the lead's), not only listview's.
    @Test func listviewDrawsTheNewRegistrationAfterAnUpdateThatChangesIt() throws {
        let daemon = try Daemon()
        try Self.makeTodoList(daemon)
        let (process, collected) = try Self.follow(daemon)
        defer { killAndWait(process) }
        #expect(try eventually { collected.text.contains("open Milk") }, "\(collected.text)")
        let updated = try daemon.request(["cmd": "updateItems", "dataSource": "todo", "items": [["id": "milk", "data": ["title": "Milk", "done": true]]]]).result()
        let version = try #require(updated["version"]?.intValue)
        let warnings = updated["warnings"]?.arrayValue ?? []
        #expect(
            warnings.contains { $0["code"] == "reconfigure-became-reload" && $0["items"]?.arrayValue.contains("milk") == true },
            "the reply says the reconfigure became a reload: \(updated)")
        #expect(
            try eventually { collected.lastFrame.contains("version \(version) ──") && collected.lastFrame.contains("done Milk") },
            "after updateItems milk done, version \(version): \(collected.text)")
        #expect(!collected.lastFrame.contains("open Milk"))
    }

    /// The same in Chromium (Tests/Browser/reload_redraw_test.py, with listweb_test.py's helpers): a
    /// reloaded item shows the registration picked now, a reloaded section's items are dequeued anew, and
    /// (with the engine's change) an update that changes the registration redraws.
    @Test func listwebRedrawsReloadedItemsInChromium() throws {
        let run = try BrowserTests.runScript("reload_redraw_test.py")
        #expect(run.status == 0 && run.output.contains(" passed, 0 failed"), "\(run.output)")
    }
}
