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
///   1 delete          [0,1], [0,2], [0,3]
///   2 reconfigure     [0,0] smileys, [0,2] food
/// ```
struct WatchOutput {
    /// The widest a line may be, in terminal columns; `nil` for no limit.
    var width: Int?

    /// The lines for one event (a `changes`, `layoutChanged`, `cellUpdated`, `dropped`, `overflow` or
    /// `shutdown` event; anything else is shown as its JSON).
    func lines(for event: JSONValue) -> [String] {
        let time = Self.clock(Date())
        switch event["event"]?.stringValue {
        case "changes":
            let version = event["version"]?.intValue ?? 0
            guard let changes = try? WireDecoding.changes(event["changes"] ?? [:]) else {
                return [fit("\(time) v\(version) (changes listctl cannot read)")]
            }
            let reloadData = event["changes"]?["reloadData"] == true
            let still = event["changes"]?["animatingDifferences"] == false
            var lines = [fit("\(time) v\(version)" + (reloadData ? " reload everything" : "") + (still ? " without animation" : ""))]
            for (number, stage) in changes.stages.enumerated() {
                for (label, entries) in Self.entries(of: stage) {
                    lines.append(fitList(prefix: "  \(number + 1) " + label.padding(toLength: 16, withPad: " ", startingAt: 0), entries))
                }
            }
            if changes.stages.isEmpty && !reloadData { lines.append("  no changes") }
            return lines
        case "layoutChanged":
            return [fit("\(time) v\(Output.cell(event["version"])) layout: " + Self.summary(ofLayout: event["layout"] ?? .null))]
        case "cellUpdated":
            let cell = event["cell"] ?? [:]
            let place = cell["item"]?.stringValue ?? cell["elementKind"]?.stringValue ?? ""
            return [fit("\(time) cell \(Output.cell(cell["cell"])) updated: \(place)")]
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
            return [fit("\(time) dropped: the data source is gone")]
        case "overflow":
            return [fit("\(time) overflow: this view fell behind (more than \(Output.cell(event["limit"])) bytes unread); listd closed the connection, watch again")]
        case "shutdown":
            return [fit("\(time) shutdown: listd is stopping")]
        default:
            return [fit("\(time) " + String(decoding: event.jsonBytes, as: UTF8.self))]
        }
    }

    /// The lines for the other views' selections when the watch starts (`attach`'s `selections`).
    func lines(forSelections selections: JSONValue?) -> [String] {
        (selections?.arrayValue ?? []).map { fitList(prefix: Self.selectionOwner($0) + ": ", Self.selectedItems($0)) }
    }

    /// "selection of view v1 (alice)" for a `{view, user, items}`.
    static func selectionOwner(_ selection: JSONValue) -> String {
        "selection of view \(selection["view"]?.stringValue ?? "?") (\(selection["user"]?.stringValue ?? "?"))"
    }

    static func selectedItems(_ selection: JSONValue) -> [String] {
        let items = (selection["items"]?.arrayValue ?? []).map { $0.stringValue ?? "" }
        return items.isEmpty ? ["(none)"] : items
    }

    /// `text` cut to the width.
    /// `text` with its control characters shown visibly (`TerminalText`), cut to the width.
    func fit(_ text: String) -> String {
        let text = TerminalText.visible(text)
        guard let width, TerminalWidth.of(text) > width else { return text }
        return TerminalWidth.truncate(text, to: width)
    }

    /// `prefix` and as many `entries` as fit, then `… +N` for the rest.
    func fitList(prefix: String, _ entries: [String]) -> String {
        let prefix = TerminalText.visible(prefix)
        let entries = entries.map { TerminalText.visible($0) }
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

    /// Each kind of change in a stage with its entries, in the order a view applies them.
    static func entries(of stage: ChangeStage) -> [(String, [String])] {
        func path(_ indexPath: DiffableCore.IndexPath) -> String { "[\(indexPath.section),\(indexPath.item)]" }
        let all: [(String, [String])] = [
            ("delete section", stage.sectionDeletes.map(String.init)),
            ("insert section", stage.sectionInserts.map { "\($0.index) \($0.section.id) (\($0.items.count) items)" }),
            ("move section", stage.sectionMoves.map { "\($0.from)→\($0.to)" }),
            ("reload section", stage.sectionReloads.map { "\($0.index)" }),
            ("delete", stage.itemDeletes.map { path($0) }),
            ("insert", stage.itemInserts.map { "\(path($0.indexPath)) \($0.item.id)" }),
            ("move", stage.itemMoves.map { "\(path($0.from))→\(path($0.to))" }),
            ("reload", stage.itemReloads.map { "\(path($0.indexPath)) \($0.item.id)" }),
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
