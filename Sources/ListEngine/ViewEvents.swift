import DiffableCore
import ListStore
import ListWire

/// Every event listd sends to views, built here and only here (one line each, without its newline).
/// `ConnectionHandler.sendEvent` delivers them all: it applies the view queue limit
/// (`maxViewQueueBytes`) and counts what it delivers in `stats` (`events.sent`).
public enum ViewEvent {
    /// `{"event":"changes","dataSource":…,"version":…,"changes":…}`: a committed change (encoded once:
    /// written to every view, retained for resuming, stored). `changesJSON` is the encoded `changes`
    /// object, shared with the reply to the change.
    ///
    /// With `view`: the line of one view that shows an expansion of its own (`ViewExpansion`), whose
    /// changes are its own.
    public static func changes(dataSource: String, version: Int, changesJSON: [UInt8], view: String? = nil) -> [UInt8] {
        changesLine("changes", dataSource: dataSource, view: view, version: version, changesJSON: changesJSON)
    }

    /// `{"event":"expansionChanged","dataSource":…,"view":…,"version":…,"changes":…}`: the view expanded or
    /// collapsed outline items in its own view (`expandInView`, `collapseInView`); `changes` turn what it
    /// showed into what it shows now, at the same version (no other view sees them).
    public static func expansionChanged(dataSource: String, view: String, version: Int, changesJSON: [UInt8]) -> [UInt8] {
        changesLine("expansionChanged", dataSource: dataSource, view: view, version: version, changesJSON: changesJSON)
    }

    /// `{"event":"changes","dataSource":…,"version":…,"changes":…}` with `changes` encoded in place, and
    /// where in the line they are.
    public static func changes(
        dataSource: String, version: Int, _ changes: StagedChanges, reloadData: Bool, animatingDifferences: Bool
    ) -> (line: [UInt8], changes: Range<Int>) {
        var writer = JSONWriter(capacity: dataSource.utf8.count + 64 + JSONWriter.estimatedBytes(of: changes))
        writer.beginObject()
        writer.key(literal: "event")
        writer.string("changes")
        writer.key(literal: "dataSource")
        writer.string(dataSource)
        writer.key(literal: "version")
        writer.int(version)
        writer.key(literal: "changes")
        let start = writer.count
        writer.changes(changes, reloadData: reloadData, animatingDifferences: animatingDifferences)
        let end = writer.count
        writer.endObject()
        return (writer.bytes, start..<end)
    }

    /// `{"event":…,"dataSource":…,"view"?:…,"version":…,"changes":…}`.
    private static func changesLine(_ event: String, dataSource: String, view: String?, version: Int, changesJSON: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: changesJSON.count + dataSource.utf8.count + (view?.utf8.count ?? 0) + 80)
        writer.beginObject()
        writer.key(literal: "event")
        writer.string(event)
        writer.key(literal: "dataSource")
        writer.string(dataSource)
        if let view {
            writer.key(literal: "view")
            writer.string(view)
        }
        writer.key(literal: "version")
        writer.int(version)
        writer.key(literal: "changes")
        writer.raw(changesJSON)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event":"layoutChanged","dataSource":…,"version":…,"layout":…}`.
    public static func layoutChanged(dataSource: String, version: Int, layout: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.key("event")
        writer.string("layoutChanged")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("version")
        writer.int(version)
        writer.key("layout")
        writer.value(layout)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event":"cellUpdated","dataSource":…,"view":…,"cell":…}`: a displayed cell configured again
    /// (a plugin's late answer, a state change).
    /// `cell` writes the cell object.
    public static func cellUpdated(dataSource: String, view: String, cell: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.key("event")
        writer.string("cellUpdated")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("view")
        writer.string(view)
        writer.key("cell")
        cell(&writer)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event":"selectionChanged","dataSource":…,"view":…,"from":{view, user, items},"selected":…,"deselected":…}`
    /// for the view `receiver`, about the selection of the view `from` writes.
    public static func selectionChanged(
        dataSource: String, receiver: String, from: (inout JSONWriter) -> Void, selected: [String], deselected: [String]
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("event")
        writer.string("selectionChanged")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("view")
        writer.string(receiver)
        writer.key("from")
        from(&writer)
        writer.key("selected")
        writer.strings(selected)
        writer.key("deselected")
        writer.strings(deselected)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event":"dropped","dataSource":…,"view":…,"reason"?:…}`: the view's data source was dropped (or,
    /// with `reason`, e.g. `access`, why else it is no longer served).
    public static func dropped(dataSource: String, view: String, reason: String?) -> [UInt8] {
        var event: [String: JSONValue] = ["event": "dropped", "dataSource": .string(dataSource), "view": .string(view)]
        if let reason { event["reason"] = .string(reason) }
        return JSONValue.object(event).jsonBytes
    }

    /// What happened to a registration a `registrationChanged` event names.
    public enum RegistrationChange: String, Sendable {
        case created, deleted, replaced
    }

    /// `{"event":"registrationChanged","dataSource":…,"view":…,"registration":…,"change":"created"|"deleted"|"replaced"}`:
    /// a registration the data source's cell or supplementary provider names was made, deleted or given
    /// another definition; the view's cells of it (or its error cells for it) are to be dequeued again.
    public static func registrationChanged(dataSource: String, view: String, registration: String, change: RegistrationChange) -> [UInt8] {
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.key("event")
        writer.string("registrationChanged")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("view")
        writer.string(view)
        writer.key("registration")
        writer.string(registration)
        writer.key("change")
        writer.string(change.rawValue)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event":"overflow","limit":…}`: the connection's views fell `limit` bytes behind and are cut.
    public static func overflow(limit: Int) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("event")
        writer.string("overflow")
        writer.key("limit")
        writer.int(limit)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event": "display", "dataSource", "view", "willDisplay", "prefetch", "more"?}`: what a view will
    /// display and is about to, for the connections that watch (`more`: items past the view's signal rate).
    public static func display(dataSource: String, view: String, willDisplay: [String], prefetch: [String], more: Int = 0) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.key("event")
        writer.string("display")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("view")
        writer.string(view)
        writer.key("willDisplay")
        writer.strings(willDisplay)
        writer.key("prefetch")
        writer.strings(prefetch)
        if more > 0 {
            writer.key("more")
            writer.int(more)
        }
        writer.endObject()
        return writer.bytes
    }

    /// `{"event": "overflow", "dataSource", "watch": "display", "limit"}`: a display watch fell `limit`
    /// bytes behind and stopped.
    public static func displayWatchOverflow(dataSource: String, limit: Int) -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.key("event")
        writer.string("overflow")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("watch")
        writer.string("display")
        writer.key("limit")
        writer.int(limit)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event": "didReorder", "dataSource", "view", "user", "item", "version", "changes"}`: the owner's
    /// `reorderingHandlers.didReorder`, once a view's reorder is stored.
    public static func didReorder(dataSource: String, view: String, user: String, item: String, version: Int, changes: ArraySlice<UInt8>) -> [UInt8] {
        var writer = JSONWriter(capacity: 160 + changes.count)
        writer.beginObject()
        writer.key("event")
        writer.string("didReorder")
        writer.key("dataSource")
        writer.string(dataSource)
        writer.key("view")
        writer.string(view)
        writer.key("user")
        writer.string(user)
        writer.key("item")
        writer.string(item)
        writer.key("version")
        writer.int(version)
        writer.key("changes")
        writer.raw(changes)
        writer.endObject()
        return writer.bytes
    }

    /// `{"event":"shutdown"}`: listd is stopping.
    public static let shutdown = Array(#"{"event":"shutdown"}"#.utf8)
}
