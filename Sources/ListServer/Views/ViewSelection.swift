import ListEngine
import ListWire

/// The items selected in one view, in the order they were selected: UIKit's
/// `indexPathsForSelectedItems`, kept by item identifier so that it follows items as they move.
/// Cells show it (`state.selected`) whenever they are dequeued for a selected item, so a selection
/// outlives scrolling; `setState` changes it, and deleting an item deselects it.
struct ViewSelection {
    private(set) var items: [String] = []
    private var members: Set<String> = []

    var isEmpty: Bool { items.isEmpty }

    func contains(_ item: String) -> Bool { members.contains(item) }

    /// Selects or deselects `item`; returns whether that changed anything.
    mutating func set(_ item: String, selected: Bool) -> Bool {
        if selected {
            guard members.insert(item).inserted else { return false }
            items.append(item)
        } else {
            guard members.remove(item) != nil else { return false }
            items.removeAll { $0 == item }
        }
        return true
    }

    /// Deselects the items `keep` refuses; returns them, in selection order.
    mutating func removeAll(notIn keep: (String) -> Bool) -> [String] {
        let removed = items.filter { !keep($0) }
        guard !removed.isEmpty else { return [] }
        for item in removed { members.remove(item) }
        items.removeAll { !members.contains($0) }
        return removed
    }
}

extension DataSource {
    /// Tells the other views of this data source that follow selections (`attach` with
    /// `selectionEvents`) that `view`'s selection changed: a `selectionChanged` event each.
    func selectionChanged(in view: ViewSession, selected: [String], deselected: [String]) {
        guard !selected.isEmpty || !deselected.isEmpty else { return }
        for receiver in attachedViews where receiver.followsSelection && receiver !== view {
            receiver.connection.sendEvent(
                ViewEvent.selectionChanged(
                    dataSource: name, receiver: receiver.name, from: { view.writeSelection(to: &$0) }, selected: selected, deselected: deselected))
        }
    }

    /// Deselects, in every view, the items no longer in the snapshot (as UIKit does for deleted
    /// items), telling the views that follow selections.
    func pruneSelections() {
        for view in attachedViews where !view.selection.isEmpty {
            // What the view shows: a view with an expansion of its own keeps selected what it alone shows.
            let snapshot = view.snapshot(in: self)
            let removed = view.selection.removeAll { snapshot.contains(item: $0) }
            selectionChanged(in: view, selected: [], deselected: removed)
        }
    }
}

extension ViewSession {
    /// `{view, user, items}`: this view's selection as `selectionChanged` and `attach` report it.
    func writeSelection(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("view")
        writer.string(name)
        writer.key("user")
        writer.string(connection.identity.displayName)
        writer.key("items")
        writer.strings(selection.items)
        writer.endObject()
    }

    /// A cell for `key` from `registration`'s pool (`ViewCells.obtain`), its `selected` state set from
    /// this view's selection when it shows an item.
    func obtainCell(registration: String, for key: String) -> (id: String, reused: Bool) {
        let (id, reused, _) = cells.obtain(registration: registration, for: key)
        if !isSupplementaryKey(key), var state = cells.state(of: id), state.selected != selection.contains(key) {
            state.selected = selection.contains(key)
            cells.setState(state, of: id)
        }
        return (id, reused)
    }
}
