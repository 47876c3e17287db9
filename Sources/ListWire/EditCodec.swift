import DiffableCore

/// The snapshot-edit vocabulary, read and written in one place: the router reads a request's edit with
/// it (each edit's arguments declared once, in `EditDeclarations.swift`), the stored log reads and
/// writes its records with it (a record reads like the request that made
/// it: `{"cmd":"appendItems","items":["a"]}`), so the two cannot drift apart.
public enum EditCodec {
    /// The edit commands, by name.
    public enum Kind: String, Sendable, CaseIterable {
        case appendSections, insertSections, deleteSections, moveSection, reloadSections, updateSections
        case appendItems, insertItems, deleteItems, deleteAllItems, moveItem, reloadItems, reconfigureItems, updateItems
        case replaceItems
    }

    /// Reads the edit command `name` from its arguments (a request's, or a stored record's members);
    /// `nil` when `name` is not an edit.
    public static func decode(_ name: String, _ arguments: inout Arguments) throws(WireError) -> SnapshotEdit? {
        guard let kind = Kind(rawValue: name) else { return nil }
        return try decode(kind, &arguments)
    }

    /// Reads an edit of `kind` from its arguments, through its declaration (`EditDeclaration`).
    public static func decode(_ kind: Kind, _ arguments: inout Arguments) throws(WireError) -> SnapshotEdit {
        try decode(kind.declaration, &arguments)
    }

    private static func decode<Declaration: EditDeclaration>(_ declaration: Declaration.Type, _ arguments: inout Arguments) throws(WireError)
        -> SnapshotEdit
    {
        try declaration.init(arguments: &arguments).edit()
    }

    /// Writes an edit's members, `cmd` first, inside an object the caller opened.
    public static func write(_ edit: SnapshotEdit, to writer: inout JSONWriter) {
        switch edit {
        case .appendSections(let sections):
            command("appendSections", &writer)
            identified("sections", sections.lazy.map { ($0.id, $0.data) }, &writer)
        case .insertSections(let sections, let placement):
            command("insertSections", &writer)
            identified("sections", sections.lazy.map { ($0.id, $0.data) }, &writer)
            self.placement(placement, "Section", &writer)
        case .deleteSections(let ids):
            command("deleteSections", &writer)
            strings("sections", ids, &writer)
        case .moveSection(let id, let placement):
            command("moveSection", &writer)
            writer.key("section")
            writer.string(id)
            self.placement(placement, "Section", &writer)
        case .reloadSections(let ids):
            command("reloadSections", &writer)
            strings("sections", ids, &writer)
        case .updateSections(let sections):
            command("updateSections", &writer)
            identified("sections", sections.lazy.map { ($0.id, $0.data) }, &writer)
        case .appendItems(let items, let section):
            command("appendItems", &writer)
            identified("items", items.lazy.map { ($0.id, $0.data) }, &writer)
            if let section {
                writer.key("toSection")
                writer.string(section)
            }
        case .insertItems(let items, let placement):
            command("insertItems", &writer)
            identified("items", items.lazy.map { ($0.id, $0.data) }, &writer)
            self.placement(placement, "Item", &writer)
        case .deleteItems(let ids):
            command("deleteItems", &writer)
            strings("items", ids, &writer)
        case .deleteAllItems:
            command("deleteAllItems", &writer)
        case .moveItem(let id, let placement):
            command("moveItem", &writer)
            writer.key("item")
            writer.string(id)
            self.placement(placement, "Item", &writer)
        case .reloadItems(let ids):
            command("reloadItems", &writer)
            strings("items", ids, &writer)
        case .reconfigureItems(let ids):
            command("reconfigureItems", &writer)
            strings("items", ids, &writer)
        case .updateItems(let items):
            command("updateItems", &writer)
            identified("items", items.lazy.map { ($0.id, $0.data) }, &writer)
        case .replaceItems(let section, let items):
            command("replaceItems", &writer)
            writer.key("section")
            writer.string(section)
            identified("items", items.lazy.map { ($0.id, $0.data) }, &writer)
        }
    }

    /// `"cmd": name`.
    public static func command(_ name: String, _ writer: inout JSONWriter) {
        writer.key("cmd")
        writer.string(name)
    }

    /// `"before<Kind>"` or `"after<Kind>"` with the destination.
    static func placement(_ placement: Placement, _ kind: String, _ writer: inout JSONWriter) {
        switch placement {
        case .before(let id):
            writer.key("before" + kind)
            writer.string(id)
        case .after(let id):
            writer.key("after" + kind)
            writer.string(id)
        }
    }

    /// A list of identifiers.
    public static func strings(_ key: String, _ values: [String], _ writer: inout JSONWriter) {
        writer.key(key)
        writer.beginArray()
        for value in values { writer.string(value) }
        writer.endArray()
    }

    /// Sections or items: a bare identifier when there is no payload, else `{id, data}`.
    public static func identified(_ key: String, _ entries: some Sequence<(String, JSONValue)>, _ writer: inout JSONWriter) {
        writer.key(key)
        writer.beginArray()
        for (id, data) in entries { writer.identified(id, data: data) }
        writer.endArray()
    }
}
