import DiffableCore
import Foundation
import ListViewCore
import ListWire

/// How `listctl watch` prints events for a person: a time and the version per event, then one line per
/// kind of change in each stage, every line cut to the terminal's width (`… +N` says how much was left
/// out), so that it reads well in a narrow pane beside `listview`.
///
/// ```
/// 07:22:01 v2
///   1 delete          [0,1] milk, [0,2] eggs, [0,3] tea
///   2 reconfigure     [0,0] smileys, [0,2] food
/// ```
struct WatchOutput {
    /// The widest a line may be, in terminal columns; `nil` for no limit.
    var width: Int?

    /// The lines for one event (a `changes`, `layoutChanged`, `cellUpdated`, `dropped`, `overflow` or
    /// `shutdown` event; anything else is shown as its JSON).
    ///
    /// `snapshot` is the data source as the watch last saw it (from `attach`): a `changes` event is
    /// applied to it stage by stage (`lines(forChanges:heading:snapshot:)`), so that the items and
    /// sections a stage names only by position (deletes, moves, reloads) are printed with their
    /// identifiers; `nil` after changes that do not fit it, until the next attach.
    func lines(for event: JSONValue, snapshot: inout Snapshot?) -> [String] {
        let time = Self.clock(Date())
        switch event["event"]?.stringValue {
        case "changes":
            return lines(forChanges: event["changes"] ?? [:], heading: "\(time) v\(event["version"]?.intValue ?? 0)", snapshot: &snapshot)
        case "layoutChanged":
            return [fit("\(time) v\(Output.cell(event["version"])) layout: " + Self.summary(ofLayout: event["layout"] ?? .null))]
        case "cellUpdated":
            let cell = event["cell"] ?? [:]
            let place = cell["item"]?.stringValue ?? cell["elementKind"]?.stringValue ?? ""
            return [fit("\(time) cell \(Output.cell(cell["cell"])) updated: \(TerminalText.name(place))")]
        case "selectionChanged":
            let from = event["from"] ?? [:]
            let changed = (event["selected"]?.arrayValue ?? []).map { "+" + ($0.stringValue ?? "") }
                + (event["deselected"]?.arrayValue ?? []).map { "-" + ($0.stringValue ?? "") }
            return [fitList(prefix: "\(time) " + Self.selectionOwner(from) + ": ", changed)]
                + [fitList(prefix: "  selected now: ", Self.selectedItems(from))]
        case "display":
            let view = TerminalText.name(event["view"]?.stringValue ?? "")
            var lines: [String] = []
            let shown = (event["willDisplay"]?.arrayValue ?? []).compactMap(\.stringValue)
            let soon = (event["prefetch"]?.arrayValue ?? []).compactMap(\.stringValue)
            if !shown.isEmpty { lines.append(fitList(prefix: "\(time) view \(view) will display: ", shown)) }
            if !soon.isEmpty { lines.append(fitList(prefix: "\(time) view \(view) prefetches: ", soon)) }
            if let more = event["more"]?.intValue { lines.append(fit("  and \(more) more")) }
            return lines
        case "dropped":
            snapshot = nil
            return [fit("\(time) dropped: the data source is gone")]
        case "overflow" where event["watch"] == "display":
            return [fit("\(time) overflow: display signals fell behind (more than \(Output.cell(event["limit"])) bytes unread); watching them again")]
        case "overflow":
            return [fit("\(time) overflow: this view fell behind (more than \(Output.cell(event["limit"])) bytes unread); listd closed the connection, watch again")]
        case "shutdown":
            return [fit("\(time) shutdown: listd is stopping")]
        default:
            return [fit("\(time) " + String(decoding: event.jsonBytes, as: UTF8.self))]
        }
    }

    /// The lines for a `changes` object (an event's, or a mutation's reply's): `heading`, with "reload
    /// everything" and "without animation" when so, then one line per kind of change in each stage,
    /// every item and section named (`entries(of:before:)`), or "no changes".
    ///
    /// `snapshot` is the data source before the changes: each stage is applied to it in turn, so that
    /// the next stage's positions are named from the data source as it then is. It becomes `nil` when a
    /// stage does not fit it or the changes replace everything (`reloadData`); from then on, positions
    /// only. The caller keeps it for the next changes (watch) or drops it (a mutation's reply).
    func lines(forChanges json: JSONValue, heading: String, snapshot: inout Snapshot?) -> [String] {
        guard let changes = try? WireDecoding.changes(json) else {
            snapshot = nil
            return [fit(heading + " (changes listctl cannot read)")]
        }
        let reloadData = json["reloadData"] == true
        // Everything changed at once, without stages saying how: names unknown from here on.
        if reloadData { snapshot = nil }
        let still = json["animatingDifferences"] == false
        var lines = [fit(heading + (reloadData ? " reload everything" : "") + (still ? " without animation" : ""))]
        for (number, stage) in changes.stages.enumerated() {
            for (label, entries) in Self.entries(of: stage, before: snapshot) {
                lines.append(fitList(prefix: "  \(number + 1) " + label.padding(toLength: 16, withPad: " ", startingAt: 0), entries))
            }
            do { try snapshot?.apply(StagedChanges(stages: [stage])) } catch { snapshot = nil }
        }
        if changes.stages.isEmpty && !reloadData { lines.append("  no changes") }
        return lines
    }

    /// The snapshot in a reply's `sections` (`attach`'s, `snapshot`'s); `nil` when it has none readable.
    static func snapshot(in result: JSONValue) -> Snapshot? {
        guard let sections = try? WireDecoding.snapshot(["sections": result["sections"] ?? []], field: "sections") else { return nil }
        return try? Snapshot(sections)
    }

    /// The lines for the other views' selections when the watch starts (`attach`'s `selections`).
    func lines(forSelections selections: JSONValue?) -> [String] {
        (selections?.arrayValue ?? []).map { fitList(prefix: Self.selectionOwner($0) + ": ", Self.selectedItems($0)) }
    }

    /// "selection of view v1 (alice)" for a `{view, user, items}`.
    static func selectionOwner(_ selection: JSONValue) -> String {
        "selection of view \(TerminalText.name(selection["view"]?.stringValue ?? "?")) (\(TerminalText.name(selection["user"]?.stringValue ?? "?")))"
    }

    static func selectedItems(_ selection: JSONValue) -> [String] {
        let items = (selection["items"]?.arrayValue ?? []).map { $0.stringValue ?? "" }
        return items.isEmpty ? ["(none)"] : items
    }

    /// `text` with its control, invisible and direction-changing characters shown visibly
    /// (`Output.shown`), cut to the width.
    func fit(_ text: String) -> String {
        let text = Output.shown(text)
        guard let width, TerminalWidth.of(text) > width else { return text }
        return TerminalWidth.truncate(text, to: width)
    }

    /// `prefix` and as many `entries` as fit, then `… +N` for the rest.
    func fitList(prefix: String, _ entries: [String]) -> String {
        let prefix = Output.shown(prefix)
        let entries = entries.map { TerminalText.name($0) }  // item and section names (lookalikes too)
        guard let width else { return prefix + entries.joined(separator: ", ") }
        var line = prefix
        var used = TerminalWidth.of(prefix)
        for (index, entry) in entries.enumerated() {
            let separator = index == 0 ? "" : ", "
            let remaining = entries.count - index - 1
            let addition = TerminalWidth.of(separator) + TerminalWidth.of(entry)
            let more = remaining > 0 ? TerminalWidth.of(", … +\(remaining)") : 0
            if used + addition + more > width {
                let rest = entries.count - index
                return fit(line + (index == 0 ? "… \(rest)" : ", … +\(rest)"))
            }
            line += separator + entry
            used += addition
        }
        return line
    }

    /// Each kind of change in a stage with its entries, in the order a view applies them, every item and
    /// section with its identifier: inserts and reconfigures carry theirs; deletes, moves and reloads
    /// (positions before the stage) take theirs from `before`, the snapshot before the stage, when given.
    static func entries(of stage: ChangeStage, before: Snapshot? = nil) -> [(String, [String])] {
        func path(_ indexPath: DiffableCore.IndexPath) -> String { "[\(indexPath.section),\(indexPath.item)]" }
        func named(_ text: String, _ id: String?) -> String { id.map { text + " " + $0 } ?? text }
        func item(at indexPath: DiffableCore.IndexPath) -> String? { before?.item(at: indexPath)?.id }
        func section(at index: Int) -> String? { before?.sectionIdentifier(at: index) }
        let all: [(String, [String])] = [
            ("delete section", stage.sectionDeletes.map { named(String($0), section(at: $0)) }),
            ("insert section", stage.sectionInserts.map { "\($0.index) \($0.section.id) (\($0.items.count) item\($0.items.count == 1 ? "" : "s"))" }),
            ("move section", stage.sectionMoves.map { named("\($0.from)→\($0.to)", section(at: $0.from)) }),
            ("reload section", stage.sectionReloads.map { named(String($0.index), section(at: $0.index)) }),
            ("delete", stage.itemDeletes.map { named(path($0), item(at: $0)) }),
            ("insert", stage.itemInserts.map { "\(path($0.indexPath)) \($0.item.id)" }),
            ("move", stage.itemMoves.map { named("\(path($0.from))→\(path($0.to))", item(at: $0.from)) }),
            ("reload", stage.itemReloads.map { named(path($0.indexPath), item(at: $0.indexPath)) }),
            ("reconfigure", stage.itemReconfigures.map { "\(path($0.indexPath)) \($0.item.id)" }),
        ]
        return all.filter { !$0.1.isEmpty }
    }

    /// A layout in a few words: the default, then each section's, e.g.
    /// `insetGrouped list; company band (groupPaging), expert grid`.
    static func summary(ofLayout layout: JSONValue) -> String {
        func kind(_ section: JSONValue) -> String {
            if let list = section["list"] { return "\(list["appearance"]?.stringValue ?? "plain") list" }
            if let behaviour = section["orthogonalScrollingBehavior"]?.stringValue, behaviour != "none" { return "band (\(behaviour))" }
            return "grid"
        }
        var text = layout["default"].map(kind) ?? "plain list"
        if case .object(let sections)? = layout["sections"], !sections.isEmpty {
            text += "; " + sections.keys.sorted().map { "\($0) \(kind(sections[$0]!))" }.joined(separator: ", ")
        }
        return text
    }

    /// The local time of day, `HH:MM:SS`.
    static func clock(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// The terminal's width when standard output is one.
    static func terminalWidth() -> Int? {
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
