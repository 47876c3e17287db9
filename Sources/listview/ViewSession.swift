import DiffableCore
import ListClient
import ListLayout
import ListViewCore
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// One view attached to a data source: keeps the model in step with listd (attach, layout, pushed
/// events), asks for exactly the cells on screen and hands back the ones that left it.
final class ViewSession {
    let socketPath: String
    let dataSource: String
    let viewName: String
    private(set) var connection: LineConnection
    private(set) var model: ViewModel
    /// From `stats`, for the status line.
    private(set) var created = 0
    private(set) var reused = 0
    /// Set when the view must stop (listd is stopping).
    private(set) var ended: String?
    /// Set while the data source does not exist (it was dropped): the view shows it empty and waits
    /// for it to be created again (`attachIfCreated`).
    private(set) var awaitingDataSource = false
    /// listd is stopping: the view may reconnect to the next one.
    private(set) var serverStopped = false
    /// The incarnation of the data source the model follows (from `attach`), for resuming.
    private(set) var incarnation: String?
    /// Whether the data source lets each view expand and collapse in its own view (expansion scope
    /// `perView`, from `attach`).
    private(set) var expandsInOwnView = false
    /// What this view expanded (`true`) or collapsed itself, by section then item: asked for again when
    /// it attaches anew, so that it shows what it showed.
    private(set) var ownExpansion: [String: [String: Bool]] = [:]
    /// Shown in the status line while set (e.g. "reconnecting…").
    var notice: String?
    /// Why the last action was refused (a read-only user's collapse): shown in the status line until the
    /// next key.
    var message: String?
    /// `?`: the keys are shown over the view (until ?, Esc, q or another key).
    var showsKeys = false
    /// What the layout asks for and the data source does not provide (a header without a supplementary
    /// provider), said once: in the status line, or on stderr for plain frames.
    private(set) var hint: String?
    /// How long the rows an animated change touched stay marked.
    static let markDuration = Duration.milliseconds(600)
    /// When the marks of the last animated change go (`nil`: none shown).
    private(set) var marksEnd: ContinuousClock.Instant?

    /// Clears the marks once their moment is over; returns whether it did (the view is to be drawn again).
    func expireMarks() -> Bool {
        guard let marksEnd, ContinuousClock.now >= marksEnd else { return false }
        self.marksEnd = nil
        model.clearMarks()
        return true
    }

    /// The displayed cells are to be handed back and dequeued again (a cell provider or a registration
    /// they depend on changed).
    private var cellsStale = false

    init(socketPath: String, dataSource: String, viewName: String, width: Int, height: Int) throws {
        self.socketPath = socketPath
        self.dataSource = dataSource
        self.viewName = viewName
        connection = try LineConnection(path: socketPath)
        model = ViewModel(snapshot: Snapshot(), version: 0, layout: LayoutDescription(), width: width, height: height)
        try attach()
    }

    /// Attaches (again): the whole snapshot, the layout, no cells. With `resume`, asks listd to send only
    /// the changes since the model's version instead (when it still can; else the snapshot comes).
    func attach(resume: Bool = false) throws {
        var members: [String: JSONValue] = ["cmd": "attach", "dataSource": .string(dataSource), "view": .string(viewName)]
        if resume, let incarnation {
            members["fromVersion"] = .int(model.version)
            members["incarnation"] = .string(incarnation)
        }
        if !ownExpansion.isEmpty {
            members["expansion"] = .object(
                ownExpansion.mapValues { items in
                    [
                        "expanded": .array(items.filter(\.value).keys.sorted().map { .string($0) }),
                        "collapsed": .array(items.filter { !$0.value }.keys.sorted().map { .string($0) }),
                    ]
                })
        }
        let reply = try request(.object(members))
        let result = reply["result"] ?? .null
        incarnation = result["incarnation"]?.stringValue
        expandsInOwnView = result["expansionScope"] == "perView"
        if !expandsInOwnView { ownExpansion = [:] }
        // Resumed: the missed events follow and are applied as they arrive.
        if result["resumed"] == true { return }
        let sections: [(section: Section, items: [Item])]
        do throws(WireError) {
            sections = try WireDecoding.snapshot(["sections": result["sections"] ?? []], field: "attach")
        } catch {
            throw ListviewError("listd sent a snapshot this listview cannot read: \(error.message)")
        }
        let snapshot = try Snapshot(sections)
        let layoutReply = try request(["cmd": "layout", "dataSource": .string(dataSource)])
        let layout = (try? LayoutDescription(json: layoutReply["result"]?["layout"] ?? [:])) ?? LayoutDescription()
        let cursor = model.cursor
        prefetched = []
        model = ViewModel(snapshot: snapshot, version: result["version"]?.intValue ?? 0, layout: layout, width: model.width, height: model.height)
        model.cursor = cursor.flatMap { snapshot.contains(item: $0) ? $0 : nil } ?? snapshot.item(at: IndexPath(section: 0, item: 0))?.id
    }

    /// While the data source is away: attaches when it exists again. Returns false while it does not
    /// (or may not be read); listd's other refusals and a lost connection throw.
    func attachIfCreated() throws -> Bool {
        do {
            try attach()
        } catch let refusal as ListviewError where refusal.code == "data-source-not-found" || refusal.code == "permission-denied" {
            return false
        }
        awaitingDataSource = false
        return true
    }

    /// `r`: detach and attach again, everything fetched anew.
    func reattach() throws {
        _ = try? request(["cmd": "detach", "view": .string(viewName)])
        model.forgetAllCells()
        try attach()
    }

    /// The connection ended without a `shutdown` event (listd was killed): reconnect as after one.
    func connectionLost() {
        serverStopped = true
    }

    /// After losing the connection (or an overflow): a new connection and a new attachment. With
    /// `resume`, only the changes since the model's version are fetched when listd still has them.
    func reconnect(resume: Bool = false) throws {
        connection = try LineConnection(path: socketPath)
        model.forgetAllCells()
        ended = nil
        serverStopped = false
        if awaitingDataSource {
            _ = try attachIfCreated()
        } else {
            try attach(resume: resume)
        }
    }

    /// Scrolls to content row `row` (kept inside the content when laid out).
    func scroll(to row: Int) { model.top = row }

    func resize(width: Int, height: Int) {
        model.width = width
        model.height = height
    }

    /// A request and its reply; events that arrive first are handled on the way. An error reply throws.
    @discardableResult
    func request(_ value: JSONValue) throws -> JSONValue {
        let reply = try connection.request(value)
        try handlePendingEvents()
        guard reply["ok"] == true else {
            throw ListviewError(
                "\(value["cmd"]?.stringValue ?? "request") failed: \(reply["error"]?["message"]?.stringValue ?? "\(reply)")",
                code: reply["error"]?["code"]?.stringValue)
        }
        return reply
    }

    /// Events set aside while waiting for replies, and lines already received.
    func handlePendingEvents() throws {
        while !connection.events.isEmpty {
            let event = connection.events.removeFirst()
            try handle(event)
        }
    }

    /// Reads and handles what listd sent (events only), waiting up to `timeout` for the first line;
    /// returns false when the connection ended.
    func receive(timeout: Duration = .seconds(5)) throws -> Bool {
        repeat {
            guard let line = try connection.readJSON(timeout: timeout) else { return false }
            if line["event"] != nil { try handle(line) }
        } while connection.hasBufferedLine
        return true
    }

    /// Set when an event changed the model; `synchronize` clears it.
    private(set) var changedByEvents = false

    private func handle(_ event: JSONValue) throws {
        changedByEvents = true
        switch event["event"]?.stringValue {
        case "changes":
            let version = event["version"]?.intValue ?? 0
            guard version == model.version + 1 else {
                // Out of step (a missed event): start over.
                try reattach()
                return
            }
            let changes: StagedChanges
            do throws(WireError) {
                changes = try WireDecoding.changes(event["changes"] ?? [:])
            } catch {
                throw ListviewError("listd sent changes this listview cannot read: \(error.message)")
            }
            if event["changes"]?["reloadData"] == true {
                // Everything changed at once (`apply` with reloadData, a data source read whole): read it again.
                try reattach()
                return
            }
            do {
                try model.apply(changes, version: version, reloadData: false, animatingDifferences: event["changes"]?["animatingDifferences"] != false)
                marksEnd = model.marked.isEmpty ? nil : ContinuousClock.now + Self.markDuration
            } catch {
                try reattach()
                return
            }
            // A version without stages is a cell provider change: cells are configured by the new rules.
            if changes.stages.isEmpty { cellsStale = true }
            // A line without "view": listd no longer shows this view its own way (what it set is gone).
            if event["view"] == nil { ownExpansion = [:] }
        case "expansionChanged":
            // This view's own expansion (expandInView, collapseInView): its changes, at the same version.
            guard event["version"]?.intValue == model.version else {
                try reattach()
                return
            }
            do {
                let changes = try WireDecoding.changes(event["changes"] ?? [:])
                try model.apply(changes, version: model.version, reloadData: false, animatingDifferences: event["changes"]?["animatingDifferences"] != false)
                marksEnd = model.marked.isEmpty ? nil : ContinuousClock.now + Self.markDuration
            } catch {
                try reattach()
            }
        case "cellUpdated":
            if let cell = event["cell"], let key = ViewModel.key(ofCell: cell), model.cells[key]?["cell"] == cell["cell"] { model.store(cell) }
        case "layoutChanged":
            // A layout change is a version of the data source too.
            guard event["version"]?.intValue == model.version + 1 else {
                try reattach()
                return
            }
            model.version += 1
            if let layout = try? LayoutDescription(json: event["layout"] ?? [:]) { model.layoutDescription = layout }
        case "registrationChanged":
            // A registration the providers name was made or deleted: its cells, and those that failed for want of it, anew.
            cellsStale = true
        case "dropped":
            // listd detached the view and took its cells back: an empty view until the data source is back.
            awaitingDataSource = true
            incarnation = nil
            ownExpansion = [:]
            model = ViewModel(snapshot: Snapshot(), version: 0, layout: LayoutDescription(), width: model.width, height: model.height)
        case "shutdown":
            ended = "listd is stopping"
            serverStopped = true
        case "overflow":
            try reconnect()
        default:
            break
        }
    }

    /// Brings the cells in line with what is on screen: hands back the cells that left it, dequeues
    /// the ones that came into view (in one batch), and lays out again while cells change size.
    func synchronize(revealCursor: Bool) throws {
        // Events can arrive with any reply: go round until a pass changes nothing.
        for _ in 0..<8 {
            if awaitingDataSource { return }
            changedByEvents = false
            if cellsStale {
                cellsStale = false
                let displayed = model.cells.values.compactMap { $0["cell"]?.stringValue }
                if !displayed.isEmpty { try endDisplaying(displayed) }
                model.forgetAllCells()
            }
            let layout = model.layout()
            if revealCursor { model.revealCursor(layout) } else { model.clampScroll(layout) }
            let visible = model.visibleElements(in: layout)
            let plan = model.plan(visible)
            if !plan.released.isEmpty { try endDisplaying(plan.released) }
            model.forgetErrorCells(notIn: visible)
            var changed = false
            if !plan.items.isEmpty {
                let cells = try dequeue(plan.items)
                if awaitingDataSource { return }  // dropped meanwhile: the replies are about a view that is gone
                for cell in cells where model.store(cell) { changed = true }
            }
            for supplementary in plan.supplementaries where !awaitingDataSource {
                let path = supplementary.indexPath
                let reply = try connection.request([
                    "cmd": "dequeueSupplementary", "view": .string(viewName), "elementKind": .string(supplementary.elementKind),
                    "indexPath": [.int(path.section), .int(path.item)],
                ])
                try handlePendingEvents()
                let section = model.snapshot.sectionIdentifier(at: path.section) ?? ""
                if reply["ok"] == true, let cell = reply["result"]?["cell"] {
                    model.store(cell)
                } else if supplementary.anchoredToItem, reply["error"]?["code"] == "no-registration",
                    let item = model.snapshot.item(at: path)?.id
                {
                    // No badge for this item (a provider whose rules leave it out): nothing drawn, for it alone.
                    model.store(["elementKind": .string(supplementary.elementKind), "section": .string(section), "item": .string(item), "content": [:]])
                    changed = true
                } else if reply["error"]?["code"] == "no-registration" || reply["error"]?["code"] == "registration-not-found" {
                    model.markAbsent(elementKind: supplementary.elementKind, section: section)
                    if hint == nil {
                        let kind = TerminalText.name(supplementary.elementKind)
                        hint = "the layout asks for \(kind) views but no supplementary provider gives them: "
                            + "listctl cell-provider \(TerminalText.name(dataSource)) --element-kind \(kind) FILE"
                    }
                    changed = true
                } else if reply["ok"] != true {
                    // Drawn as an error cell: one supplementary view's failure is not the view's.
                    var cell: [String: JSONValue] = ["elementKind": .string(supplementary.elementKind), "section": .string(section), "error": reply["error"] ?? [:]]
                    if supplementary.anchoredToItem, let item = model.snapshot.item(at: path)?.id { cell["item"] = .string(item) }
                    model.store(.object(cell))
                    changed = true
                }
            }
            if !changed && !changedByEvents {
                try reportPrefetch(layout: layout, visible: visible)
                return
            }
        }
    }

    /// The positions last reported with `prefetch` (sent again only when they change).
    private var prefetched: [IndexPath] = []

    /// Tells listd what is about to come on screen (the owner may be waiting for it: an infinite scroll).
    private func reportPrefetch(layout: CollectionLayout, visible: [VisibleElement]) throws {
        let paths = model.prefetchPaths(in: layout, visible: visible)
        guard paths != prefetched, !paths.isEmpty else { return }
        prefetched = paths
        _ = try connection.request([
            "cmd": "prefetch", "view": .string(viewName), "indexPaths": .array(paths.map { [.int($0.section), .int($0.item)] }),
        ])
        try handlePendingEvents()
    }

    /// Dequeues the cells at `paths` in one request. When listd refuses the request (one cell's rule names
    /// a registration that does not exist, say), each cell is dequeued alone, and one that still fails
    /// comes back as an error cell (`{item, error}`, drawn as "⚠ code"): one cell's failure is not the
    /// view's. It is dequeued again when a registration or the cell provider changes.
    private func dequeue(_ paths: [IndexPath]) throws -> [JSONValue] {
        func send(_ paths: [IndexPath]) throws -> JSONValue {
            let reply = try connection.request([
                "cmd": "dequeue", "view": .string(viewName), "indexPaths": .array(paths.map { [.int($0.section), .int($0.item)] }),
            ])
            try handlePendingEvents()
            return reply
        }
        let reply = try send(paths)
        if reply["ok"] == true { return reply["result"]?["cells"]?.arrayValue ?? [] }
        guard paths.count > 1 else {
            guard let item = model.snapshot.item(at: paths[0])?.id else { return [] }
            return [["item": .string(item), "error": reply["error"] ?? [:]]]
        }
        return try paths.flatMap { try dequeue([$0]) }
    }

    /// Hands cells back; one that listd already took back (its item went away meanwhile) is skipped.
    private func endDisplaying(_ cells: [String]) throws {
        let reply = try connection.request(["cmd": "endDisplaying", "view": .string(viewName), "cells": .array(cells.map { .string($0) })])
        try handlePendingEvents()
        if reply["ok"] != true {
            for cell in cells { _ = try connection.request(["cmd": "endDisplaying", "view": .string(viewName), "cells": [.string(cell)]]) }
            try handlePendingEvents()
        }
        model.forget(cellIdentifiers: Set(cells))
    }

    /// The view's cell counters from `stats`.
    func refreshCounters() throws {
        let stats = try request(["cmd": "stats"])
        for view in stats["result"]?["cells"]?["views"]?.arrayValue ?? [] where view["view"]?.stringValue == viewName && view["dataSource"]?.stringValue == dataSource {
            created = view["created"]?.intValue ?? 0
            reused = view["reused"]?.intValue ?? 0
        }
    }

    /// Draws the view (and, below it, the status line when `status` is given).
    func frame(showCursor: Bool, status: Bool) -> Canvas {
        var canvas = Canvas(width: model.width, height: model.height + (status ? 1 : 0))
        let layout = model.layout()
        let visible = model.visibleElements(in: layout)
        model.draw(layout, visible: visible, on: &canvas, showCursor: showCursor)
        if status {
            let items = model.snapshot.sectionIdentifiers.reduce(0) { $0 + ((try? model.snapshot.numberOfItems(inSection: $1)) ?? 0) }
            let name = TerminalText.name(dataSource)
            let view = TerminalText.name(viewName)
            // A message of the moment (a notice, a refusal, Esc's) takes the room of all but the short hints.
            let passing = notice ?? (awaitingDataSource ? "dropped; waiting for it to be created again" : nil) ?? message
            let said = passing ?? hint
            let info =
                passing.map { "\(name) · \($0)" }
                ?? hint.map { "\(name) · v\(model.version) · view \(view) · \($0)" }
                ?? "\(name) · v\(model.version) · view \(view) · \(items) items · \(model.cells.count) visible · cells \(created) created, \(reused) reused"
            // The key hints flush right, never cut (the info is, with "…"; ? shows it whole).
            canvas.draw(String(repeating: " ", count: model.width), x: 0, y: model.height, style: TextStyle(reverse: true))
            canvas.draw(
                KeyHelp.statusLine(info, width: model.width, brief: passing != nil), x: 0, y: model.height, maxWidth: model.width,
                style: TextStyle(reverse: true))
            if showsKeys { KeyHelp.drawOverlay(on: &canvas, rows: model.height, message: said) }
        }
        return canvas
    }

    // MARK: Interaction

    /// Toggles the cursor cell's selection (setState); the reconfigured cell comes back.
    func toggleSelection() throws {
        guard let item = model.cursor, let cell = model.cells[item] else { return }
        let selected = cell["state"]?["selected"] == true
        let reply = try request(["cmd": "setState", "view": .string(viewName), "item": .string(item), "state": ["selected": .bool(!selected)]])
        if let updated = reply["result"]?["cell"] { model.store(updated) }
    }

    /// Expands or collapses the cursor's outline item (when its cell shows an outline disclosure).
    func toggleExpansion() throws {
        guard let item = model.cursor, let cell = model.cells[item], let path = model.cursorPath,
            let disclosure = cell["accessories"]?.arrayValue.first(where: { $0["type"] == "outlineDisclosure" }),
            let section = model.snapshot.sectionIdentifier(at: path.section)
        else { return }
        let expand = disclosure["expanded"] != true
        if expandsInOwnView {
            // In this view only: the changes come as expansionChanged.
            do {
                try request([
                    "cmd": .string(expand ? "expandInView" : "collapseInView"), "view": .string(viewName), "section": .string(section),
                    "items": [.string(item)],
                ])
                ownExpansion[section, default: [:]][item] = expand
                return
            } catch let refusal as ListviewError where refusal.code == "invalid-argument" {
                // The owner made the expansion shared again since: it is the data source's now.
                expandsInOwnView = false
                ownExpansion = [:]
            }
        }
        try request([
            "cmd": .string(expand ? "expand" : "collapse"), "dataSource": .string(dataSource), "section": .string(section), "items": [.string(item)],
        ])
    }

    /// J / K: moves the cursor's item one place down or up in its section (`reorder`), when its cell
    /// says it is reorderable; listd's refusal goes to the status line.
    func moveCursorItem(_ direction: Int) throws {
        guard let item = model.cursor, let path = model.cursorPath, let section = model.snapshot.sectionIdentifier(at: path.section),
            let items = try? model.snapshot.itemIdentifiers(inSection: section)
        else { return }
        guard model.cells[item]?["reorderable"] == true else {
            message = "\(TerminalText.name(item)) cannot be moved: its cell provider rule does not say reorderable"
            return
        }
        let target = path.item + direction
        guard target >= 0 && target < items.count else { return }
        try request([
            "cmd": "reorder", "view": .string(viewName), "item": .string(item),
            direction > 0 ? "afterItem" : "beforeItem": .string(items[target]),
        ])
    }

    func moveCursor(by delta: Int) { model.moveCursor(by: delta) }
    func moveCursorRow(_ direction: Int) { model.moveCursorRow(direction, in: model.layout()) }
    func moveCursorSideways(_ direction: Int) { model.moveCursorSideways(direction, in: model.layout()) }

    func page(_ direction: Int) {
        let layout = model.layout()
        model.top += direction * max(1, model.height - 1)
        model.clampScroll(layout)
        // The cursor goes to the first item now fully on screen.
        let visible = model.visibleElements(in: layout)
        if let first = visible.first(where: { if case .item = $0.kind { return $0.frame.y >= 0 } else { return false } }) {
            model.cursor = model.key(of: first)
        }
    }

    func jump(toEnd: Bool) {
        let layout = model.layout()
        model.top = toEnd ? layout.contentHeight : 0
        model.clampScroll(layout)
        let sections = model.snapshot.sectionIdentifiers
        let candidates = toEnd ? Array(sections.reversed()) : sections
        for section in candidates {
            guard let items = try? model.snapshot.itemIdentifiers(inSection: section), !items.isEmpty else { continue }
            model.cursor = toEnd ? items.last : items.first
            break
        }
    }

    func detach() {
        _ = try? connection.request(["cmd": "detach", "view": .string(viewName)])
    }
}
