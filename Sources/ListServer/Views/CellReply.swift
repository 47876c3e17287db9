import CellCore
import DiffableCore
import ListEngine
import ListStore
import ListWire

/// One cell in a reply or a `cellUpdated` event, written field by field.
struct CellReply {
    enum Position {
        case item(IndexPath, String)
        /// A section's supplementary view, or (with `item`) one anchored to an item.
        case supplementary(IndexPath, elementKind: String, section: String, item: String? = nil)
    }

    var id: String
    var position: Position
    var registration: String
    var reused: Bool
    var state: CellState
    /// The item's depth in its section's outline (UIKit's `indentationLevel` of a list cell); written when above 0.
    var indentationLevel = 0
    var configured: ConfiguredCell?
    var replacedWarning: String?
    /// A view may move the item (`reorder`): its cell provider rule says so.
    var reorderable = false
    var error: WireError?

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("cell")
        writer.string(id)
        switch position {
        case .item(let path, let item):
            writer.key("indexPath")
            writer.indexPath(path)
            writer.key("item")
            writer.string(item)
        case .supplementary(let path, let elementKind, let section, let item):
            writer.key("indexPath")
            writer.indexPath(path)
            writer.key("elementKind")
            writer.string(elementKind)
            writer.key("section")
            writer.string(section)
            if let item {
                writer.key("item")
                writer.string(item)
            }
        }
        writer.key("registration")
        writer.string(registration)
        if registration == DefaultPresentation.name {
            writer.key("defaultPresentation")
            writer.bool(true)
        }
        writer.key("reused")
        writer.bool(reused)
        if reorderable {
            writer.key("reorderable")
            writer.bool(true)
        }
        if let configured {
            writer.key("content")
            writer.value(configured.content)
            if !configured.background.isNull {
                writer.key("background")
                writer.value(configured.background)
            }
            if case .array(let accessories) = configured.accessories, !accessories.isEmpty {
                writer.key("accessories")
                writer.value(configured.accessories)
            }
        }
        writer.key("state")
        Self.writeState(state, to: &writer)
        if indentationLevel > 0 {
            writer.key("indentationLevel")
            writer.int(indentationLevel)
        }
        if let replacedWarning {
            writer.key("warnings")
            writer.beginArray()
            writer.beginObject()
            writer.key("code")
            writer.string("content-configuration-replaced")
            writer.key("message")
            writer.string(replacedWarning)
            writer.endObject()
            writer.endArray()
        }
        if let error {
            writer.key("error")
            writer.wireError(error)
        }
        writer.endObject()
    }

    /// Only the flags that are set, and the custom keys: `{}` for a cell in its default state.
    static func writeState(_ state: CellState, to writer: inout JSONWriter) {
        writer.beginObject()
        // One test per flag: no array of names per cell.
        func flag(_ name: StaticString, _ on: Bool) {
            guard on else { return }
            writer.key(literal: name)
            writer.bool(true)
        }
        flag("selected", state.selected)
        flag("highlighted", state.highlighted)
        flag("focused", state.focused)
        flag("disabled", state.disabled)
        flag("editing", state.editing)
        flag("expanded", state.expanded)
        flag("swiped", state.swiped)
        flag("reordering", state.reordering)
        if !state.custom.isEmpty {
            for key in state.custom.keys.sorted() {
                writer.key(key)
                writer.value(state.custom[key]!)
            }
        }
        writer.endObject()
    }
}
