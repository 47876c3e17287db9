import ArgumentParser
import DiffableCore
import ListWire

/// listctl's snapshot-edit subcommands (`append-items DS a b`, `move-section DS s --before t`, …), from
/// one table. Each row names the edit it sends (`EditCodec.Kind`), the form of its arguments and its
/// help; the subcommand builds the `SnapshotEdit` and writes it with `EditCodec`, the codec the router
/// reads requests with and the stored log keeps changes in.
enum EditTable {
    struct Row {
        let kind: EditCodec.Kind
        /// The subcommand: its generic form (`ListEdit`, `PlacedListEdit`, `PlacedMove`) says what follows
        /// the data source; its tag only tells the subcommands apart.
        let command: ParsableCommand.Type
        let abstract: String
        /// The help of the identifiers or elements.
        let help: String
    }

    /// Every edit subcommand, in `listctl --help`'s order.
    static let rows: [Row] = [
        Row(kind: .appendSections, command: ListEdit<AppendSectionsTag>.self, abstract: "Append sections (id or id=JSON).", help: "Sections."),
        Row(
            kind: .insertSections, command: PlacedListEdit<InsertSectionsTag>.self, abstract: "Insert sections before or after a section.",
            help: "Sections."),
        Row(kind: .deleteSections, command: ListEdit<DeleteSectionsTag>.self, abstract: "Delete sections with their items.", help: "Sections."),
        Row(kind: .moveSection, command: PlacedMove<MoveSectionTag>.self, abstract: "Move a section before or after another.", help: "The section."),
        Row(kind: .reloadSections, command: ListEdit<ReloadSectionsTag>.self, abstract: "Reload sections.", help: "Sections."),
        Row(
            kind: .updateSections, command: ListEdit<UpdateSectionsTag>.self, abstract: "Replace section payloads (id=JSON).",
            help: "Sections as id=JSON."),
        Row(kind: .appendItems, command: AppendItems.self, abstract: "Append items (id or id=JSON) to a section or the last one.", help: "Items."),
        Row(kind: .insertItems, command: PlacedListEdit<InsertItemsTag>.self, abstract: "Insert items before or after an item.", help: "Items."),
        Row(kind: .deleteItems, command: ListEdit<DeleteItemsTag>.self, abstract: "Delete items.", help: "Items."),
        Row(kind: .deleteAllItems, command: DeleteAll.self, abstract: "Delete every item and section.", help: ""),
        Row(kind: .moveItem, command: PlacedMove<MoveItemTag>.self, abstract: "Move an item before or after another item.", help: "The item."),
        Row(kind: .reloadItems, command: ListEdit<ReloadItemsTag>.self, abstract: "Reload items (new cells).", help: "Items."),
        Row(kind: .reconfigureItems, command: ListEdit<ReconfigureItemsTag>.self, abstract: "Reconfigure items (the same cells).", help: "Items."),
        Row(kind: .updateItems, command: ListEdit<UpdateItemsTag>.self, abstract: "Replace item payloads (id=JSON).", help: "Items as id=JSON."),
    ]

    /// The help of a subcommand's identifiers or elements, named `<sections>`, `<items>`, `<section>` or `<item>`.
    static func argumentHelp(_ command: ParsableCommand.Type, plural: Bool) -> ArgumentHelp {
        let row = row(of: command)
        let noun = row.kind.rawValue.hasSuffix("Section") || row.kind.rawValue.hasSuffix("Sections") ? "section" : "item"
        return ArgumentHelp(row.help, valueName: plural ? noun + "s" : noun)
    }

    /// The subcommands, in the table's order.
    static var subcommands: [ParsableCommand.Type] { rows.map(\.command) }

    /// The row of the subcommand `command`.
    static func row(of command: ParsableCommand.Type) -> Row { rows.first { ObjectIdentifier($0.command) == ObjectIdentifier(command) }! }


    /// The subcommand's name: the command's, in kebab case (`appendItems` → `append-items`).
    static func commandName(_ kind: EditCodec.Kind) -> String {
        kind.rawValue.reduce(into: "") { name, character in
            if character.isUppercase { name += "-" + character.lowercased() } else { name.append(character) }
        }
    }

    static func configuration(_ command: ParsableCommand.Type) -> CommandConfiguration {
        let row = row(of: command)
        return CommandConfiguration(commandName: commandName(row.kind), abstract: row.abstract)
    }

    /// The edit of `kind` the arguments describe.
    static func edit(_ kind: EditCodec.Kind, _ arguments: [String], placement: Placement? = nil, toSection: String? = nil) throws -> SnapshotEdit {
        func items() throws -> [Item] { try arguments.map { Item(try identified($0)) } }
        func sections() throws -> [Section] { try arguments.map { Section(try identified($0)) } }
        func placed() throws -> DiffableCore.Placement {
            guard let placement else { throw ValidationError("Give exactly one of --before and --after.") }
            return try placement.placement()
        }
        switch kind {
        case .appendSections: return .appendSections(try sections())
        case .insertSections: return .insertSections(try sections(), try placed())
        case .deleteSections: return .deleteSections(arguments)
        case .moveSection: return .moveSection(arguments[0], try placed())
        case .reloadSections: return .reloadSections(arguments)
        case .updateSections: return .updateSections(try sections())
        case .appendItems: return .appendItems(try items(), toSection: toSection)
        case .insertItems: return .insertItems(try items(), try placed())
        case .deleteItems: return .deleteItems(arguments)
        case .deleteAllItems: return .deleteAllItems
        case .moveItem: return .moveItem(arguments[0], try placed())
        case .reloadItems: return .reloadItems(arguments)
        case .reconfigureItems: return .reconfigureItems(arguments)
        case .updateItems: return .updateItems(try items())
        case .replaceItems: throw ValidationError("replaceItems is not a listctl subcommand.")
        }
    }

    /// An `id` or `id=JSON` argument as an identifier and its payload.
    private static func identified(_ argument: String) throws -> (id: String, data: JSONValue) {
        let value = try element(argument)
        if case .string(let id) = value { return (id, .null) }
        return (value["id"]?.stringValue ?? "", value["data"] ?? .null)
    }

    /// Sends the edit to the target data source and prints the mutation's result.
    static func send(_ edit: SnapshotEdit, to target: MutationTarget, on connection: Connection) throws {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        EditCodec.write(edit, to: &writer)
        writer.endObject()
        guard case .object(let members) = try JSONParser.parse(writer.bytes) else { return }
        try NamedMutation.send(.object(target.members(members)), on: connection)
    }
}

extension Item {
    fileprivate init(_ identified: (id: String, data: JSONValue)) { self.init(identified.id, data: identified.data) }
}

extension Section {
    fileprivate init(_ identified: (id: String, data: JSONValue)) { self.init(identified.id, data: identified.data) }
}

extension Placement {
    /// `--before` or `--after` (exactly one) as the core's placement.
    fileprivate func placement() throws -> DiffableCore.Placement {
        switch (before, after) {
        case (let before?, nil): return .before(before)
        case (nil, let after?): return .after(after)
        default: throw ValidationError("Give exactly one of --before and --after.")
        }
    }
}

/// Identifiers or elements after the data source (`Form.identifiers`, `.elements`).
struct ListEdit<Tag>: ParsableCommand {
    static var configuration: CommandConfiguration { EditTable.configuration(Self.self) }
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Argument(help: EditTable.argumentHelp(Self.self, plural: true)) var elements: [String]
    func run() throws { try EditTable.send(EditTable.edit(EditTable.row(of: Self.self).kind, elements), to: target, on: connection) }
}

/// Elements placed before or after an existing one (`Form.placedElements`).
struct PlacedListEdit<Tag>: ParsableCommand {
    static var configuration: CommandConfiguration { EditTable.configuration(Self.self) }
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @OptionGroup var placement: Placement
    @Argument(help: EditTable.argumentHelp(Self.self, plural: true)) var elements: [String]
    func run() throws { try EditTable.send(EditTable.edit(EditTable.row(of: Self.self).kind, elements, placement: placement), to: target, on: connection) }
}

/// One identifier placed before or after another (`Form.placedOne`).
struct PlacedMove<Tag>: ParsableCommand {
    static var configuration: CommandConfiguration { EditTable.configuration(Self.self) }
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @OptionGroup var placement: Placement
    @Argument(help: EditTable.argumentHelp(Self.self, plural: false)) var element: String
    func run() throws { try EditTable.send(EditTable.edit(EditTable.row(of: Self.self).kind, [element], placement: placement), to: target, on: connection) }
}

/// `append-items` (`Form.elementsToSection`).
struct AppendItems: ParsableCommand {
    static var configuration: CommandConfiguration { EditTable.configuration(Self.self) }
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    @Option(help: "The section (default: the last one).") var toSection: String?
    @Argument(help: EditTable.argumentHelp(Self.self, plural: true)) var items: [String]
    func run() throws { try EditTable.send(EditTable.edit(.appendItems, items, toSection: toSection), to: target, on: connection) }
}

/// `delete-all-items` (`Form.nothing`).
struct DeleteAll: ParsableCommand {
    static var configuration: CommandConfiguration { EditTable.configuration(Self.self) }
    @OptionGroup var connection: Connection
    @OptionGroup var target: MutationTarget
    func run() throws { try EditTable.send(.deleteAllItems, to: target, on: connection) }
}

/// Tags that tell the generic edit subcommands apart (`EditTable.rows` gives each its row).
enum AppendSectionsTag {}
enum InsertSectionsTag {}
enum DeleteSectionsTag {}
enum MoveSectionTag {}
enum ReloadSectionsTag {}
enum UpdateSectionsTag {}
enum InsertItemsTag {}
enum DeleteItemsTag {}
enum MoveItemTag {}
enum ReloadItemsTag {}
enum ReconfigureItemsTag {}
enum UpdateItemsTag {}
