import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

@Suite("Registrations, reuse pools and dequeue against listd", .serialized)
struct CellTests {
    static let titleCell: JSONValue = [
        "cmd": "register", "registration": "title",
        "contentConfiguration": ["type": "cell", "text": "{{#state.selected}}✓ {{/state.selected}}{{title}}"],
        "background": ["type": "listGroupedCell", "cornerRadius": 10],
    ]
    static let detailCell: JSONValue = [
        "cmd": "register", "registration": "detail",
        "contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "#{{n}}"],
        "accessories": [["type": "disclosureIndicator"]],
    ]

    /// A data source of `count` items "i0"… with payload {title, n}, two registrations (every third item
    /// is a "detail" cell), and a view attached on the returned connection.
    func setUp(_ daemon: Daemon, count: Int, view: String = "main") throws -> LineConnection {
        let connection = try daemon.connect()
        #expect(try connection.request(Self.titleCell).result()["created"] == true)
        #expect(try connection.request(Self.detailCell)["ok"] == true)
        let items: [JSONValue] = (0..<count).map { ["id": .string("i\($0)"), "data": ["title": .string("Item \($0)"), "n": .int($0), "kind": .string($0 % 3 == 0 ? "detail" : "plain")]] }
        #expect(try connection.request(["cmd": "apply", "dataSource": "list", "snapshot": ["sections": [["id": "S", "items": .array(items)]]]])["ok"] == true)
        #expect(try connection.request([
            "cmd": "setCellProvider", "dataSource": "list",
            "rules": [["match": ["field": "kind", "equals": "detail"], "registration": "detail"]], "default": "title",
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "list", "view": .string(view)])["ok"] == true)
        return connection
    }

    @Test func registrationsAreCreatedOnceUpFront() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        #expect(try connection.request(Self.titleCell).result()["created"] == true)
        #expect(try connection.request(Self.titleCell).result()["created"] == false, "the same definition again is fine")
        var changed = Self.titleCell
        if case .object(var members) = changed {
            members["contentConfiguration"] = ["type": "valueCell", "text": "{{title}}"]
            changed = .object(members)
        }
        #expect(try connection.request(changed).errorCode == "registration-exists")
        #expect(try connection.request(["cmd": "register", "registration": "bad", "contentConfiguration": ["type": "cell", "text": "{{#open}}"]]).errorCode == "invalid-registration")
        #expect(try connection.request(["cmd": "register", "registration": "odd", "contentConfiguration": ["type": "hologram"]]).errorCode == "invalid-registration")
        let list = try connection.request(["cmd": "registrations"]).result()["registrations"]!.arrayValue
        #expect(list.map { $0["registration"] } == ["title"])
        #expect(list.first?["type"] == "cell")
        #expect(try connection.request(["cmd": "unregister", "registration": "title"])["ok"] == true)
        #expect(try connection.request(["cmd": "unregister", "registration": "title"]).errorCode == "registration-not-found")
        #expect(try connection.request(["cmd": "createDataSource", "dataSource": "d"])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "d", "rules": [], "default": "title"]).errorCode == "registration-not-found")
    }

    /// Items no rule maps show their payload's title (else text, else name, else the id) and subtitle
    /// (else secondaryText) in a plain cell, and `cellProvider` reads back what `setCellProvider` set.
    @Test func theDefaultPresentationAndReadingBackTheProvider() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        let items: [JSONValue] = [
            ["id": "a", "data": ["title": "Buy milk", "subtitle": "today"]], ["id": "b", "data": ["text": "Call mom", "secondaryText": "evening"]],
            ["id": "c", "data": ["name": "Ann"]], ["id": "d", "data": ["title": ""]], "e",
        ]
        _ = try connection.request(["cmd": "apply", "dataSource": "tasks", "snapshot": ["sections": [["id": "S", "items": .array(items)]]]]).result()
        #expect(try connection.request(["cmd": "cellProvider", "dataSource": "tasks"]).result() == ["dataSource": "tasks", "version": 1, "rules": []])
        _ = try connection.request(["cmd": "attach", "dataSource": "tasks", "view": "v"]).result()
        let cells = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]]]).result()["cells"]?.arrayValue ?? []
        #expect(cells.map { $0["content"] ?? .null } == [
            ["type": "cell", "text": "Buy milk", "secondaryText": "today"], ["type": "cell", "text": "Call mom", "secondaryText": "evening"],
            ["type": "cell", "text": "Ann"], ["type": "cell", "text": "d"], ["type": "cell", "text": "e"],
        ])
        #expect(cells.allSatisfy { $0["defaultPresentation"] == true && $0["registration"] == "(default)" })
        // A change reconfigures default-presentation cells like any other.
        _ = try connection.request(["cmd": "updateItems", "dataSource": "tasks", "items": [["id": "e", "data": ["title": "Eve"]]]]).result()
        var updated: JSONValue?
        while updated == nil, let line = try connection.readJSON() {
            if line["event"] == "cellUpdated" { updated = line }
        }
        #expect(updated?["cell"]?["content"]?["text"] == "Eve", "\(String(describing: updated))")

        // setCellProvider accepts a default alone; cellProvider returns exactly what setCellProvider accepts.
        _ = try connection.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "subtitleCell", "text": "{{title}}"]]).result()
        _ = try connection.request(["cmd": "setCellProvider", "dataSource": "tasks", "default": "row"]).result()
        let rules: JSONValue = [["section": "S", "match": ["field": "title", "equals": "Buy milk"], "registration": "row"]]
        _ = try connection.request(["cmd": "setCellProvider", "dataSource": "tasks", "rules": rules, "default": "row"]).result()
        let read = try connection.request(["cmd": "cellProvider", "dataSource": "tasks"]).result()
        #expect(read == ["dataSource": "tasks", "version": 4, "rules": rules, "default": "row"])
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "tasks"]).errorCode == "invalid-argument")
        #expect(try connection.request(["cmd": "register", "registration": "(default)", "contentConfiguration": ["type": "cell"]]).errorCode == "invalid-argument")
    }

    @Test func dequeueErrors() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon, count: 10)
        #expect(try connection.request(["cmd": "dequeue", "view": "main", "indexPaths": [[0, 10]]]).errorCode == "index-out-of-range")
        #expect(try connection.request(["cmd": "dequeue", "view": "other", "indexPaths": [[0, 0]]]).errorCode == "not-attached")
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "list", "rules": [["section": "T", "registration": "title"]]])["ok"] == true)
        // No rule maps the item: the default presentation, not an error.
        let unmapped = try connection.request(["cmd": "dequeue", "view": "main", "indexPaths": [[0, 0]]]).result()
        #expect(unmapped["cells"]?.arrayValue.first?["defaultPresentation"] == true)
        #expect(unmapped["cells"]?.arrayValue.first?["registration"] == "(default)")
        // A rule naming a registration that does not exist (it was unregistered) is still an error.
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "list", "rules": [["registration": "gone"]]]).errorCode == "registration-not-found")
        #expect(try connection.request(["cmd": "endDisplaying", "view": "main", "cells": ["c99"]]).errorCode == "cell-not-found")
        #expect(try connection.request(["cmd": "dequeueSupplementary", "view": "main", "elementKind": "header", "indexPath": [0, 0]]).errorCode == "no-registration")
    }

    /// A 40-row window scrolled over 100,000 items and back: cells are created only for the window plus
    /// a few, and every cell shows its item.
    @Test func scrollingAHundredThousandItemsReusesCells() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon, count: 100_000)
        let rows = 40
        let step = 20
        var window: [Int: String] = [:]  // row → cell
        /// Ends displaying the rows `leaving` and dequeues the rows `entering`, in one write (as a view
        /// scrolling does), then checks every new cell.
        func scroll(leaving: Range<Int>, entering: Range<Int>) throws {
            var lines: [UInt8] = []
            if !leaving.isEmpty {
                let cells = leaving.compactMap { window.removeValue(forKey: $0) }
                lines += JSONValue.object(["cmd": "endDisplaying", "view": "main", "cells": .array(cells.map { .string($0) })]).jsonBytes + [0x0A]
            }
            lines += JSONValue.object(["cmd": "dequeue", "view": "main", "indexPaths": .array(entering.map { [0, .int($0)] })]).jsonBytes + [0x0A]
            try connection.send(bytes: lines)
            if !leaving.isEmpty { #expect(try connection.readJSON()?["ok"] == true) }
            let reply = try #require(try connection.readJSON()).result()
            for cell in reply["cells"]!.arrayValue {
                let row = cell["indexPath"]!.arrayValue[1].intValue!
                // The content matches the item, never a previous one the cell showed.
                if cell["item"] != .string("i\(row)") || cell["registration"] != .string(row % 3 == 0 ? "detail" : "title")
                    || cell["content"]?["text"] != .string("Item \(row)")
                {
                    mismatches.append(cell)
                }
                checked += 1
                window[row] = cell["cell"]!.stringValue!
            }
        }
        var mismatches: [JSONValue] = []
        var checked = 0
        try scroll(leaving: 0..<0, entering: 0..<rows)
        var first = 0
        while first + rows + step <= 100_000 {
            try scroll(leaving: first..<first + step, entering: first + rows..<first + rows + step)
            first += step
        }
        while first >= step {
            try scroll(leaving: first + rows - step..<first + rows, entering: first - step..<first)
            first -= step
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
        #expect(checked == 2 * (100_000 - rows) + rows)
        let registrations = try connection.request(["cmd": "registrations"]).result()["registrations"]!.arrayValue
        let created = registrations.compactMap { $0["created"]?.intValue }.reduce(0, +)
        let reused = registrations.compactMap { $0["reused"]?.intValue }.reduce(0, +)
        #expect(created <= rows + step + registrations.count + 2, "created \(created) cells")
        #expect(reused > 190_000)
        #expect(registrations.compactMap { $0["displayed"]?.intValue }.reduce(0, +) == rows)
    }

    @Test func twoViewsHaveSeparatePools() throws {
        let daemon = try Daemon()
        let first = try setUp(daemon, count: 20, view: "a")
        let second = try daemon.connect()
        #expect(try second.request(["cmd": "attach", "dataSource": "list", "view": "b"])["ok"] == true)
        let a = try first.request(["cmd": "dequeue", "view": "a", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(try first.request(["cmd": "endDisplaying", "view": "a", "cells": [a["cell"]!]])["ok"] == true)
        let b = try second.request(["cmd": "dequeue", "view": "b", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(b["reused"] == false, "view b does not take view a's pooled cell")
        let again = try first.request(["cmd": "dequeue", "view": "a", "indexPaths": [[0, 2]]]).result()["cells"]!.arrayValue[0]
        #expect(again["reused"] == true && again["cell"] == a["cell"])
        #expect(try second.request(["cmd": "dequeue", "view": "nobody", "indexPaths": [[0, 2]]]).errorCode == "not-attached")
        let views = try first.request(["cmd": "stats"]).result()["cells"]!["views"]!.arrayValue
        #expect(views.first { $0["view"] == "a" } == ["view": "a", "dataSource": "list", "displayed": 1, "pooled": 0, "created": 1, "reused": 1, "released": 0])
        #expect(views.first { $0["view"] == "b" }?["created"] == 1)
    }

    @Test func reconfigureKeepsTheCellReloadReplacesIt() throws {
        let daemon = try Daemon()
        let view = try setUp(daemon, count: 5)
        let writer = try daemon.connect()
        let cell = try view.request(["cmd": "dequeue", "view": "main", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        let id = cell["cell"]!

        // A payload change: the same cell, configured anew, pushed after the changes event.
        #expect(try writer.request(["cmd": "updateItems", "dataSource": "list", "items": [["id": "i1", "data": ["title": "Renamed", "n": 1, "kind": "plain"]]]])["ok"] == true)
        #expect(try view.readJSON()?["event"] == "changes")
        let updated = try #require(try view.readJSON())
        #expect(updated["event"] == "cellUpdated")
        #expect(updated["cell"]?["cell"] == id)
        #expect(updated["cell"]?["content"]?["text"] == "Renamed")

        // An explicit reconfigure: the same again.
        #expect(try writer.request(["cmd": "reconfigureItems", "dataSource": "list", "items": ["i1"]])["ok"] == true)
        #expect(try view.readJSON()?["event"] == "changes")
        #expect(try view.readJSON()?["cell"]?["cell"] == id)

        // A reload: the cell goes back to the pool; the view dequeues the index path again.
        #expect(try writer.request(["cmd": "reloadItems", "dataSource": "list", "items": ["i1"]])["ok"] == true)
        let reload = try #require(try view.readJSON())
        #expect(reload["changes"]?["stages"]?.arrayValue.first?["itemReloads"] == [[0, 1]])
        let stats = try view.request(["cmd": "registrations"]).result()["registrations"]!.arrayValue.first { $0["registration"] == "title" }
        #expect(stats?["displayed"] == 0 && stats?["pooled"] == 1)
        let fresh = try view.request(["cmd": "dequeue", "view": "main", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(fresh["reused"] == true, "dequeued again, from the pool")

        // A deleted item's cell leaves the screen too.
        #expect(try writer.request(["cmd": "deleteItems", "dataSource": "list", "items": ["i1"]])["ok"] == true)
        _ = try view.readJSON()
        let after = try view.request(["cmd": "registrations"]).result()["registrations"]!.arrayValue.first { $0["registration"] == "title" }
        #expect(after?["displayed"] == 0)
    }

    @Test func stateChangesReconfigureTheCell() throws {
        let daemon = try Daemon()
        let view = try setUp(daemon, count: 5)
        let cell = try view.request(["cmd": "dequeue", "view": "main", "indexPaths": [[0, 2]]]).result()["cells"]!.arrayValue[0]
        #expect(cell["background"]?["backgroundColor"] == "secondarySystemGroupedBackground")
        #expect(cell["state"] == [:], "a cell in its default state")
        let reply = try view.request(["cmd": "setState", "view": "main", "item": "i2", "state": ["selected": true, "isFavorite": true]]).result()
        #expect(reply["cell"]?["cell"] == cell["cell"])
        #expect(reply["cell"]?["content"]?["text"] == "✓ Item 2", "templates read the state")
        #expect(reply["cell"]?["background"]?["backgroundColor"] == "systemGray4", "the background reacts to selection")
        #expect(reply["cell"]?["state"]?["isFavorite"] == true)
        let event = try #require(try view.readJSON())
        #expect(event["event"] == "cellUpdated" && event["cell"]?["content"]?["text"] == "✓ Item 2")
        #expect(try view.request(["cmd": "setState", "view": "main", "item": "i2", "state": ["selected": "yes"]]).errorCode == "invalid-argument")
        #expect(try view.request(["cmd": "setState", "view": "main", "item": "i4", "state": ["selected": true]]).errorCode == "cell-not-found")
    }

    @Test func aReusedCellGettingAnotherConfigurationTypeIsWarned() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        #expect(try connection.request([
            "cmd": "register", "registration": "mixed",
            "contentConfiguration": ["type": "{{#premium}}valueCell{{/premium}}{{^premium}}cell{{/premium}}", "text": "{{id}}"],
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "S", "items": [["id": "p", "data": ["premium": true]], "q"]]]]])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "d", "rules": [], "default": "mixed"])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "d", "view": "v"])["ok"] == true)
        let first = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(first["warnings"] == nil)
        #expect(try connection.request(["cmd": "endDisplaying", "view": "v", "cells": [first["cell"]!]])["ok"] == true)
        let second = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(second["cell"] == first["cell"])
        #expect(second["warnings"]?.arrayValue.first?["code"] == "content-configuration-replaced")
        let stats = try connection.request(["cmd": "registrations"]).result()["registrations"]!.arrayValue[0]
        #expect(stats["contentConfigurationsReplaced"] == 1)
    }

    /// A script can act on a running view by name: the view's own connection gets the event.
    @Test func anotherConnectionCanSelectACellOfAView() throws {
        let daemon = try Daemon()
        let view = try setUp(daemon, count: 5, view: "screen")
        let cell = try view.request(["cmd": "dequeue", "view": "screen", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        let script = try daemon.connect()
        let reply = try script.request(["cmd": "setState", "view": "screen", "dataSource": "list", "cell": cell["cell"]!, "state": ["selected": true]])
        #expect(reply.result()["cell"]?["state"] == ["selected": true])
        #expect(try view.readJSON()?["cell"]?["content"]?["text"] == "✓ Item 1")
        #expect(try script.request(["cmd": "setState", "view": "screen", "dataSource": "other", "item": "i1", "state": [:]]).errorCode == "not-attached")
    }

    @Test func demoOutlineParentsShowTheirExpansion() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let view = try daemon.connect()
        #expect(try view.request(["cmd": "attach", "dataSource": "emoji", "view": "e"])["ok"] == true)
        let parent = try view.request(["cmd": "dequeue", "view": "e", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(parent["registration"] == "categoryCell")
        #expect(parent["accessories"]?.arrayValue.first?["expanded"] == false)
        #expect(try daemon.request(["cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["smileys"]])["ok"] == true)
        #expect(try view.readJSON()?["event"] == "changes")
        let updated = try #require(try view.readJSON())
        #expect(updated["event"] == "cellUpdated" && updated["cell"]?["cell"] == parent["cell"])
        #expect(updated["cell"]?["accessories"]?.arrayValue.first?["expanded"] == true)
        let child = try view.request(["cmd": "dequeue", "view": "e", "indexPaths": [[0, 1]]]).result()["cells"]!.arrayValue[0]
        #expect(child["registration"] == "emojiCell" && child["content"]?["text"] == "😀 Happy" && child["content"]?["secondaryText"] == "Smileys")
        #expect(child["indentationLevel"] == 1 && parent["indentationLevel"] == nil, "children indent, roots do not")
    }

    /// An item that stays visible at another depth is reconfigured: its cell comes back with the new
    /// indentation; items outside an outline have none.
    @Test func outlineItemsCarryTheirIndentation() throws {
        let daemon = try Daemon()
        let view = try setUp(daemon, count: 1, view: "v")
        func outline(_ items: JSONValue) throws -> JSONValue {
            try daemon.request(["cmd": "applySectionSnapshot", "dataSource": "list", "section": "tree", "snapshot": ["items": items]]).result()
        }
        _ = try outline([["id": "a", "data": ["title": "A"], "expanded": true, "children": [["id": "b", "data": ["title": "B"]]]], ["id": "c", "data": ["title": "C"]]])
        #expect(try view.readJSON()?["event"] == "changes")
        let cells = try view.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0], [1, 0], [1, 1], [1, 2]]]).result()["cells"]!.arrayValue
        #expect(cells.map { $0["indentationLevel"]?.intValue ?? 0 } == [0, 0, 1, 0])
        // c moves under b: same position in the list, two levels deeper.
        let result = try outline([
            ["id": "a", "data": ["title": "A"], "expanded": true, "children": [
                ["id": "b", "data": ["title": "B"], "expanded": true, "children": [["id": "c", "data": ["title": "C"]]]],
            ]],
        ])
        let reconfigured = result["changes"]?["stages"]?.arrayValue.last?["itemReconfigures"]?.arrayValue.compactMap { $0["item"]?.stringValue }
        #expect(reconfigured == ["b", "c"], "b shows its disclosure expanded, c its new depth")
        #expect(try view.readJSON()?["event"] == "changes")
        var updated: [String: Int] = [:]
        for _ in 0..<2 {
            let event = try #require(try view.readJSON())
            #expect(event["event"] == "cellUpdated")
            updated[event["cell"]?["item"]?.stringValue ?? ""] = event["cell"]?["indentationLevel"]?.intValue ?? 0
        }
        #expect(updated == ["b": 1, "c": 2])
    }

    @Test func supplementaryViews() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let connection = try daemon.connect()
        #expect(try connection.request([
            "cmd": "register", "registration": "header", "kind": "supplementary", "elementKind": "header",
            "contentConfiguration": ["type": "groupedHeader", "text": "{{title}}"],
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "setSupplementaryProvider", "dataSource": "home", "elementKind": "header", "rules": [], "default": "header"])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "home", "view": "v"])["ok"] == true)
        let header = try connection.request(["cmd": "dequeueSupplementary", "view": "v", "elementKind": "header", "indexPath": [1, 0]]).result()["cell"]!
        #expect(header["section"] == "company" && header["content"]?["text"] == "병원")
        #expect(header["content"]?["textProperties"] == nil, "content lists only what differs from the style")
        let styles = try connection.request(["cmd": "styles"]).result()
        #expect(styles["content"]?["groupedHeader"]?["textProperties"]?["transform"] == "uppercase")
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "home", "rules": [], "default": "header"]).errorCode == "invalid-argument",
                "a supplementary registration cannot serve cells")
    }

    /// A badge: a supplementary kind the layout anchors to items. It is dequeued at the item's index
    /// path, the provider's rules see the item (a count of 0 gets the empty badge), the template its
    /// data; it is configured anew with its item and goes back to its pool with it.
    @Test func badgesAreAnchoredToItems() throws {
        let daemon = try Daemon()
        let view = try setUp(daemon, count: 4)
        let writer = try daemon.connect()
        for (name, text) in [("badge", "{{n}}"), ("noBadge", "")] {
            #expect(try writer.request([
                "cmd": "register", "registration": .string(name), "kind": "supplementary", "elementKind": "badge",
                "contentConfiguration": ["type": "cell", "text": .string(text), "textProperties": ["color": "systemRed"]],
            ])["ok"] == true)
        }
        #expect(try writer.request([
            "cmd": "setSupplementaryProvider", "dataSource": "list", "elementKind": "badge",
            "rules": [["match": ["field": "n", "equals": 0], "registration": "noBadge"]], "default": "badge",
        ])["ok"] == true)
        let badge: JSONValue = [
            "elementKind": "badge", "width": ["absolute": 3], "height": ["absolute": 1], "containerAnchor": ["edges": ["top", "trailing"]],
        ]
        #expect(try writer.request([
            "cmd": "setLayout", "dataSource": "list",
            "layout": ["default": [
                "item": ["width": ["fractionalWidth": 0.5], "height": ["fractionalHeight": 1], "supplementaryItems": [badge]],
                "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 4]],
            ]],
        ])["ok"] == true)
        // The provider change (a version without stages), then the layout's.
        #expect(try view.readJSON()?["event"] == "changes")
        #expect(try view.readJSON()?["event"] == "layoutChanged")
        func dequeueBadge(_ item: Int) throws -> JSONValue {
            try view.request(["cmd": "dequeueSupplementary", "view": "main", "elementKind": "badge", "indexPath": [0, .int(item)]]).result()["cell"] ?? .null
        }
        let second = try dequeueBadge(2)
        #expect(second["item"] == "i2" && second["section"] == "S" && second["indexPath"] == [0, 2] && second["registration"] == "badge")
        #expect(second["content"]?["text"] == "2", "\(second)")
        #expect(try dequeueBadge(0)["registration"] == "noBadge")
        #expect(try view.request(["cmd": "dequeueSupplementary", "view": "main", "elementKind": "badge", "indexPath": [0, 9]]).errorCode == "index-out-of-range")

        // The item's data changes: its badge is configured anew (after the item's own cell, which is not displayed here).
        #expect(try writer.request(["cmd": "updateItems", "dataSource": "list", "items": [["id": "i2", "data": ["title": "Two", "n": 7, "kind": "plain"]]]])["ok"] == true)
        #expect(try view.readJSON()?["event"] == "changes")
        let updated = try #require(try view.readJSON())
        #expect(updated["event"] == "cellUpdated" && updated["cell"]?["cell"] == second["cell"] && updated["cell"]?["content"]?["text"] == "7", "\(updated)")

        // The item deleted: its badge goes back to the pool, and the next badge dequeued reuses it.
        func badgeCounts() throws -> (displayed: Int, pooled: Int) {
            let entry = try view.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue.first { $0["registration"] == "badge" }
            return (entry?["displayed"]?.intValue ?? -1, entry?["pooled"]?.intValue ?? -1)
        }
        #expect(try badgeCounts() == (1, 0))
        #expect(try writer.request(["cmd": "deleteItems", "dataSource": "list", "items": ["i2"]])["ok"] == true)
        #expect(try view.readJSON()?["event"] == "changes")
        #expect(try badgeCounts() == (0, 1))
        #expect(try dequeueBadge(1)["reused"] == true)

        // A kind the section's layout does not anchor to items stays the section's (a header here).
        #expect(try view.request(["cmd": "dequeueSupplementary", "view": "main", "elementKind": "header", "indexPath": [0, 0]]).errorCode == "no-registration")
    }
}
