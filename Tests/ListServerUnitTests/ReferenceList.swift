/// The model-based test's reference: one data source as the plainest code can say it (ordered sections
/// with ordered item identifiers, arrays and linear searches), written from the protocol's rules
/// without looking at how `Snapshot` stores anything. It predicts each command's ok or error code, the
/// version and the resulting sections.
struct ReferenceDataSource: Equatable {
    struct Section: Equatable {
        var id: String
        var items: [String]
    }

    var exists = false
    var version = 0
    var sections: [Section] = []

    /// Runs `command` (all or nothing): the error code it fails with, or nil after applying it.
    mutating func run(_ command: ModelCommand) -> String? {
        // Arguments are read first: ifVersion is a version (0 to 2^53 - 1), and a placement needs exactly
        // one of before/after.
        if let ifVersion = command.ifVersion, !(0...9_007_199_254_740_991).contains(ifVersion) { return "invalid-argument" }
        if command.operations.contains(where: { !$0.placementIsValid }) { return "invalid-argument" }
        // `apply` builds its new snapshot (refusing repeated identifiers) before it looks at the data source.
        if case .apply(let new)? = command.operations.first, !command.isBatch, let error = Self.check(new) { return error }
        var candidate = self
        if !exists {
            guard !command.isBatch, let first = command.operations.first, first.createsDataSource else { return "data-source-not-found" }
            candidate = ReferenceDataSource(exists: true, version: 0, sections: [])
        }
        if let ifVersion = command.ifVersion, ifVersion != candidate.version { return "version-conflict" }
        for operation in command.operations {
            if let error = candidate.perform(operation) { return error }
        }
        // An edit that leaves the data source as it was makes no version (it answers "unchanged").
        if candidate.sections != sections || !exists { candidate.version += 1 }
        self = candidate
        return nil
    }

    private var allItems: [String] { sections.flatMap(\.items) }

    private func sectionIndex(_ id: String) -> Int? { sections.firstIndex { $0.id == id } }

    private func location(of item: String) -> (section: Int, item: Int)? {
        for (s, section) in sections.enumerated() {
            if let i = section.items.firstIndex(of: item) { return (s, i) }
        }
        return nil
    }

    private mutating func remove(items: [String]) {
        for s in sections.indices { sections[s].items.removeAll { items.contains($0) } }
    }

    private static func hasRepeats(_ ids: [String]) -> Bool { Set(ids).count != ids.count }

    /// A whole snapshot's identifiers: sections unique, then items unique across sections.
    private static func check(_ sections: [Section]) -> String? {
        if hasRepeats(sections.map(\.id)) { return "duplicate-section" }
        if hasRepeats(sections.flatMap(\.items)) { return "duplicate-item" }
        return nil
    }

    /// One operation; on error `self` may be half changed (the caller discards it).
    private mutating func perform(_ operation: ModelOperation) -> String? {
        switch operation {
        case .appendSections(let ids):
            if Self.hasRepeats(ids) || ids.contains(where: { sectionIndex($0) != nil }) { return "duplicate-section" }
            sections += ids.map { Section(id: $0, items: []) }
        case .insertSections(let ids, let placement):
            let destination = placement.destination!
            if ids.contains(destination) { return "invalid-argument" }
            guard let target = sectionIndex(destination) else { return "section-not-found" }
            if Self.hasRepeats(ids) || ids.contains(where: { sectionIndex($0) != nil }) { return "duplicate-section" }
            sections.insert(contentsOf: ids.map { Section(id: $0, items: []) }, at: placement.isAfter ? target + 1 : target)
        case .deleteSections(let ids):
            sections.removeAll { ids.contains($0.id) }
        case .moveSection(let id, let placement):
            let destination = placement.destination!
            guard let from = sectionIndex(id), sectionIndex(destination) != nil else { return "section-not-found" }
            if id == destination { return "invalid-move" }
            let moved = sections.remove(at: from)
            let target = sectionIndex(destination)!
            sections.insert(moved, at: placement.isAfter ? target + 1 : target)
        case .appendItems(let ids, let section):
            let target: Int
            if let section {
                guard let index = sectionIndex(section) else { return "section-not-found" }
                target = index
            } else {
                guard !sections.isEmpty else { return "no-sections" }
                target = sections.count - 1
            }
            if Self.hasRepeats(ids) { return "duplicate-item" }
            remove(items: ids)  // existing items move
            sections[target].items += ids
        case .insertItems(let ids, let placement):
            let destination = placement.destination!
            if ids.contains(destination) { return "invalid-argument" }
            guard location(of: destination) != nil else { return "item-not-found" }
            if Self.hasRepeats(ids) { return "duplicate-item" }
            remove(items: ids)
            let (s, i) = location(of: destination)!
            sections[s].items.insert(contentsOf: ids, at: placement.isAfter ? i + 1 : i)
        case .deleteItems(let ids):
            remove(items: ids)
        case .deleteAllItems:
            sections = []
        case .moveItem(let id, let placement):
            let destination = placement.destination!
            guard location(of: id) != nil, location(of: destination) != nil else { return "item-not-found" }
            if id == destination { return "invalid-move" }
            remove(items: [id])
            let (s, i) = location(of: destination)!
            sections[s].items.insert(id, at: placement.isAfter ? i + 1 : i)
        case .apply(let new):
            if let error = Self.check(new) { return error }
            sections = new
        }
        return nil
    }
}

/// Where an insert or move goes: exactly one of before/after is valid; none or both is an argument error.
struct ModelPlacement: Equatable {
    var before: String?
    var after: String?

    var isValid: Bool { (before == nil) != (after == nil) }
    var destination: String? { before ?? after }
    var isAfter: Bool { after != nil }

    /// The JSON members, with the given argument names.
    func members(_ beforeName: String, _ afterName: String) -> [(String, ModelJSON)] {
        (before.map { [(beforeName, ModelJSON.string($0))] } ?? []) + (after.map { [(afterName, ModelJSON.string($0))] } ?? [])
    }
}

/// The operations the model-based test sends (alone, or several in a `batch`; `apply` only alone).
enum ModelOperation: Equatable {
    case appendSections([String])
    case insertSections([String], ModelPlacement)
    case deleteSections([String])
    case moveSection(String, ModelPlacement)
    case appendItems([String], toSection: String?)
    case insertItems([String], ModelPlacement)
    case deleteItems([String])
    case deleteAllItems
    case moveItem(String, ModelPlacement)
    case apply([ReferenceDataSource.Section])

    var placementIsValid: Bool {
        switch self {
        case .insertSections(_, let placement), .moveSection(_, let placement), .insertItems(_, let placement), .moveItem(_, let placement):
            return placement.isValid
        default: return true
        }
    }

    /// Only these create a missing data source.
    var createsDataSource: Bool {
        switch self {
        case .appendSections, .apply: return true
        default: return false
        }
    }

    /// The command name and its own arguments (without dataSource).
    var request: (command: String, members: [(String, ModelJSON)]) {
        func strings(_ ids: [String]) -> ModelJSON { .array(ids.map(ModelJSON.string)) }
        switch self {
        case .appendSections(let ids): return ("appendSections", [("sections", strings(ids))])
        case .insertSections(let ids, let p): return ("insertSections", [("sections", strings(ids))] + p.members("beforeSection", "afterSection"))
        case .deleteSections(let ids): return ("deleteSections", [("sections", strings(ids))])
        case .moveSection(let id, let p): return ("moveSection", [("section", .string(id))] + p.members("beforeSection", "afterSection"))
        case .appendItems(let ids, let section): return ("appendItems", [("items", strings(ids))] + (section.map { [("toSection", .string($0))] } ?? []))
        case .insertItems(let ids, let p): return ("insertItems", [("items", strings(ids))] + p.members("beforeItem", "afterItem"))
        case .deleteItems(let ids): return ("deleteItems", [("items", strings(ids))])
        case .deleteAllItems: return ("deleteAllItems", [])
        case .moveItem(let id, let p): return ("moveItem", [("item", .string(id))] + p.members("beforeItem", "afterItem"))
        case .apply(let sections):
            let value = ModelJSON.object([("sections", .array(sections.map { .object([("id", .string($0.id)), ("items", strings($0.items))]) }))])
            return ("apply", [("snapshot", value)])
        }
    }
}

/// One request of the model-based test: a single operation, or a batch of them.
struct ModelCommand {
    var operations: [ModelOperation]
    var isBatch: Bool
    var ifVersion: Int?

    /// The request line for data source `dataSource`.
    func line(dataSource: String) -> String {
        var members: [(String, ModelJSON)]
        let command: String
        if isBatch {
            command = "batch"
            members = [("operations", .array(operations.map { .object([("cmd", .string($0.request.command))] + $0.request.members) }))]
        } else {
            (command, members) = operations[0].request
        }
        members = [("cmd", .string(command)), ("dataSource", .string(dataSource))] + (ifVersion.map { [("ifVersion", .int($0))] } ?? []) + members
        return ModelJSON.object(members).text
    }
}

/// Just enough JSON to write the requests (members in the order given).
indirect enum ModelJSON {
    case string(String)
    case int(Int)
    case array([ModelJSON])
    case object([(String, ModelJSON)])

    var text: String {
        switch self {
        case .string(let value): return "\"" + value + "\""  // the test's identifiers need no escaping
        case .int(let value): return String(value)
        case .array(let elements): return "[" + elements.map(\.text).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { "\"\($0.0)\":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }
}
