import DiffableCore

/// One snapshot edit's arguments, declared once: the wire command of that name (with the mutation's
/// target), an operation of `batch`, and a record of the stored log all read an edit through its
/// declaration (`EditCodec.decode`).
public protocol EditDeclaration: ArgumentGroup {
    /// The edit's name (the wire command's, and the stored record's `cmd`).
    static var kind: EditCodec.Kind { get }
    /// What the wire command does, for `describe`.
    static var summary: String { get }
    /// The documentation instance.
    init()
    /// The edit the arguments say (checks across arguments, such as a placement's two alternatives).
    func edit() throws(WireError) -> SnapshotEdit
}

public struct AppendSections: EditDeclaration {
    public static let kind = EditCodec.Kind.appendSections
    public static let summary = "Adds sections at the end (creates the data source if needed)."
    @Arg("Identifiers, or {id, data} objects.") public var sections: [Section]
    public init() {}
    public func edit() -> SnapshotEdit { .appendSections(sections) }
}

public struct InsertSections: EditDeclaration {
    public static let kind = EditCodec.Kind.insertSections
    public static let summary = "Inserts sections before or after an existing section."
    @Arg("Identifiers, or {id, data} objects.") public var sections: [Section]
    public var placement: SectionPlacement
    public init() { placement = SectionPlacement(verb: "Insert") }
    public func edit() throws(WireError) -> SnapshotEdit { .insertSections(sections, try placement.placement()) }
}

public struct DeleteSections: EditDeclaration {
    public static let kind = EditCodec.Kind.deleteSections
    public static let summary = "Deletes sections with their items; unknown ones are ignored with a warning."
    @Arg("Section identifiers.") public var sections: [String]
    public init() {}
    public func edit() -> SnapshotEdit { .deleteSections(sections) }
}

public struct MoveSection: EditDeclaration {
    public static let kind = EditCodec.Kind.moveSection
    public static let summary = "Moves a section before or after another."
    @Arg("The section to move.") public var section: String
    public var placement: SectionPlacement
    public init() { placement = SectionPlacement(verb: "Move") }
    public func edit() throws(WireError) -> SnapshotEdit { .moveSection(section, try placement.placement()) }
}

public struct ReloadSections: EditDeclaration {
    public static let kind = EditCodec.Kind.reloadSections
    public static let summary = "Reloads sections (views dequeue their cells again)."
    @Arg("Section identifiers.") public var sections: [String]
    public init() {}
    public func edit() -> SnapshotEdit { .reloadSections(sections) }
}

public struct UpdateSections: EditDeclaration {
    public static let kind = EditCodec.Kind.updateSections
    public static let summary = "Replaces section payloads; changed sections are reloaded."
    @Arg("{id, data} objects.") public var sections: [Section]
    public init() {}
    public func edit() -> SnapshotEdit { .updateSections(sections) }
}

public struct AppendItems: EditDeclaration {
    public static let kind = EditCodec.Kind.appendItems
    public static let summary = "Appends items to a section, or to the last section; existing items are moved there with a warning."
    @Arg("Identifiers, or {id, data} objects.") public var items: [Item]
    @Arg("The section; the last one when absent.") public var toSection: String?
    public init() {}
    public func edit() -> SnapshotEdit { .appendItems(items, toSection: toSection) }
}

public struct InsertItems: EditDeclaration {
    public static let kind = EditCodec.Kind.insertItems
    public static let summary = "Inserts items before or after an existing item, in its section."
    @Arg("Identifiers, or {id, data} objects.") public var items: [Item]
    public var placement: ItemPlacement
    public init() { placement = ItemPlacement(verb: "Insert") }
    public func edit() throws(WireError) -> SnapshotEdit { .insertItems(items, try placement.placement()) }
}

public struct DeleteItems: EditDeclaration {
    public static let kind = EditCodec.Kind.deleteItems
    public static let summary = "Deletes items; unknown ones are ignored with a warning."
    @Arg("Item identifiers.") public var items: [String]
    public init() {}
    public func edit() -> SnapshotEdit { .deleteItems(items) }
}

public struct DeleteAllItems: EditDeclaration {
    public static let kind = EditCodec.Kind.deleteAllItems
    public static let summary = "Deletes every item and every section (as UIKit does)."
    public init() {}
    public func edit() -> SnapshotEdit { .deleteAllItems }
}

public struct MoveItem: EditDeclaration {
    public static let kind = EditCodec.Kind.moveItem
    public static let summary = "Moves an item before or after another item, possibly into another section."
    @Arg("The item to move.") public var item: String
    public var placement: ItemPlacement
    public init() { placement = ItemPlacement(verb: "Move") }
    public func edit() throws(WireError) -> SnapshotEdit { .moveItem(item, try placement.placement()) }
}

public struct ReloadItems: EditDeclaration {
    public static let kind = EditCodec.Kind.reloadItems
    public static let summary = "Reloads items: views dequeue new cells for them."
    @Arg("Item identifiers.") public var items: [String]
    public init() {}
    public func edit() -> SnapshotEdit { .reloadItems(items) }
}

public struct ReconfigureItems: EditDeclaration {
    public static let kind = EditCodec.Kind.reconfigureItems
    public static let summary = "Reconfigures items: views configure the same cells again."
    @Arg("Item identifiers.") public var items: [String]
    public init() {}
    public func edit() -> SnapshotEdit { .reconfigureItems(items) }
}

public struct UpdateItems: EditDeclaration {
    public static let kind = EditCodec.Kind.updateItems
    public static let summary = "Replaces item payloads; items whose payload changed are reconfigured."
    @Arg("{id, data} objects.") public var items: [Item]
    public init() {}
    public func edit() -> SnapshotEdit { .updateItems(items) }
}

/// A stored record only (the outline commands' flat form): a section's items replaced.
public struct ReplaceItems: EditDeclaration {
    public static let kind = EditCodec.Kind.replaceItems
    public static let summary = "Replaces a section's items (stored records only)."
    @Arg("The section.") public var section: String
    @Arg("The items.") public var items: [Item]
    public init() {}
    public func edit() -> SnapshotEdit { .replaceItems(inSection: section, with: items) }
}

/// Where an edit puts items: before or after an existing item, exactly one of the two.
public struct ItemPlacement: ArgumentGroup {
    @Arg public var beforeItem: String?
    @Arg public var afterItem: String?

    /// The documentation instance; `verb` starts the summaries ("Insert", "Move").
    public init(verb: String) {
        _beforeItem = Arg("\(verb) before this item (or give afterItem).")
        _afterItem = Arg("\(verb) after this item.")
    }

    func placement() throws(WireError) -> Placement {
        try Placement.exactlyOne(before: beforeItem, after: afterItem, ArgumentName.beforeItem, ArgumentName.afterItem)
    }
}

/// Where an edit puts sections: before or after an existing section, exactly one of the two.
public struct SectionPlacement: ArgumentGroup {
    @Arg var beforeSection: String?
    @Arg var afterSection: String?

    /// The documentation instance; `verb` starts the summaries ("Insert", "Move").
    public init(verb: String) {
        _beforeSection = Arg("\(verb) before this section (or give afterSection).")
        _afterSection = Arg("\(verb) after this section.")
    }

    func placement() throws(WireError) -> Placement {
        try Placement.exactlyOne(before: beforeSection, after: afterSection, ArgumentName.beforeSection, ArgumentName.afterSection)
    }
}

extension Placement {
    /// The one of two alternative arguments that was given.
    static func exactlyOne(before: String?, after: String?, _ beforeName: some RawRepresentable<String>, _ afterName: some RawRepresentable<String>) throws(WireError) -> Placement {
        switch (before, after) {
        case (let destination?, nil): return .before(destination)
        case (nil, let destination?): return .after(destination)
        case (nil, nil):
            throw WireError(.invalidArgument, "Missing argument \"\(beforeName.rawValue)\" or \"\(afterName.rawValue)\".")
        default:
            throw WireError(.invalidArgument, "Give either \"\(beforeName.rawValue)\" or \"\(afterName.rawValue)\", not both.")
        }
    }
}

/// Something done with an edit's declaration, whatever its type: `EditCodec.Kind.visit` calls it with
/// the concrete type, so what it does is specialized for each edit rather than run through witness
/// tables (the wire commands of the edits are made this way).
public protocol EditDeclarationVisitor {
    associatedtype Result
    func visit<Declaration: EditDeclaration>(_ declaration: Declaration.Type) -> Result
}

extension EditCodec.Kind {
    /// What `visitor` makes of the declaration of the edit of this kind.
    @inlinable
    public func visit<Visitor: EditDeclarationVisitor>(_ visitor: Visitor) -> Visitor.Result {
        switch self {
        case .appendSections: visitor.visit(AppendSections.self)
        case .insertSections: visitor.visit(InsertSections.self)
        case .deleteSections: visitor.visit(DeleteSections.self)
        case .moveSection: visitor.visit(MoveSection.self)
        case .reloadSections: visitor.visit(ReloadSections.self)
        case .updateSections: visitor.visit(UpdateSections.self)
        case .appendItems: visitor.visit(AppendItems.self)
        case .insertItems: visitor.visit(InsertItems.self)
        case .deleteItems: visitor.visit(DeleteItems.self)
        case .deleteAllItems: visitor.visit(DeleteAllItems.self)
        case .moveItem: visitor.visit(MoveItem.self)
        case .reloadItems: visitor.visit(ReloadItems.self)
        case .reconfigureItems: visitor.visit(ReconfigureItems.self)
        case .updateItems: visitor.visit(UpdateItems.self)
        case .replaceItems: visitor.visit(ReplaceItems.self)
        }
    }

    /// The declaration of the edit of this kind.
    public var declaration: any EditDeclaration.Type { visit(DeclarationType()) }
}

/// The declaration's type itself.
private struct DeclarationType: EditDeclarationVisitor {
    func visit<Declaration: EditDeclaration>(_ declaration: Declaration.Type) -> any EditDeclaration.Type { declaration }
}
