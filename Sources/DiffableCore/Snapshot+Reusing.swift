extension Snapshot {
    /// Creates a snapshot holding `sections`, as `init(_:)` does, built from `base`: the items both
    /// hold keep `base`'s slots and identifier strings.
    ///
    /// Replacing a snapshot with a similar one (an `apply`) then costs one hash look-up per item, in
    /// `base`'s table, and no hashing at all when the result is diffed against `base`
    /// (`difference(from:)` pairs items that share a slot and an identifier string without a look-up).
    /// Releasing `base` afterwards frees only the items the new snapshot does not hold.
    ///
    /// The result equals `try Snapshot(sections)` and throws the same errors. When it would keep less
    /// than half of `base` (most items new, or far fewer items), it is built afresh instead: reusing
    /// would cost more than it saves, and would leave more free slots than items in the storage.
    ///
    /// - Complexity: O(n + m) for n items of `sections` and m slots of `base`.
    public init(_ sections: [(section: Section, items: [Item])], reusing base: Snapshot) throws {
        guard base.numberOfItems > 0, let built = Self.reusing(base, for: sections) else {
            try self.init(sections)
            return
        }
        self = built
    }

    /// The snapshot built on `base`'s slots, or `nil` when `sections` are not simply unique sections of
    /// unique items (the reference path says what is wrong) or hold too many new items.
    private static func reusing(_ base: Snapshot, for sections: [(section: Section, items: [Item])]) -> Snapshot? {
        var snapshot = Snapshot()
        do {
            try snapshot.appendSections(sections.map(\.section))
        } catch {
            return nil
        }
        let old = base.storage
        let itemCount = sections.reduce(0) { $0 + $1.items.count }
        guard itemCount >= old.itemCount / 2 else { return nil }
        let maximumNew = max(old.itemCount / 2, 1_024)
        snapshot.storage.adoptSlots(of: old)
        snapshot.storage.reserveAdditionalItems(min(itemCount, maximumNew))
        // Every slot placed here is marked visiting: a repeated identifier finds its mark.
        var added = 0
        for (section, items) in sections {
            let key = snapshot.storage.sectionKeyByID[section.id]!
            for item in items {
                let (slot, isNew) = snapshot.storage.findOrAllocateSlot(for: item)
                guard !snapshot.storage.itemMarks[Int(slot)].contains(.visiting) else { return nil }
                if isNew {
                    added += 1
                    if added > maximumNew { return nil }
                } else {
                    snapshot.storage.itemData.set(item.data, at: Int(slot))
                }
                snapshot.storage.itemMarks[Int(slot)] = .visiting
                snapshot.storage.attach(slot, toSection: key, at: snapshot.storage.sectionRecords[Int(key)].count)
            }
        }
        // At most about as many free slots as items (base's slots are all kept until freed here).
        guard snapshot.storage.itemIDs.count <= 2 * snapshot.storage.itemCount + 1_024 else { return nil }
        // base's items that are not here, then the marks.
        for slot in 0..<old.itemIDs.count where old.itemChunk[slot] >= 0 && snapshot.storage.itemMarks[slot] != .visiting {
            snapshot.storage.freeSlot(Int32(slot))
        }
        for slot in snapshot.storage.itemMarks.indices { snapshot.storage.itemMarks[slot] = [] }
        return snapshot
    }
}

extension SnapshotStorage {
    /// Takes `other`'s item slots (identifiers, payloads, the hash table, free slots), every one
    /// detached, for a storage that has no items yet. Slots `other` holds stay allocated until placed
    /// or freed.
    mutating func adoptSlots(of other: SnapshotStorage) {
        precondition(itemIDs.isEmpty && undoLog == nil, "adoptSlots into a storage with items")
        itemIDs = other.itemIDs
        itemIdentifierBytes = other.itemIdentifierBytes
        itemData = other.itemData
        slotTable = other.slotTable
        freeSlots = other.freeSlots
        itemChunk = Array(repeating: -1, count: other.itemIDs.count)
        itemOffset = Array(repeating: -1, count: other.itemIDs.count)
        itemMarks = Array(repeating: [], count: other.itemIDs.count)
    }
}

extension String {
    /// Whether the two strings have the same representation (the same storage, or the same small
    /// string): a cheap test that implies `==` (the converse does not hold).
    @inline(__always)
    func hasSameRepresentation(as other: String) -> Bool {
        let (a0, a1) = unsafeBitCast(self, to: (UInt64, UInt64).self)
        let (b0, b1) = unsafeBitCast(other, to: (UInt64, UInt64).self)
        return a0 == b0 && a1 == b1
    }
}
