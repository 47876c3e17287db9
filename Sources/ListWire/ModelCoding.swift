import DiffableCore

/// Reading model values (items, sections, snapshots, index paths, changes) out of request JSON.
///
/// An item or a section is either its identifier as a string, or `{"id": "…", "data": <any JSON>}`.
/// Every error is `invalid-argument` and names the offending field, e.g. `items[3].id`.
public enum WireDecoding {
    public static func item(_ value: JSONValue, field: String) throws(WireError) -> Item {
        let (id, data) = try identified(value, field: field, extra: [])
        return Item(id, data: data)
    }

    public static func items(_ values: [JSONValue], field: String) throws(WireError) -> [Item] {
        var result: [Item] = []
        result.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            // The field name is only built for an error message.
            let (id, data) = try identified(value, field: "\(field)[\(index)]", extra: [])
            result.append(Item(id, data: data))
        }
        return result
    }

    public static func section(_ value: JSONValue, field: String) throws(WireError) -> Section {
        let (id, data) = try identified(value, field: field, extra: [])
        return Section(id, data: data)
    }

    public static func sections(_ values: [JSONValue], field: String) throws(WireError) -> [Section] {
        var result: [Section] = []
        for (index, value) in values.enumerated() {
            let (id, data) = try identified(value, field: "\(field)[\(index)]", extra: [])
            result.append(Section(id, data: data))
        }
        return result
    }

    /// `{"sections": [{"id", "data"?, "items": [...]}, …]}`.
    public static func snapshot(_ value: JSONValue, field: String) throws(WireError) -> [(section: Section, items: [Item])] {
        guard case .object(let members) = value else { throw wrongType(field, "an object with \"sections\"") }
        if let unknown = members.keys.filter({ $0 != "sections" }).min() {
            throw WireError(.invalidArgument, "Unknown member \"\(unknown)\" in \"\(field)\".")
        }
        guard case .array(let sections)? = members["sections"] else { throw wrongType("\(field).sections", "an array") }
        var result: [(section: Section, items: [Item])] = []
        result.reserveCapacity(sections.count)
        for (index, entry) in sections.enumerated() {
            let name = "\(field).sections[\(index)]"
            guard case .object(let fields) = entry else { throw wrongType(name, "an object with \"id\" and \"items\"") }
            let (id, data) = try identified(entry, field: name, extra: ["items"])
            let items: [Item]
            switch fields["items"] {
            case nil, .null?: items = []
            case .array(let values)?: items = try Self.items(values, field: "\(name).items")
            default: throw wrongType("\(name).items", "an array")
            }
            result.append((Section(id, data: data), items))
        }
        return result
    }

    /// `{"items": [{"id", "data"?, "children"?: [...], "expanded"?: bool}, …]}` as a section snapshot.
    public static func sectionSnapshot(_ value: JSONValue, field: String) throws(WireError) -> SectionSnapshot {
        guard case .object(let members) = value else { throw wrongType(field, "an object with \"items\"") }
        if let unknown = members.keys.filter({ $0 != "items" }).min() {
            throw WireError(.invalidArgument, "Unknown member \"\(unknown)\" in \"\(field)\".")
        }
        guard case .array(let roots)? = members["items"] else { throw wrongType("\(field).items", "an array") }
        var snapshot = SectionSnapshot()
        var expanded: [String] = []
        // Iterative, parents before children: (entries, parent, field prefix).
        var work: [([JSONValue], String?, String)] = [(roots, nil, "\(field).items")]
        while let (entries, parent, prefix) = work.popLast() {
            var items: [Item] = []
            var children: [([JSONValue], String?, String)] = []
            for (index, entry) in entries.enumerated() {
                let name = "\(prefix)[\(index)]"
                let (id, data) = try identified(entry, field: name, extra: ["children", "expanded"])
                items.append(Item(id, data: data))
                if case .object(let fields) = entry {
                    switch fields["expanded"] {
                    case nil, .null?, .bool(false)?: break
                    case .bool(true)?: expanded.append(id)
                    default: throw wrongType("\(name).expanded", "a boolean")
                    }
                    switch fields["children"] {
                    case nil, .null?: break
                    case .array(let values)?: children.append((values, id, "\(name).children"))
                    default: throw wrongType("\(name).children", "an array")
                    }
                }
            }
            do {
                try snapshot.append(items, to: parent)
            } catch let error as SnapshotError {
                throw WireError(error)
            } catch {
                throw WireError(.internal, "\(error)")
            }
            work.append(contentsOf: children.reversed())
        }
        snapshot.expand(expanded)
        return snapshot
    }

    /// `[section, item]`.
    public static func indexPath(_ value: JSONValue, field: String) throws(WireError) -> IndexPath {
        guard case .array(let parts) = value, parts.count == 2, case .int(let section) = parts[0], case .int(let item) = parts[1] else {
            throw wrongType(field, "an index path [section, item]")
        }
        guard Arguments.countRange.contains(section), Arguments.countRange.contains(item) else {
            throw WireError(.invalidArgument, "Argument \"\(field)\" must hold two integers from 0 to \(Arguments.countRange.upperBound).")
        }
        return IndexPath(section: section, item: item)
    }

    /// A `changes` value as the server writes it (identifiers only: payloads come out as `null`).
    public static func changes(_ value: JSONValue) throws(WireError) -> StagedChanges {
        guard case .array(let stages)? = value["stages"] else { throw wrongType("changes.stages", "an array") }
        var result = StagedChanges()
        for (index, stageValue) in stages.enumerated() {
            let field = "changes.stages[\(index)]"
            var stage = ChangeStage()
            func list(_ key: String) -> [JSONValue] {
                if case .array(let values)? = stageValue[key] { return values }
                return []
            }
            func int(_ value: JSONValue?, _ name: String) throws(WireError) -> Int {
                guard case .int(let number)? = value else { throw wrongType(name, "an integer") }
                return number
            }
            func string(_ value: JSONValue?, _ name: String) throws(WireError) -> String {
                guard case .string(let text)? = value else { throw wrongType(name, "a string") }
                return text
            }
            for value in list("sectionDeletes") { stage.sectionDeletes.append(try int(value, "\(field).sectionDeletes")) }
            for value in list("sectionInserts") {
                let ids: [String]
                if case .array(let values)? = value["items"] {
                    var collected: [String] = []
                    for id in values { collected.append(try string(id, "\(field).sectionInserts.items")) }
                    ids = collected
                } else {
                    ids = []
                }
                stage.sectionInserts.append(
                    SectionInsert(
                        index: try int(value["index"], "\(field).sectionInserts.index"),
                        section: Section(try string(value["section"], "\(field).sectionInserts.section")),
                        items: ids.map { Item($0) }))
            }
            for value in list("sectionMoves") {
                stage.sectionMoves.append(Move(from: try int(value["from"], "\(field).sectionMoves"), to: try int(value["to"], "\(field).sectionMoves")))
            }
            for value in list("sectionReloads") {
                stage.sectionReloads.append(SectionReload(index: try int(value, "\(field).sectionReloads"), section: Section("")))
            }
            for value in list("itemDeletes") { stage.itemDeletes.append(try indexPath(value, field: "\(field).itemDeletes")) }
            for value in list("itemInserts") {
                stage.itemInserts.append(
                    ItemChange(
                        indexPath: try indexPath(value["indexPath"] ?? .null, field: "\(field).itemInserts.indexPath"),
                        item: Item(try string(value["item"], "\(field).itemInserts.item"))))
            }
            for value in list("itemMoves") {
                stage.itemMoves.append(
                    Move(
                        from: try indexPath(value["from"] ?? .null, field: "\(field).itemMoves.from"),
                        to: try indexPath(value["to"] ?? .null, field: "\(field).itemMoves.to")))
            }
            for value in list("itemReloads") {
                stage.itemReloads.append(ItemChange(indexPath: try indexPath(value, field: "\(field).itemReloads"), item: Item("")))
            }
            for value in list("itemReconfigures") {
                stage.itemReconfigures.append(
                    ItemChange(
                        indexPath: try indexPath(value["indexPath"] ?? .null, field: "\(field).itemReconfigures.indexPath"),
                        item: Item(try string(value["item"], "\(field).itemReconfigures.item"))))
            }
            result.stages.append(stage)
        }
        return result
    }

    // MARK: Helpers

    /// An identifier string, or `{"id": "…", "data": …}` with only `extra` as further members.
    private static func identified(
        _ value: JSONValue, field: @autoclosure () -> String, extra: Set<String>
    ) throws(WireError) -> (String, JSONValue) {
        switch value {
        case .string(let id):
            return (id, .null)
        case .object(let members):
            guard case .string(let id)? = members["id"] else { throw wrongType("\(field()).id", "a string") }
            if members.count > 2 || (members.count == 2 && members["data"] == nil) || !extra.isEmpty,
                let unknown = members.keys.filter({ $0 != "id" && $0 != "data" && !extra.contains($0) }).min()
            {
                throw WireError(.invalidArgument, "Unknown member \"\(unknown)\" in \"\(field())\".")
            }
            return (id, members["data"] ?? .null)
        default:
            throw wrongType(field(), "an identifier string or an object with \"id\"")
        }
    }

    static func wrongType(_ field: String, _ expected: String) -> WireError {
        WireError(.invalidArgument, "\"\(field)\" must be \(expected).")
    }
}

/// Writing model values in their wire form.
extension JSONWriter {
    /// `[section, item]`.
    public mutating func indexPath(_ path: IndexPath) {
        beginArray()
        int(path.section)
        int(path.item)
        endArray()
    }

    /// An item or section: its identifier alone, or `{"id", "data"}` when it has a payload.
    public mutating func identified(_ id: String, data: JSONValue) {
        if data.isNull {
            string(id)
        } else {
            beginObject()
            key(literal: "id")
            string(id)
            key(literal: "data")
            value(data)
            endObject()
        }
    }

    /// `[{id, data?, items: [item, …]}, …]`: every section with its items (`snapshot`, `attach`, `apply`).
    public mutating func sections(of snapshot: Snapshot) {
        beginArray()
        for index in 0..<snapshot.numberOfSections {
            let section = snapshot.section(at: index)!
            beginObject()
            key(literal: "id")
            string(section.id)
            if !section.data.isNull {
                key(literal: "data")
                value(section.data)
            }
            key(literal: "items")
            beginArray()
            for item in (try? snapshot.items(inSection: section.id)) ?? [] { identified(item.id, data: item.data) }
            endArray()
            endObject()
        }
        endArray()
    }

    /// `[{id, data?, expanded?, children?}, …]`, depth-first: an outline as `applySectionSnapshot` takes
    /// it and `sectionSnapshot` returns it.
    public mutating func outline(_ outline: SectionSnapshot) {
        func write(_ ids: [String], _ writer: inout JSONWriter) {
            writer.beginArray()
            for id in ids {
                writer.beginObject()
                writer.key(literal: "id")
                writer.string(id)
                if let data = outline.data(of: id), !data.isNull {
                    writer.key(literal: "data")
                    writer.value(data)
                }
                if (try? outline.isExpanded(id)) == true {
                    writer.key(literal: "expanded")
                    writer.bool(true)
                }
                let children = (try? outline.children(of: id)) ?? []
                if !children.isEmpty {
                    writer.key(literal: "children")
                    write(children, &writer)
                }
                writer.endObject()
            }
            writer.endArray()
        }
        write(outline.rootItems.map(\.id), &self)
    }

    /// About how many bytes `changes(_:)` writes for `changes` (escapes in identifiers aside): the room
    /// to reserve so that the line holding them is written without growing its buffer.
    public static func estimatedBytes(of changes: StagedChanges) -> Int {
        func item(_ change: ItemChange) -> Int { 48 + change.item.id.utf8.count }
        var bytes = 48
        for stage in changes.stages {
            bytes += 24 + 8 * (stage.sectionDeletes.count + stage.sectionReloads.count) + 32 * stage.sectionMoves.count
                + 16 * (stage.itemDeletes.count + stage.itemReloads.count) + 40 * stage.itemMoves.count
            for insert in stage.sectionInserts {
                bytes += 48 + insert.section.id.utf8.count
                for item in insert.items { bytes += 4 + item.id.utf8.count }
            }
            for change in stage.itemInserts { bytes += item(change) }
            for change in stage.itemReconfigures { bytes += item(change) }
        }
        return bytes
    }

    /// `{"stages": [...]}` in the protocol's shape: identifiers and positions only; empty lists left out.
    /// With `reloadData`, `{"reloadData": true, "stages": []}`; without `animatingDifferences`,
    /// `"animatingDifferences": false` too (left out when true, the default).
    public mutating func changes(_ changes: StagedChanges, reloadData: Bool = false, animatingDifferences: Bool = true) {
        beginObject()
        if reloadData {
            key(literal: "reloadData")
            bool(true)
        }
        if !animatingDifferences {
            key(literal: "animatingDifferences")
            bool(false)
        }
        key(literal: "stages")
        beginArray()
        for stage in changes.stages { self.stage(stage) }
        endArray()
        endObject()
    }

    private mutating func stage(_ stage: ChangeStage) {
        beginObject()
        if !stage.sectionDeletes.isEmpty {
            key(literal: "sectionDeletes")
            beginArray()
            for index in stage.sectionDeletes { int(index) }
            endArray()
        }
        if !stage.sectionInserts.isEmpty {
            key(literal: "sectionInserts")
            beginArray()
            for insert in stage.sectionInserts {
                beginObject()
                key(literal: "index")
                int(insert.index)
                key(literal: "section")
                string(insert.section.id)
                key(literal: "items")
                beginArray()
                for item in insert.items { string(item.id) }
                endArray()
                endObject()
            }
            endArray()
        }
        if !stage.sectionMoves.isEmpty {
            key(literal: "sectionMoves")
            beginArray()
            for move in stage.sectionMoves {
                beginObject()
                key(literal: "from")
                int(move.from)
                key(literal: "to")
                int(move.to)
                endObject()
            }
            endArray()
        }
        if !stage.sectionReloads.isEmpty {
            key(literal: "sectionReloads")
            beginArray()
            for reload in stage.sectionReloads { int(reload.index) }
            endArray()
        }
        if !stage.itemDeletes.isEmpty {
            key(literal: "itemDeletes")
            beginArray()
            for path in stage.itemDeletes { indexPath(path) }
            endArray()
        }
        itemChanges("itemInserts", stage.itemInserts)
        if !stage.itemMoves.isEmpty {
            key(literal: "itemMoves")
            beginArray()
            for move in stage.itemMoves {
                beginObject()
                key(literal: "from")
                indexPath(move.from)
                key(literal: "to")
                indexPath(move.to)
                endObject()
            }
            endArray()
        }
        if !stage.itemReloads.isEmpty {
            key(literal: "itemReloads")
            beginArray()
            for reload in stage.itemReloads { indexPath(reload.indexPath) }
            endArray()
        }
        itemChanges("itemReconfigures", stage.itemReconfigures)
        endObject()
    }

    private mutating func itemChanges(_ name: StaticString, _ changes: [ItemChange]) {
        guard !changes.isEmpty else { return }
        key(literal: name)
        beginArray()
        for change in changes {
            beginObject()
            key(literal: "indexPath")
            indexPath(change.indexPath)
            key(literal: "item")
            string(change.item.id)
            endObject()
        }
        endArray()
    }
}
