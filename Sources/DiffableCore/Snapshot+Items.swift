/// Item mutations, with UIKit's rules.
extension Snapshot {
    /// Appends items to the end of a section, or of the last section when `section` is `nil`.
    ///
    /// An item that already exists is moved into place and its payload replaced by the given one, as
    /// UIKit moves it (logging that this is a client bug); the returned warning names those items.
    ///
    /// - Throws: `.duplicateItem` when an identifier repeats within the call, `.sectionNotFound` for an
    ///   unknown section, `.noSections` when `section` is `nil` and there are no sections.
    /// - Complexity: O(k) amortized for k new items, whatever the size of the snapshot; an existing item
    ///   costs a detach (O(chunk size + chunks in its section)).
    @discardableResult
    public mutating func appendItems(_ items: [Item], toSection section: String? = nil) throws -> [SnapshotWarning] {
        Self.existedWarning(try appendResolving(items, toSection: section).existing)
    }

    /// `appendItems`, returning how each item was placed (for `perform`).
    mutating func appendResolving(_ items: [Item], toSection section: String?) throws -> ResolvedItems {
        let key: Int32
        if let section {
            key = try sectionKey(section)
        } else {
            guard let last = storage.sectionOrder.last else {
                let ids = items.map(\.id)
                throw SnapshotError(
                    .noSections,
                    "Cannot append items \(quoted(ids)): there are currently no sections in the snapshot. "
                        + "Add a section first.",
                    identifiers: Array(ids.prefix(10)))
            }
            key = last
        }
        let resolved = try resolveSlots(items)
        for slot in resolved.slots { storage.attach(slot, toSection: key, at: storage.sectionRecords[Int(key)].count) }
        return resolved
    }

    /// Inserts items just before an existing item, in that item's section.
    ///
    /// Items that already exist are moved into place (see `appendItems(_:toSection:)`).
    ///
    /// - Throws: `.duplicateItem` (repeated identifiers), `.itemNotFound` (unknown destination),
    ///   `.invalidArgument` (the destination is among the inserted items).
    /// - Complexity: O(k × (chunk size + chunks in the section)).
    @discardableResult
    public mutating func insertItems(_ items: [Item], beforeItem destination: String) throws -> [SnapshotWarning] {
        try insertItems(items, relativeTo: destination, after: false)
    }

    /// Inserts items just after an existing item, in that item's section.
    ///
    /// - Throws: like `insertItems(_:beforeItem:)`.
    /// - Complexity: O(k × (chunk size + chunks in the section)).
    @discardableResult
    public mutating func insertItems(_ items: [Item], afterItem destination: String) throws -> [SnapshotWarning] {
        try insertItems(items, relativeTo: destination, after: true)
    }

    /// Deletes items. Unknown identifiers are ignored, as in UIKit, and reported in the returned warning.
    ///
    /// - Complexity: O(k × (chunk size + chunks in the section)).
    @discardableResult
    public mutating func deleteItems(_ items: [String]) -> [SnapshotWarning] {
        var unknown: [String] = []
        var seen = Set<String>()
        for id in items where seen.insert(id).inserted {
            guard let slot = storage.slot(of: id) else {
                unknown.append(id)
                continue
            }
            storage.removeItem(slot)
        }
        guard !unknown.isEmpty else { return [] }
        return [
            SnapshotWarning(
                .unknownItemsIgnored, "Items \(quoted(unknown)) do not exist in the snapshot; ignored.",
                identifiers: unknown)
        ]
    }

    /// Removes every item **and every section**, as UIKit does.
    ///
    /// - Complexity: O(1) here; the old storage is released when no other copy holds it.
    public mutating func deleteAllItems() {
        storage.removeAll()
    }

    /// Moves an item just before another item, in that item's section (which may be another section).
    ///
    /// - Throws: `.itemNotFound` for an unknown item, `.invalidMove` when moving an item relative to itself.
    /// - Complexity: O(chunk size + chunks in the sections involved).
    public mutating func moveItem(_ item: String, beforeItem destination: String) throws {
        try moveItem(item, relativeTo: destination, after: false)
    }

    /// Moves an item just after another item, in that item's section (which may be another section).
    ///
    /// - Throws: like `moveItem(_:beforeItem:)`.
    /// - Complexity: O(chunk size + chunks in the sections involved).
    public mutating func moveItem(_ item: String, afterItem destination: String) throws {
        try moveItem(item, relativeTo: destination, after: true)
    }

    /// Marks items to be reloaded (a new cell) when this snapshot is applied.
    ///
    /// - Throws: `.itemNotFound` naming every unknown item; nothing is marked then.
    /// - Complexity: O(k).
    public mutating func reloadItems(_ items: [String]) throws {
        try mark(items, .reloaded, verb: "reload")
    }

    /// Marks items to be reconfigured (the same cell, configured again) when this snapshot is applied.
    ///
    /// - Throws: `.itemNotFound` naming every unknown item; nothing is marked then.
    /// - Complexity: O(k).
    public mutating func reconfigureItems(_ items: [String]) throws {
        try mark(items, .reconfigured, verb: "reconfigure")
    }

    /// Replaces the payloads of existing items. The diff reports such items as reconfigured.
    ///
    /// - Throws: `.duplicateItem` for a repeated identifier, `.itemNotFound` naming every unknown item;
    ///   nothing changes then.
    /// - Complexity: O(k).
    public mutating func updateItems(_ items: [Item]) throws {
        try Self.checkUnique(items.map(\.id), code: .duplicateItem, what: "item")
        let unknown = items.map(\.id).filter { storage.slot(of: $0) == nil }
        if !unknown.isEmpty {
            throw SnapshotError(
                .itemNotFound, "Items \(quoted(unknown)) do not exist in the snapshot.", identifiers: unknown)
        }
        for item in items { storage.setData(item.data, ofSlot: storage.slot(of: item.id)!) }
    }

    // MARK: Helpers

    private mutating func insertItems(_ items: [Item], relativeTo destination: String, after: Bool) throws
        -> [SnapshotWarning]
    {
        Self.existedWarning(try insertResolving(items, relativeTo: destination, after: after).existing)
    }

    /// `insertItems`, returning how each item was placed (for `perform`).
    mutating func insertResolving(_ items: [Item], relativeTo destination: String, after: Bool) throws -> ResolvedItems {
        if items.contains(where: { $0.id == destination }) {
            throw SnapshotError(
                .invalidArgument,
                "The destination item \"\(destination)\" is among the items being inserted.",
                identifiers: [destination])
        }
        let destinationSlot = try itemSlot(destination)
        let resolved = try resolveSlots(items)
        // Locate the destination only now: detaching may have shifted it.
        let (key, index) = storage.location(ofSlot: destinationSlot)
        let start = after ? index + 1 : index
        for (offset, slot) in resolved.slots.enumerated() { storage.attach(slot, toSection: key, at: start + offset) }
        return resolved
    }

    private mutating func moveItem(_ item: String, relativeTo destination: String, after: Bool) throws {
        let slot = try itemSlot(item)
        let destinationSlot = try itemSlot(destination)
        if slot == destinationSlot {
            throw SnapshotError(.invalidMove, "Cannot move item \"\(item)\" relative to itself.", identifiers: [item])
        }
        storage.detach(slot)
        let (key, index) = storage.location(ofSlot: destinationSlot)
        storage.attach(slot, toSection: key, at: after ? index + 1 : index)
    }

    /// The slots for `items`, ready to attach: new items get new slots; existing items keep theirs, are
    /// detached and take the given payload (and are listed in `existing`). One hash probe per item.
    ///
    /// - Throws: `.duplicateItem` when an identifier repeats, or (with `existingAreDuplicates`) when
    ///   it is already in the snapshot; the snapshot is unchanged then.
    mutating func resolveSlots(_ items: [Item], existingAreDuplicates: Bool = false) throws -> ResolvedItems {
        storage.reserveAdditionalItems(items.count)
        var slots = SlotList()
        slots.reserveCapacity(items.count)
        // Positions in `slots` of items already in the snapshot (rare: no allocation for new items).
        var existingAt: [Int] = []
        var duplicates: [String] = []
        for item in items {
            let (slot, new) = storage.findOrAllocateSlot(for: item)
            if storage.itemMarks[Int(slot)].contains(.visiting) || (existingAreDuplicates && !new) {
                if !duplicates.contains(item.id) { duplicates.append(item.id) }
                continue
            }
            storage.itemMarks[Int(slot)].insert(.visiting)
            if !new { existingAt.append(slots.count) }
            slots.append(slot)
        }
        for slot in slots { storage.itemMarks[Int(slot)].remove(.visiting) }
        if !duplicates.isEmpty {
            var existing = existingAt.makeIterator()
            var nextExisting = existing.next()
            for (index, slot) in slots.enumerated() {
                if index == nextExisting {
                    nextExisting = existing.next()
                } else {
                    storage.discardDetachedSlot(slot)
                }
            }
            throw SnapshotError(
                .duplicateItem,
                "Item identifiers must be unique in a snapshot. Duplicate identifiers: \(quoted(duplicates)).",
                identifiers: duplicates)
        }
        var resolved = ResolvedItems(slots: slots)
        // Positions before anything moves, then detach.
        for index in existingAt {
            let slot = slots[index]
            resolved.moved.append((index, storage.indexPath(ofSlot: slot), storage.data(ofSlot: slot)))
            resolved.existing.append(items[index].id)
        }
        for move in resolved.moved {
            let slot = slots[move.index]
            storage.detach(slot)
            storage.setData(items[move.index].data, ofSlot: slot)
        }
        return resolved
    }

    static func existedWarning(_ existing: [String]) -> [SnapshotWarning] {
        guard !existing.isEmpty else { return [] }
        return [
            SnapshotWarning(
                .itemsAlreadyExisted,
                "Items \(quoted(existing)) already existed in the snapshot and were moved into place instead. "
                    + "Identifiers must be unique; inserting an existing identifier is more expensive.",
                identifiers: existing)
        ]
    }

    private mutating func mark(_ items: [String], _ mark: SnapshotStorage.ItemMarks, verb: String) throws {
        let unknown = items.filter { storage.slot(of: $0) == nil }
        if !unknown.isEmpty {
            throw SnapshotError(
                .itemNotFound,
                "Attempted to \(verb) items that do not exist in the snapshot: \(quoted(unknown)).",
                identifiers: unknown)
        }
        for id in items {
            let slot = Int(storage.slot(of: id)!)
            if !storage.itemMarks[slot].contains(mark) {
                storage.itemMarks[slot].insert(mark)
                if mark == .reloaded {
                    storage.reloadedItemOrder.append(id)
                } else {
                    storage.reconfiguredItemOrder.append(id)
                }
            }
        }
    }
}

/// How the items of one append or insert were placed.
struct ResolvedItems {
    /// The slot of each item, in the order given.
    var slots: SlotList
    /// The items that already existed (and moved).
    var existing: [String] = []
    /// For each item that already existed: its position in the call, its index path and payload before.
    var moved: [(index: Int, from: IndexPath, data: JSONValue)] = []
}
