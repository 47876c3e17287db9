/// The state of a diffable data source: ordered sections, each with ordered items, the way
/// `NSDiffableDataSourceSnapshot` holds them.
///
/// Every section identifier is unique among the sections and every item identifier is unique in the
/// whole snapshot. Sections and items may carry a JSON payload (`Section.data`, `Item.data`).
///
/// Mutations follow UIKit's rules. Misuse never traps: it throws a `SnapshotError` naming the offending
/// identifiers and leaves the snapshot unchanged. Where UIKit tolerates a case (deleting unknown
/// identifiers, appending an item that already exists) the mutation does what UIKit does and returns a
/// `SnapshotWarning` the caller can surface.
///
/// ```swift
/// var snapshot = Snapshot()
/// try snapshot.appendSections(["smileys", "numbers"])
/// try snapshot.appendItems([Item("😀", data: ["title": "Happy"])], toSection: "smileys")
/// try snapshot.appendItems(["1", "2", "3"])          // to the last section, "numbers"
/// snapshot.indexPath(ofItem: "2")                     // [1, 1]
/// ```
///
/// Complexity: identifier → position look-ups are O(1) on average; appending k items is O(k) amortized
/// whatever the size of the snapshot; inserting, deleting or moving one item costs O(√n)-ish work in
/// its section (see `SnapshotStorage`); section edits cost O(number of sections). Copying a snapshot is
/// O(1) (copy on write); the first mutation of a shared copy copies its storage once.
///
/// Equality compares the sections and items, in order, with their payloads. Reload and reconfigure
/// marks are not part of equality (as in UIKit).
public struct Snapshot: Sendable {
    var storage = SnapshotStorage()

    /// Creates an empty snapshot.
    public init() {}

    /// Creates a snapshot holding `sections`, each with its items.
    ///
    /// - Throws: `SnapshotError` for a duplicate section or item identifier.
    /// - Complexity: O(n) for n sections and items.
    public init(_ sections: [(section: Section, items: [Item])]) throws {
        try appendSections(sections.map(\.section))
        storage.reserveAdditionalItems(sections.reduce(0) { $0 + $1.items.count })
        for (section, items) in sections {
            let key = storage.sectionKeyByID[section.id]!
            for slot in try resolveSlots(items, existingAreDuplicates: true).slots {
                storage.attach(slot, toSection: key, at: storage.sectionRecords[Int(key)].count)
            }
        }
    }

    // MARK: Counts and identifiers

    /// The number of sections. O(1).
    public var numberOfSections: Int { storage.sectionCount }

    /// The number of items in all sections. O(1).
    public var numberOfItems: Int { storage.itemCount }

    /// The bytes the snapshot stores: the identifiers of its sections and items and their payloads as
    /// packed (`PackedPayload`), which is what a user's `maxBytesPerUser` quota counts. O(1).
    public var storedBytes: Int {
        storage.itemIdentifierBytes + storage.sectionIdentifierBytes + storage.sectionDataBytes + storage.itemData.liveBytes
    }

    /// The number of items in a section. O(1) on average.
    ///
    /// - Throws: `SnapshotError.Code.sectionNotFound` when the section does not exist.
    public func numberOfItems(inSection section: String) throws -> Int {
        storage.sectionRecords[Int(try sectionKey(section))].count
    }

    /// The section identifiers, in order. O(number of sections).
    public var sectionIdentifiers: [String] {
        storage.sectionOrder.map { storage.sectionRecords[Int($0)].id }
    }

    /// The sections with their payloads, in order. O(number of sections).
    public var sections: [Section] {
        storage.sectionOrder.map { key in
            let record = storage.sectionRecords[Int(key)]
            return Section(record.id, data: record.data)
        }
    }

    /// Every item identifier, section by section, in order. O(n).
    public var itemIdentifiers: [String] {
        var result: [String] = []
        result.reserveCapacity(storage.itemCount)
        for key in storage.sectionOrder {
            storage.forEachSlot(inSection: key) { result.append(storage.itemIDs[Int($0)]) }
        }
        return result
    }

    /// The first item identifier, section by section in order, for which `predicate` is true, or `nil`.
    /// O(n), without copying the identifiers into an array.
    public func firstItemIdentifier(where predicate: (String) -> Bool) -> String? {
        for key in storage.sectionOrder {
            var found: String?
            storage.forEachSlot(inSection: key) { slot in
                if found == nil, predicate(storage.itemIDs[Int(slot)]) { found = storage.itemIDs[Int(slot)] }
            }
            if let found { return found }
        }
        return nil
    }

    /// The item identifiers of a section, in order. O(items in the section).
    ///
    /// - Throws: `SnapshotError.Code.sectionNotFound` when the section does not exist.
    public func itemIdentifiers(inSection section: String) throws -> [String] {
        let key = try sectionKey(section)
        var result: [String] = []
        result.reserveCapacity(storage.sectionRecords[Int(key)].count)
        storage.forEachSlot(inSection: key) { result.append(storage.itemIDs[Int($0)]) }
        return result
    }

    /// The items of a section with their payloads, in order. O(items in the section).
    ///
    /// - Throws: `SnapshotError.Code.sectionNotFound` when the section does not exist.
    public func items(inSection section: String) throws -> [Item] {
        try items(inSection: section, range: nil)
    }

    /// The items of a section in `range` (clamped to the section), with their payloads.
    /// O(log chunks + items returned).
    ///
    /// - Throws: `SnapshotError.Code.sectionNotFound` when the section does not exist.
    public func items(inSection section: String, range: Range<Int>?) throws -> [Item] {
        let key = try sectionKey(section)
        let count = storage.sectionRecords[Int(key)].count
        let lower = max(0, min(range?.lowerBound ?? 0, count))
        let upper = max(lower, min(range?.upperBound ?? count, count))
        var result: [Item] = []
        result.reserveCapacity(upper - lower)
        var index = lower
        while index < upper {
            let slot = storage.slot(inSection: key, at: index)
            result.append(Item(storage.itemIDs[Int(slot)], data: storage.data(ofSlot: slot)))
            index += 1
        }
        return result
    }

    // MARK: Look-ups (nil when absent, as in UIKit)

    /// Whether the snapshot has a section with this identifier. O(1) on average.
    public func contains(section: String) -> Bool { storage.sectionKeyByID[section] != nil }

    /// Whether the snapshot has an item with this identifier. O(1) on average.
    public func contains(item: String) -> Bool { storage.slot(of: item) != nil }

    /// The section that holds an item, or `nil` when the item does not exist. O(1) on average.
    public func sectionIdentifier(containingItem item: String) -> String? {
        guard let slot = storage.slot(of: item) else { return nil }
        return storage.sectionRecords[Int(storage.location(ofSlot: slot).section)].id
    }

    /// The position of a section, or `nil` when it does not exist. O(1) on average.
    public func index(ofSection section: String) -> Int? {
        storage.sectionKeyByID[section].map { storage.position(ofSectionKey: $0) }
    }

    /// The *global* position of an item, counting the items of all earlier sections (as UIKit's
    /// `indexOfItemIdentifier:` does), or `nil` when it does not exist.
    /// O(1) on average for the item plus O(s) for the s sections before it.
    public func index(ofItem item: String) -> Int? {
        guard let path = indexPath(ofItem: item) else { return nil }
        var offset = 0
        for position in 0..<path.section {
            offset += storage.sectionRecords[Int(storage.sectionOrder[position])].count
        }
        return offset + path.item
    }

    /// The index path of an item, or `nil` when it does not exist. O(1) on average.
    public func indexPath(ofItem item: String) -> IndexPath? {
        storage.slot(of: item).map { storage.indexPath(ofSlot: $0) }
    }

    /// The identifier of the item at an index path, or `nil` when out of range. O(log chunks).
    public func itemIdentifier(at indexPath: IndexPath) -> String? {
        guard let slot = slot(at: indexPath) else { return nil }
        return storage.itemIDs[Int(slot)]
    }

    /// The item (with its payload) at an index path, or `nil` when out of range. O(log chunks).
    public func item(at indexPath: IndexPath) -> Item? {
        guard let slot = slot(at: indexPath) else { return nil }
        return Item(storage.itemIDs[Int(slot)], data: storage.data(ofSlot: slot))
    }

    /// The item at a position with its payload as the snapshot keeps it, packed (its members are read
    /// one at a time with `PackedPayload.member`, without rebuilding the rest), or `nil` when out of
    /// range. O(1) plus a copy of the payload's bytes.
    public func packedItem(at indexPath: IndexPath) -> (id: String, payload: PackedPayload)? {
        guard let slot = slot(at: indexPath) else { return nil }
        return (storage.itemIDs[Int(slot)], storage.itemData.packed(at: Int(slot)))
    }

    /// The identifier of the section at a position, or `nil` when out of range. O(1).
    public func sectionIdentifier(at index: Int) -> String? {
        guard storage.sectionOrder.indices.contains(index) else { return nil }
        return storage.sectionRecords[Int(storage.sectionOrder[index])].id
    }

    /// The section (with its payload) at a position, or `nil` when out of range. O(1).
    public func section(at index: Int) -> Section? {
        guard storage.sectionOrder.indices.contains(index) else { return nil }
        let record = storage.sectionRecords[Int(storage.sectionOrder[index])]
        return Section(record.id, data: record.data)
    }

    /// The payload of an item, or `nil` when the item does not exist. O(1) on average.
    public func data(ofItem item: String) -> JSONValue? {
        storage.slot(of: item).map { storage.data(ofSlot: $0) }
    }

    /// The payload of a section, or `nil` when the section does not exist. O(1) on average.
    public func data(ofSection section: String) -> JSONValue? {
        storage.sectionKeyByID[section].map { storage.sectionRecords[Int($0)].data }
    }

    // MARK: Marks

    /// Items marked by `reloadItems` since this snapshot was made, in the order they were marked. O(marks).
    public var reloadedItemIdentifiers: [String] { markedItems(storage.reloadedItemOrder, .reloaded) }

    /// Items marked by `reconfigureItems`, in the order they were marked. O(marks).
    public var reconfiguredItemIdentifiers: [String] {
        markedItems(storage.reconfiguredItemOrder, .reconfigured)
    }

    /// Sections marked by `reloadSections`, in the order they were marked. O(marks).
    public var reloadedSectionIdentifiers: [String] {
        var seen = Set<String>()
        return storage.reloadedSectionOrder.filter { id in
            guard let key = storage.sectionKeyByID[id], storage.sectionRecords[Int(key)].isReloaded else { return false }
            return seen.insert(id).inserted
        }
    }

    /// Whether an item carries a reload mark. O(1) on average.
    public func isReloaded(item: String) -> Bool { hasMark(item, .reloaded) }

    /// Whether an item carries a reconfigure mark. O(1) on average.
    public func isReconfigured(item: String) -> Bool { hasMark(item, .reconfigured) }

    /// Whether a section carries a reload mark. O(1) on average.
    public func isReloaded(section: String) -> Bool {
        storage.sectionKeyByID[section].map { storage.sectionRecords[Int($0)].isReloaded } ?? false
    }

    /// Removes every reload and reconfigure mark, as a data source does once it has applied a snapshot.
    /// O(marks).
    public mutating func clearMarks() {
        for id in storage.reloadedItemOrder + storage.reconfiguredItemOrder {
            if let slot = storage.slot(of: id) { storage.itemMarks[Int(slot)] = [] }
        }
        for id in storage.reloadedSectionOrder {
            if let key = storage.sectionKeyByID[id] { storage.sectionRecords[Int(key)].isReloaded = false }
        }
        storage.reloadedItemOrder = []
        storage.reconfiguredItemOrder = []
        storage.reloadedSectionOrder = []
    }

    /// Problems with the internal structure; empty when sound. O(n). For tests.
    public func invariantViolations() -> [String] { storage.checkInvariants() }

    // MARK: Helpers shared by the mutation files

    func sectionKey(_ section: String) throws -> Int32 {
        guard let key = storage.sectionKeyByID[section] else {
            throw SnapshotError(
                .sectionNotFound,
                "Section \"\(section)\" was not found in the snapshot.",
                identifiers: [section])
        }
        return key
    }

    func itemSlot(_ item: String) throws -> Int32 {
        guard let slot = storage.slot(of: item) else {
            throw SnapshotError(.itemNotFound, "Item \"\(item)\" was not found in the snapshot.", identifiers: [item])
        }
        return slot
    }

    func slot(at indexPath: IndexPath) -> Int32? {
        guard storage.sectionOrder.indices.contains(indexPath.section) else { return nil }
        let key = storage.sectionOrder[indexPath.section]
        guard indexPath.item >= 0, indexPath.item < storage.sectionRecords[Int(key)].count else { return nil }
        return storage.slot(inSection: key, at: indexPath.item)
    }

    private func markedItems(_ order: [String], _ mark: SnapshotStorage.ItemMarks) -> [String] {
        var seen = Set<String>()
        return order.filter { hasMark($0, mark) && seen.insert($0).inserted }
    }

    private func hasMark(_ item: String, _ mark: SnapshotStorage.ItemMarks) -> Bool {
        guard let slot = storage.slot(of: item) else { return false }
        return storage.itemMarks[Int(slot)].contains(mark)
    }

    /// Throws `code` naming the identifiers that repeat in `identifiers` (`what` names their kind).
    public static func checkUnique(_ identifiers: [String], code: SnapshotError.Code, what: String) throws {
        var seen = Set<String>(minimumCapacity: identifiers.count)
        var duplicates: [String] = []
        for id in identifiers where !seen.insert(id).inserted && !duplicates.contains(id) {
            duplicates.append(id)
        }
        if !duplicates.isEmpty {
            throw SnapshotError(
                code, "Supplied \(what) identifiers are not unique. Duplicate identifiers: \(quoted(duplicates)).",
                identifiers: duplicates)
        }
    }
}

extension Snapshot: Equatable {
    /// Same sections and items, in the same order, with the same payloads. O(n).
    public static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
        guard lhs.numberOfSections == rhs.numberOfSections, lhs.numberOfItems == rhs.numberOfItems else { return false }
        for position in 0..<lhs.numberOfSections {
            let left = lhs.storage.sectionRecords[Int(lhs.storage.sectionOrder[position])]
            let right = rhs.storage.sectionRecords[Int(rhs.storage.sectionOrder[position])]
            guard left.id == right.id, left.data == right.data, left.count == right.count else { return false }
        }
        for position in 0..<lhs.numberOfSections {
            var rightSlots: [Int32] = []
            rightSlots.reserveCapacity(rhs.storage.sectionRecords[Int(rhs.storage.sectionOrder[position])].count)
            rhs.storage.forEachSlot(inSection: rhs.storage.sectionOrder[position]) { rightSlots.append($0) }
            var index = 0
            var equal = true
            lhs.storage.forEachSlot(inSection: lhs.storage.sectionOrder[position]) { slot in
                guard equal else { return }
                let other = rightSlots[index]
                index += 1
                equal = lhs.storage.itemIDs[Int(slot)] == rhs.storage.itemIDs[Int(other)]
                    && lhs.storage.itemData.payload(at: Int(slot), equals: Int(other), in: rhs.storage.itemData)
            }
            if !equal { return false }
        }
        return true
    }
}

extension Snapshot: CustomStringConvertible {
    /// One line per section: `section: item, item, …` (payloads after `=`).
    public var description: String {
        var lines: [String] = []
        for key in storage.sectionOrder {
            let record = storage.sectionRecords[Int(key)]
            var items: [String] = []
            storage.forEachSlot(inSection: key) {
                items.append(Item(storage.itemIDs[Int($0)], data: storage.data(ofSlot: $0)).description)
            }
            lines.append("\(Section(record.id, data: record.data)): \(items.joined(separator: ", "))")
        }
        return lines.joined(separator: "\n")
    }
}
