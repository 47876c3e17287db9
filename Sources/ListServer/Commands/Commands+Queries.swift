import DiffableCore
import ListEngine
import ListStore
import ListWire

/// `createDataSource`: an empty data source.
struct CreateDataSourceCommand: CommandDeclaration {
    static let about = CommandAbout("createDataSource", "Creates an empty data source.", result: "{dataSource, version}")
    static var effect: Command.Effect { .mutates }
    @Arg("The new data source's name.") var dataSource: String

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        try context.state.commit(
            .createDataSource(name: dataSource, incarnation: Incarnation.make(), content: DataSourceContent()), connection: context.connection
        ) { [dataSource] in CommandResult(reply: .dataSource(dataSource, after: $0.outcome)) }
    }
}

/// `dropDataSource`: a data source deleted, its views told.
struct DropDataSourceCommand: CommandDeclaration {
    static let about = CommandAbout("dropDataSource", "Deletes a data source; its views get a `dropped` event and are detached.", result: "{dataSource, version}")
    static var effect: Command.Effect { .mutates }
    @Arg("The data source.") var dataSource: String

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        try context.state.commit(.dropDataSource(name: dataSource), connection: context.connection) { [dataSource] in
            CommandResult(reply: .dataSource(dataSource, after: $0.outcome))
        }
    }
}

/// `listDataSources`: what this connection's user may read.
struct ListDataSourcesCommand: CommandDeclaration {
    static let about = CommandAbout("listDataSources", "Lists the data sources this connection's user may read, with their versions, sizes, owners and the user's access.", result: "{dataSources: [{name, version, sections, items, views, owner, ownerName, access, expansionScope?}]}")
    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let state = context.state
        let identity = context.connection.identity
        return CommandResult { writer in
            writer.key("dataSources")
            writer.beginArray()
            for name in state.dataSources.keys.sorted() {
                let dataSource = state.dataSources[name]!
                let level = state.policy.access(of: identity, toDataSource: name, ownedBy: dataSource.model.owner).level
                guard level >= .read else { continue }
                var entry: [String: JSONValue] = [
                    "name": .string(name), "version": .int(dataSource.version),
                    "sections": .int(dataSource.snapshot.numberOfSections),
                    "items": .int(dataSource.snapshot.numberOfItems), "views": .int(dataSource.views.count),
                    "owner": .int(Int(dataSource.model.owner)), "ownerName": .string(state.userName(of: dataSource.model.owner)),
                    "access": .string(level.description),
                ]
                if dataSource.expansionScope == .perView { entry["expansionScope"] = .string(dataSource.expansionScope.rawValue) }
                writer.value(.object(entry))
            }
            writer.endArray()
        }
    }
}

/// `snapshot`: every section with its items, or a window of one section's items.
struct SnapshotQuery: CommandDeclaration {
    static let about = CommandAbout("snapshot", "The snapshot: every section with its items, or one section's items from offset (at most limit).", result: "{version, incarnation, sections: [{id, data?, items, count?}]}")
    @Arg("The data source.") var dataSource: String
    @Arg("Only this section.") var section: String?
    @Arg("With section: the first item (default 0).") var offset: Count?
    @Arg("With section: at most this many items.") var limit: Count?

    func validate(_ context: CommandContext) throws(WireError) {
        if section == nil && (offset != nil || limit != nil) {
            throw WireError(.invalidArgument, "\"offset\" and \"limit\" need \"section\".")
        }
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let dataSource = try context.dataSource(self.dataSource)
        let snapshot = dataSource.snapshot
        if let section, !snapshot.contains(section: section) {
            throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
        }
        let (version, incarnation, section, offset, limit) = (dataSource.version, dataSource.incarnation, section, offset?.value, limit?.value)
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key("incarnation")
            writer.string(incarnation)
            writer.key("sections")
            if let section {
                let start = offset ?? 0
                // Both are at most 2^53 − 1 (`Arguments.countRange`): the sum cannot overflow.
                let range = start..<(limit.map { start + $0 } ?? Int.max)
                writer.beginArray()
                CommandRouter.writeSection(snapshot, at: snapshot.index(ofSection: section)!, range: range, to: &writer)
                writer.endArray()
            } else {
                writer.sections(of: snapshot)
            }
        }
    }
}

/// `sectionSnapshot`: a section as an outline, or one item's subtree.
struct SectionSnapshotQuery: CommandDeclaration {
    static let about = CommandAbout("sectionSnapshot", "A section as an outline: the stored section snapshot, or its items as a flat one; or one item's subtree.", result: "{version, items: [{id, data?, children?, expanded?}]}")
    @Arg("The data source.") var dataSource: String
    @Arg("The section.") var section: String
    @Arg("Only this item's subtree (UIKit's snapshot(of:includingParent:)).") var parent: String?
    @Arg("With parent: the parent itself as the root (default false: its children).") var includingParent: Bool?
    @Arg("A view of the data source: the expansion as it shows it (its own, with expansion scope perView).") var view: String?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let dataSource = try context.dataSource(self.dataSource)
        guard var outline = dataSource.model.outline(of: section) else {
            throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
        }
        if let view { outline = CommandRouter.outlineAsShown(outline, section: section, by: try CommandRouter.view(view, context, dataSource: self.dataSource)) }
        if let parent {
            do {
                outline = try outline.snapshot(of: parent, includingParent: includingParent ?? false)
            } catch let error as SnapshotError {
                throw WireError(error)
            } catch {
                throw WireError(.internal, "\(error)")
            }
        }
        let version = dataSource.version
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key("items")
            writer.outline(outline)
        }
    }
}

/// `numberOfSections`.
struct NumberOfSectionsQuery: CommandDeclaration {
    static let about = CommandAbout("numberOfSections", "The number of sections.", result: "{version, count}")
    @Arg("The data source.") var dataSource: String

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let dataSource = try context.dataSource(self.dataSource)
        return CommandRouter.versioned(dataSource, "count", .int(dataSource.snapshot.numberOfSections))
    }
}

/// `numberOfItems`: in all sections or in one.
struct NumberOfItemsQuery: CommandDeclaration {
    static let about = CommandAbout("numberOfItems", "The number of items, in all sections or in one.", result: "{version, count}")
    @Arg("The data source.") var dataSource: String
    @Arg("Only this section.") var section: String?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let dataSource = try context.dataSource(self.dataSource)
        guard let section else { return CommandRouter.versioned(dataSource, "count", .int(dataSource.snapshot.numberOfItems)) }
        guard let count = try? dataSource.snapshot.numberOfItems(inSection: section) else {
            throw WireError(.sectionNotFound, "Section \"\(section)\" does not exist.")
        }
        return CommandRouter.versioned(dataSource, "count", .int(count))
    }
}

/// UIKit's look-ups (`itemIdentifier`, `indexPath`, `sectionIdentifier`, `index`): one value found by
/// a key, or (`nullIfMissing`, as UIKit's optionals) null when it is not there; the data source itself
/// must exist.
struct LookUpQuery<Key: LookUpKey>: CommandDeclaration {
    static var about: CommandAbout { Key.about }
    @Arg("The data source.") var dataSource: String
    var key: Key
    @Arg("true: answer null (as UIKit's optional) instead of an error when it is not there.") var nullIfMissing: Bool?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let dataSource = try context.dataSource(self.dataSource)
        guard let found = key.find(in: dataSource.snapshot) else {
            if nullIfMissing ?? false { return CommandRouter.versioned(dataSource, Key.resultMember, .null) }
            throw key.missing()
        }
        return CommandRouter.versioned(dataSource, Key.resultMember, found)
    }
}

/// What a look-up finds by (its one argument), and what it answers.
protocol LookUpKey: ArgumentGroup {
    static var about: CommandAbout { get }
    /// The result's member that holds what was found.
    static var resultMember: String { get }
    init()
    func find(in snapshot: Snapshot) -> JSONValue?
    /// The error when nothing is there.
    func missing() -> WireError
}

struct ItemAtIndexPath: LookUpKey {
    static let about = CommandAbout("itemIdentifier", "The item at an index path.", result: "{version, item}")
    static let resultMember = "item"
    @Arg("The position.") var indexPath: IndexPath
    func find(in snapshot: Snapshot) -> JSONValue? { snapshot.itemIdentifier(at: indexPath).map { .string($0) } }
    func missing() -> WireError { WireError(.indexOutOfRange, "There is no item at \(indexPath).") }
}

struct IndexPathOfItem: LookUpKey {
    static let about = CommandAbout("indexPath", "The index path of an item.", result: "{version, indexPath}")
    static let resultMember = "indexPath"
    @Arg("The item.") var item: String
    func find(in snapshot: Snapshot) -> JSONValue? { snapshot.indexPath(ofItem: item).map { [.int($0.section), .int($0.item)] } }
    func missing() -> WireError { WireError(.itemNotFound, "Item \"\(item)\" does not exist.") }
}

struct SectionAtIndex: LookUpKey {
    static let about = CommandAbout("sectionIdentifier", "The section at an index.", result: "{version, section}")
    static let resultMember = "section"
    @Arg("The section's index.") var index: Count
    func find(in snapshot: Snapshot) -> JSONValue? { snapshot.sectionIdentifier(at: index.value).map { .string($0) } }
    func missing() -> WireError { WireError(.indexOutOfRange, "There is no section at \(index.value).") }
}

struct IndexOfSection: LookUpKey {
    static let about = CommandAbout("index", "The index of a section.", result: "{version, index}")
    static let resultMember = "index"
    @Arg("The section.") var section: String
    func find(in snapshot: Snapshot) -> JSONValue? { snapshot.index(ofSection: section).map { .int($0) } }
    func missing() -> WireError { WireError(.sectionNotFound, "Section \"\(section)\" does not exist.") }
}

/// `item`: an item's payload, position and section.
struct ItemQuery: CommandDeclaration {
    static let about = CommandAbout("item", "An item's payload, position and section.", result: "{version, item, data, indexPath, section}")
    @Arg("The data source.") var dataSource: String
    @Arg("The item.") var item: String

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let dataSource = try context.dataSource(self.dataSource)
        let snapshot = dataSource.snapshot
        guard let path = snapshot.indexPath(ofItem: item) else {
            throw WireError(.itemNotFound, "Item \"\(item)\" does not exist.")
        }
        let (version, item) = (dataSource.version, item)
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key("item")
            writer.string(item)
            writer.key("data")
            writer.value(snapshot.data(ofItem: item)!)
            writer.key("indexPath")
            writer.indexPath(path)
            writer.key("section")
            writer.string(snapshot.sectionIdentifier(at: path.section)!)
        }
    }
}

extension CommandRouter {
    static var dataSourceCommands: [Command] {
        [Command(CreateDataSourceCommand.self), Command(DropDataSourceCommand.self), Command(ListDataSourcesCommand.self), accessCommand]
    }

    static var queryCommands: [Command] {
        [
            Command(SnapshotQuery.self), Command(SectionSnapshotQuery.self), Command(NumberOfSectionsQuery.self), Command(NumberOfItemsQuery.self),
            Command(LookUpQuery<ItemAtIndexPath>.self), Command(LookUpQuery<IndexPathOfItem>.self), Command(LookUpQuery<SectionAtIndex>.self),
            Command(LookUpQuery<IndexOfSection>.self), Command(ItemQuery.self),
        ]
    }

    static func versioned(_ dataSource: DataSource, _ key: String, _ value: JSONValue) -> CommandResult {
        let version = dataSource.version
        return CommandResult { writer in
            writer.key("version")
            writer.int(version)
            writer.key(key)
            writer.value(value)
        }
    }

    static func writeSection(_ snapshot: Snapshot, at index: Int, range: Range<Int>?, to writer: inout JSONWriter) {
        let section = snapshot.section(at: index)!
        writer.beginObject()
        writer.key("id")
        writer.string(section.id)
        if !section.data.isNull {
            writer.key("data")
            writer.value(section.data)
        }
        if range != nil {
            writer.key("count")
            writer.int((try? snapshot.numberOfItems(inSection: section.id)) ?? 0)
        }
        writer.key("items")
        writer.beginArray()
        for item in (try? snapshot.items(inSection: section.id, range: range)) ?? [] {
            writer.identified(item.id, data: item.data)
        }
        writer.endArray()
        writer.endObject()
    }
}
