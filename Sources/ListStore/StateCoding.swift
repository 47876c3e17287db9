import CellCore
import DiffableCore
import ListLayout
import ListWire

/// The stored form of changes and data source contents: JSON in the protocol's own vocabulary, so a
/// log record reads like the request that made it (`{"cmd":"appendItems","items":["a"]}`).
///
/// Encoding then decoding gives back an equal value; a record that does not decode is reported as
/// `StorageError.corrupt` by the store that read it.
public enum StateCoding {
    // MARK: Operations

    /// The JSON of one data-source operation.
    public static func encode(_ operation: DataSourceOperation) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        write(operation, to: &writer)
        return writer.bytes
    }

    /// The operation of a log record whose version a checkpoint record of the same write covers.
    public static let noOperation = Array("null".utf8)

    public static func decodeOperation(_ bytes: [UInt8]) throws(StorageError) -> DataSourceOperation {
        try decoding("a change record") { () throws(WireError) in try operation(try parse(bytes)) }
    }

    static func write(_ operation: DataSourceOperation, to writer: inout JSONWriter) {
        writer.beginObject()
        switch operation {
        case .edit(let edit):
            writeMembers(of: edit, to: &writer)
        case .batch(let edits):
            command("batch", &writer)
            writer.key("operations")
            writer.beginArray()
            for edit in edits {
                writer.beginObject()
                writeMembers(of: edit, to: &writer)
                writer.endObject()
            }
            writer.endArray()
        case .replaceSnapshot(let snapshot, let reloadData):
            command("apply", &writer)
            writer.key("sections")
            writer.sections(of: snapshot)
            if reloadData {
                writer.key("reloadData")
                writer.bool(true)
            }
        case .replaceOutline(let section, let outline):
            command("applySectionSnapshot", &writer)
            writer.key("section")
            writer.string(section)
            writer.key("items")
            writer.outline(outline)
        case .setExpansion(let section, let items, let expanded):
            command(expanded ? "expand" : "collapse", &writer)
            writer.key("section")
            writer.string(section)
            strings("items", items, &writer)
        case .setLayout(let layout):
            command("setLayout", &writer)
            writer.key("layout")
            writer.value(layout.json)
        case .setCellProvider(let provider, let elementKind):
            command("setCellProvider", &writer)
            if let elementKind {
                writer.key("elementKind")
                writer.string(elementKind)
            }
            writer.key("provider")
            writer.value(json(provider))
        case .setExpansionScope(let scope):
            command("setExpansionScope", &writer)
            writer.key("scope")
            writer.string(scope.rawValue)
        }
        writer.endObject()
    }

    private static func writeMembers(of edit: SnapshotEdit, to writer: inout JSONWriter) {
        EditCodec.write(edit, to: &writer)
    }

    private static func operation(_ value: JSONValue) throws(WireError) -> DataSourceOperation {
        let members = try object(value, "record")
        let name = try string(members["cmd"], "cmd")
        switch name {
        case "batch":
            var edits: [SnapshotEdit] = []
            for (index, entry) in try array(members["operations"], "operations").enumerated() {
                edits.append(try edit(try object(entry, "operations[\(index)]")))
            }
            return .batch(edits)
        case "apply":
            let sections = try WireDecoding.snapshot(.object(["sections": members["sections"] ?? .array([])]), field: "snapshot")
            let reloadData = members["reloadData"] == .bool(true)
            return .replaceSnapshot(try snapshot(sections), reloadData: reloadData)
        case "applySectionSnapshot":
            let outline = try WireDecoding.sectionSnapshot(.object(["items": members["items"] ?? .array([])]), field: "items")
            return .replaceOutline(section: try string(members["section"], "section"), outline)
        case "expand", "collapse":
            return .setExpansion(section: try string(members["section"], "section"), items: try strings(members["items"], "items"), expanded: name == "expand")
        case "setLayout":
            do {
                return .setLayout(try LayoutDescription(json: members["layout"] ?? .null))
            } catch {
                throw WireError(.invalidArgument, "layout: \(error)")
            }
        case "setCellProvider":
            let elementKind = try members["elementKind"].map { value throws(WireError) in try string(value, "elementKind") }
            return .setCellProvider(try provider(members["provider"] ?? .null), elementKind: elementKind)
        case "setExpansionScope":
            return .setExpansionScope(try expansionScope(members["scope"]))
        default:
            return .edit(try edit(members))
        }
    }

    /// A stored edit record, read as the request it reads like (`EditCodec`).
    private static func edit(_ members: [String: JSONValue]) throws(WireError) -> SnapshotEdit {
        let name = try string(members["cmd"], "cmd")
        var arguments = Arguments(members)
        guard let edit = try EditCodec.decode(name, &arguments) else { throw WireError(.invalidArgument, "unknown record \"\(name)\"") }
        return edit
    }

    // MARK: Contents (checkpoints)

    /// The JSON of a data source's content: what a checkpoint stores.
    public static func encode(_ content: DataSourceContent) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + content.snapshot.numberOfItems * 16)
        writer.beginObject()
        if content.owner != 0 {
            writer.key("owner")
            writer.int(Int(content.owner))
        }
        writer.key("version")
        writer.int(content.version)
        writer.key("sections")
        writeCheckpointSections(of: content.snapshot, to: &writer)
        if !content.outlines.isEmpty {
            writer.key("outlines")
            writer.beginObject()
            for section in content.outlines.keys.sorted() {
                writer.key(section)
                writer.outline(content.outlines[section]!)
            }
            writer.endObject()
        }
        if let provider = content.cellProvider {
            writer.key("cellProvider")
            writer.value(json(provider))
        }
        if !content.supplementaryProviders.isEmpty {
            writer.key("supplementaryProviders")
            writer.value(.object(content.supplementaryProviders.mapValues(json)))
        }
        writer.key("layout")
        writer.value(content.layout.json)
        if content.expansionScope != .shared {
            writer.key("expansionScope")
            writer.string(content.expansionScope.rawValue)
        }
        writer.endObject()
        return writer.bytes
    }

    public static func decodeContent(_ bytes: [UInt8]) throws(StorageError) -> DataSourceContent {
        try decoding("a checkpoint") { () throws(WireError) in
            let members = try object(try parse(bytes), "checkpoint")
            guard case .int(let version)? = members["version"] else { throw WireError(.invalidArgument, "version must be an integer") }
            var content = DataSourceContent(
                owner: try owner(members["owner"]), version: version, snapshot: try snapshot(try checkpointSections(members["sections"])))
            if let outlines = members["outlines"] {
                for (section, value) in try object(outlines, "outlines") {
                    content.outlines[section] = try WireDecoding.sectionSnapshot(.object(["items": value]), field: "outlines.\(section)")
                }
            }
            if let provider = members["cellProvider"] { content.cellProvider = try self.provider(provider) }
            if let providers = members["supplementaryProviders"] {
                for (kind, value) in try object(providers, "supplementaryProviders") {
                    content.supplementaryProviders[kind] = try provider(value)
                }
            }
            do {
                content.layout = try LayoutDescription(json: members["layout"] ?? .null)
            } catch {
                throw WireError(.invalidArgument, "layout: \(error)")
            }
            if let scope = members["expansionScope"] { content.expansionScope = try expansionScope(scope) }
            return content
        }
    }

    // MARK: Registrations

    /// A registration as stored: `{"name", "definition", "owner"?}` (no owner: root's).
    public static func encode(_ registration: Registration) -> [UInt8] {
        var members: [String: JSONValue] = ["name": .string(registration.name), "definition": registration.definition]
        if registration.owner != 0 { members["owner"] = .int(Int(registration.owner)) }
        return JSONValue.object(members).jsonBytes
    }

    /// A stored expansion scope: `"shared"` or `"perView"`.
    static func expansionScope(_ value: JSONValue?) throws(WireError) -> ExpansionScope {
        guard case .string(let name)? = value, let scope = ExpansionScope(rawValue: name) else {
            throw WireError(.invalidArgument, "scope must be \"shared\" or \"perView\"")
        }
        return scope
    }

    /// A stored owner: absent (root, and everything stored before owners were), or a uid.
    static func owner(_ value: JSONValue?) throws(WireError) -> UInt32 {
        guard let value else { return 0 }
        guard case .int(let uid) = value, let owner = UInt32(exactly: uid) else {
            throw WireError(.invalidArgument, "owner must be a uid")
        }
        return owner
    }

    public static func decodeRegistration(_ bytes: [UInt8]) throws(StorageError) -> Registration {
        let value = try decoding("a registration") { () throws(WireError) in try parse(bytes) }
        guard case .string(let name)? = value["name"], let definition = value["definition"] else {
            throw StorageError(.corrupt, "A stored registration has no name or definition.")
        }
        guard case .int(let uid)? = value["owner"] ?? .int(0), let owner = UInt32(exactly: uid) else {
            throw StorageError(.corrupt, "Stored registration \"\(name)\" has an owner that is not a uid.")
        }
        do {
            var registration = try Registration(name: name, definition: definition, checking: .asStored)
            registration.owner = owner
            return registration
        } catch {
            throw StorageError(.corrupt, "Stored registration \"\(name)\" no longer compiles: \(error)")
        }
    }

    // MARK: Pieces

    /// A checkpoint's sections: `[{id, data?, items: [id, …], payloads?: [data or null, …]}, …]`. Items as
    /// plain identifiers with their payloads beside them (only when some item has one) read back several
    /// times faster than `{id, data}` objects, and a checkpoint is the largest thing listd reads.
    static func writeCheckpointSections(of snapshot: Snapshot, to writer: inout JSONWriter) {
        writer.beginArray()
        for index in 0..<snapshot.numberOfSections {
            let section = snapshot.section(at: index)!
            let items = (try? snapshot.items(inSection: section.id)) ?? []
            writer.beginObject()
            writer.key("id")
            writer.string(section.id)
            if !section.data.isNull {
                writer.key("data")
                writer.value(section.data)
            }
            writer.key("items")
            writer.beginArray()
            for item in items { writer.string(item.id) }
            writer.endArray()
            if items.contains(where: { !$0.data.isNull }) {
                writer.key("payloads")
                writer.beginArray()
                for item in items { writer.value(item.data) }
                writer.endArray()
            }
            writer.endObject()
        }
        writer.endArray()
    }

    private static func checkpointSections(_ value: JSONValue?) throws(WireError) -> [(section: Section, items: [Item])] {
        var sections: [(section: Section, items: [Item])] = []
        for (index, entry) in try array(value, "sections").enumerated() {
            let members = try object(entry, "sections[\(index)]")
            let ids = try array(members["items"], "sections[\(index)].items")
            let payloads = try members["payloads"].map { value throws(WireError) in try array(value, "sections[\(index)].payloads") }
            if let payloads, payloads.count != ids.count {
                throw WireError(.invalidArgument, "sections[\(index)]: \(ids.count) items but \(payloads.count) payloads")
            }
            var items: [Item] = []
            items.reserveCapacity(ids.count)
            for (position, id) in ids.enumerated() {
                guard case .string(let identifier) = id else { throw WireError(.invalidArgument, "sections[\(index)].items[\(position)] must be a string") }
                items.append(Item(identifier, data: payloads?[position] ?? .null))
            }
            sections.append((Section(try string(members["id"], "sections[\(index)].id"), data: members["data"] ?? .null), items))
        }
        return sections
    }

    /// `{"rules": [{section?, match?: {field, equals}, registration}], "default"?}`, each registration a
    /// name (the data source owner's) or `{"name", "owner": uid}`.
    public static func json(_ provider: CellProvider) -> JSONValue {
        var members: [String: JSONValue] = [:]
        members["rules"] = .array(
            provider.rules.map { rule in
                var fields: [String: JSONValue] = ["registration": json(rule.reference)]
                if let section = rule.section { fields["section"] = .string(section) }
                if let match = rule.match { fields["match"] = .object(["field": .string(match.field), "equals": match.equals]) }
                if rule.reorderable { fields["reorderable"] = true }
                return .object(fields)
            })
        if let fallback = provider.defaultReference { members["default"] = json(fallback) }
        return .object(members)
    }

    /// A registration a provider names: its name, or `{"name", "owner": uid}` for another user's.
    public static func json(_ reference: RegistrationReference) -> JSONValue {
        guard let owner = reference.owner else { return .string(reference.name) }
        return .object(["name": .string(reference.name), "owner": .int(Int(owner))])
    }

    /// A registration as a provider names it (`json(_:)`), its owner as given: a uid, or (from a
    /// request) a user name for the caller to look up.
    public static func reference(_ value: JSONValue?, _ field: String) throws(WireError) -> (name: String, owner: JSONValue?) {
        switch value {
        case .string(let name)?:
            return (name, nil)
        case .object(let members)? where members["name"]?.stringValue != nil && members["owner"] != nil && members.count == 2:
            return (members["name"]!.stringValue!, members["owner"])
        default:
            throw WireError(.invalidArgument, "\(field) must be a registration name or {\"name\": …, \"owner\": user name or uid}.")
        }
    }

    /// A stored reference (its owner a uid).
    private static func storedReference(_ value: JSONValue?, _ field: String) throws(WireError) -> RegistrationReference {
        let (name, owner) = try reference(value, field)
        guard let owner else { return RegistrationReference(name) }
        return RegistrationReference(name, owner: try self.owner(owner))
    }

    private static func provider(_ value: JSONValue) throws(WireError) -> CellProvider {
        let members = try object(value, "provider")
        var rules: [CellProvider.Rule] = []
        for (index, entry) in try array(members["rules"], "rules").enumerated() {
            let fields = try object(entry, "rules[\(index)]")
            var rule = CellProvider.Rule(reference: try storedReference(fields["registration"], "rules[\(index)].registration"))
            if let section = fields["section"] { rule.section = try string(section, "rules[\(index)].section") }
            if let match = fields["match"] {
                let matchFields = try object(match, "rules[\(index)].match")
                rule.match = (try string(matchFields["field"], "rules[\(index)].match.field"), matchFields["equals"] ?? .null)
            }
            rule.reorderable = fields["reorderable"] == .bool(true)
            rules.append(rule)
        }
        let fallback = try members["default"].map { value throws(WireError) in try storedReference(value, "default") }
        let provider = CellProvider(rules: rules, defaultReference: fallback)
        // Stored before registrations had namespaces: the owner each name was bound to then, named explicitly now.
        guard let owners = members["owners"] else { return provider }
        var bound: [String: UInt32] = [:]
        for (name, uid) in try object(owners, "owners") {
            guard let uid = uid.intValue, let owner = UInt32(exactly: uid) else {
                throw WireError(.invalidArgument, "owners.\(name) is a uid.")
            }
            bound[name] = owner
        }
        return provider.binding(bound)
    }

    private static func command(_ name: String, _ writer: inout JSONWriter) { EditCodec.command(name, &writer) }

    private static func strings(_ key: String, _ values: [String], _ writer: inout JSONWriter) { EditCodec.strings(key, values, &writer) }

    private static func parse(_ bytes: [UInt8]) throws(WireError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw WireError(.invalidJSON, "\(error)")
        }
    }

    private static func snapshot(_ sections: [(section: Section, items: [Item])]) throws(WireError) -> Snapshot {
        do {
            return try Snapshot(sections)
        } catch let error as SnapshotError {
            throw WireError(error)
        } catch {
            throw WireError(.internal, "\(error)")
        }
    }

    private static func object(_ value: JSONValue, _ field: String) throws(WireError) -> [String: JSONValue] {
        guard case .object(let members) = value else { throw WireError(.invalidArgument, "\(field) must be an object") }
        return members
    }

    private static func array(_ value: JSONValue?, _ field: String) throws(WireError) -> [JSONValue] {
        guard case .array(let values)? = value else { throw WireError(.invalidArgument, "\(field) must be an array") }
        return values
    }

    private static func string(_ value: JSONValue?, _ field: String) throws(WireError) -> String {
        guard case .string(let text)? = value else { throw WireError(.invalidArgument, "\(field) must be a string") }
        return text
    }

    private static func strings(_ value: JSONValue?, _ field: String) throws(WireError) -> [String] {
        var result: [String] = []
        for (index, entry) in try array(value, field).enumerated() { result.append(try string(entry, "\(field)[\(index)]")) }
        return result
    }

    private static func decoding<Value>(_ what: String, _ body: () throws(WireError) -> Value) throws(StorageError) -> Value {
        do {
            return try body()
        } catch {
            throw StorageError(.corrupt, "Cannot read \(what): \(error.message)")
        }
    }
}
