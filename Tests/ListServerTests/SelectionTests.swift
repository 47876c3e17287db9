import Foundation
import ListClient
import DiffableCore
import ListWire
import TestSupport
import Testing

/// Selection as data: a view's `setState selected` is the view's selection, kept by item, and other
/// views of the data source that ask (`attach` with `selectionEvents`) see it change.
@Suite struct SelectionTests {
    /// A data source "tasks" with items t0…t4 (no provider: the default presentation) and a view "screen".
    func setUp(_ daemon: Daemon) throws -> LineConnection {
        let items: [JSONValue] = (0..<5).map { ["id": .string("t\($0)"), "data": ["title": .string("Task \($0)")]] }
        #expect(try daemon.request(["cmd": "apply", "dataSource": "tasks", "snapshot": ["sections": [["id": "today", "items": .array(items)]]]])["ok"] == true)
        let screen = try daemon.connect()
        #expect(try screen.request(["cmd": "attach", "dataSource": "tasks", "view": "screen"])["ok"] == true)
        _ = try screen.request(["cmd": "dequeue", "view": "screen", "indexPaths": [[0, 0], [0, 1], [0, 2], [0, 3]]]).result()
        return screen
    }

    /// The next event named `name` on `connection`, skipping others.
    func next(_ name: String, on connection: LineConnection) throws -> JSONValue {
        for _ in 0..<10 {
            let event = try #require(try connection.readJSON(timeout: .seconds(5)))
            if event["event"]?.stringValue == name { return event }
        }
        throw ClientError("no \(name) event")
    }

    @Test func anotherViewSeesSelectionsAsTheyChange() throws {
        let daemon = try Daemon()
        let screen = try setUp(daemon)
        let follower = try daemon.connect()
        let attached = try follower.request(["cmd": "attach", "dataSource": "tasks", "view": "follower", "selectionEvents": true]).result()
        #expect(attached["selections"] == [], "nobody has selected anything yet")

        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t1", "state": ["selected": true]]).result()["cell"]?["state"] == ["selected": true])
        // The view that selects gets its cellUpdated event, never a selectionChanged about itself.
        #expect(try screen.readJSON()?["event"] == "cellUpdated")
        #expect((try? screen.readJSON(timeout: .milliseconds(300))) == nil)
        let selected = try next("selectionChanged", on: follower)
        #expect(selected["dataSource"] == "tasks" && selected["view"] == "follower")
        #expect(selected["from"] == ["view": "screen", "user": .string(NSUserName()), "items": ["t1"]])
        #expect(selected["selected"] == ["t1"] && selected["deselected"] == [])

        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t3", "state": ["selected": true]])["ok"] == true)
        #expect(try next("selectionChanged", on: follower)["from"]?["items"] == ["t1", "t3"])
        // Other state keys, and selecting what is already selected, say nothing.
        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t3", "state": ["selected": true, "highlighted": true]])["ok"] == true)
        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t1", "state": ["selected": false]])["ok"] == true)
        let deselected = try next("selectionChanged", on: follower)
        #expect(deselected["selected"] == [] && deselected["deselected"] == ["t1"] && deselected["from"]?["items"] == ["t3"])


        // A view attaching later starts from the current selections.
        let late = try daemon.connect()
        let current = try late.request(["cmd": "attach", "dataSource": "tasks", "view": "late", "selectionEvents": true]).result()
        #expect(current["selections"] == [["view": "screen", "user": .string(NSUserName()), "items": ["t3"]]])
        // A view that did not ask gets no selection events.
        let plain = try daemon.connect()
        #expect(try plain.request(["cmd": "attach", "dataSource": "tasks", "view": "plain"]).result()["selections"] == nil)
        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t0", "state": ["selected": true]])["ok"] == true)
        #expect(try next("selectionChanged", on: late)["selected"] == ["t0"])
        #expect((try? plain.readJSON(timeout: .milliseconds(300))) == nil, "no event at all")
    }

    /// As UIKit's collection view keeps selected index paths: a selected item's cell shows as selected
    /// whenever it is dequeued, whichever pooled cell it gets; deleting the item deselects it.
    @Test func selectionFollowsTheItemNotTheCell() throws {
        let daemon = try Daemon()
        let screen = try setUp(daemon)
        let follower = try daemon.connect()
        #expect(try follower.request(["cmd": "attach", "dataSource": "tasks", "view": "follower", "selectionEvents": true])["ok"] == true)
        let cell = try screen.request(["cmd": "setState", "view": "screen", "item": "t2", "state": ["selected": true]]).result()["cell"]!
        _ = try next("selectionChanged", on: follower)

        // Scrolled away: the cell goes back to the pool and is reused for another item, unselected.
        #expect(try screen.request(["cmd": "endDisplaying", "view": "screen", "cells": [cell["cell"]!]])["ok"] == true)
        let other = try screen.request(["cmd": "dequeue", "view": "screen", "indexPaths": [[0, 4]]]).result()["cells"]!.arrayValue[0]
        #expect(other["cell"] == cell["cell"] && other["reused"] == true)
        #expect(other["state"] == [:])
        // Back on screen: selected again.
        let back = try screen.request(["cmd": "dequeue", "view": "screen", "indexPaths": [[0, 2]]]).result()["cells"]!.arrayValue[0]
        #expect(back["item"] == "t2" && back["state"] == ["selected": true])

        // Moving keeps it; deleting deselects it, after the change itself.
        #expect(try daemon.request(["cmd": "moveItem", "dataSource": "tasks", "item": "t2", "beforeItem": "t0"])["ok"] == true)
        #expect(try daemon.request(["cmd": "deleteItems", "dataSource": "tasks", "items": ["t2"]])["ok"] == true)
        var names: [String] = []
        var gone: JSONValue?
        while gone == nil, let event = try follower.readJSON(timeout: .seconds(5)) {
            names.append(event["event"]?.stringValue ?? "")
            if event["event"] == "selectionChanged" { gone = event }
        }
        #expect(names == ["changes", "changes", "selectionChanged"])
        #expect(gone?["deselected"] == ["t2"] && gone?["from"]?["items"] == [])
        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t4", "state": ["selected": true]])["ok"] == true)
        #expect(try next("selectionChanged", on: follower)["from"]?["items"] == ["t4"], "t2 is no longer selected")
    }

    @Test func aViewThatGoesAwayTakesItsSelectionWithIt() throws {
        let daemon = try Daemon()
        var screen: LineConnection? = try setUp(daemon)
        let follower = try daemon.connect()
        #expect(try follower.request(["cmd": "attach", "dataSource": "tasks", "view": "follower", "selectionEvents": true])["ok"] == true)
        #expect(try screen?.request(["cmd": "setState", "view": "screen", "item": "t0", "state": ["selected": true]])["ok"] == true)
        #expect(try screen?.request(["cmd": "setState", "view": "screen", "item": "t1", "state": ["selected": true]])["ok"] == true)
        _ = try next("selectionChanged", on: follower)
        _ = try next("selectionChanged", on: follower)
        screen = nil  // closes the connection: its view detaches
        let gone = try next("selectionChanged", on: follower)
        #expect(gone["from"] == ["view": "screen", "user": .string(NSUserName()), "items": []])
        #expect(gone["deselected"] == ["t0", "t1"])
    }

    @Test func listctlWatchFollowsSelections() throws {
        let daemon = try Daemon()
        let screen = try setUp(daemon)
        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t1", "state": ["selected": true]])["ok"] == true)
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listctl")
        process.arguments = ["--socket", daemon.socketPath, "watch", "tasks", "--selection", "--view", "watcher", "--reconnect-seconds", "0", "--width", "0"]
        let output = makePipe()
        process.standardOutput = output
        try process.start()
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["views"] == 2 })
        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t3", "state": ["selected": true]])["ok"] == true)
        #expect(try screen.request(["cmd": "setState", "view": "screen", "item": "t1", "state": ["selected": false]])["ok"] == true)
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
        #expect(try daemon.stop() == 0)
        process.waitUntilExit(within: .seconds(60))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let user = NSUserName()
        #expect(text.contains("watching tasks as watcher from version 1\nselection of view screen (\(user)): t1\n"), "\(text)")
        #expect(text.contains(" selection of view screen (\(user)): +t3\n  selected now: t1, t3\n"), "\(text)")
        #expect(text.contains(" selection of view screen (\(user)): -t1\n  selected now: t3\n"), "\(text)")
    }
}
