/// An inverse of one persistent change to a `SnapshotStorage`, recorded while an undo log is open.
///
/// Undoing the entries in reverse order restores the storage's content exactly (the same sections and
/// items, in the same order, with the same payloads, slots and section keys); only the internal chunk
/// layout may differ, which nothing observes.
enum UndoEntry: Sendable {
    case attached(slot: Int32)
    case detached(slot: Int32, section: Int32, index: Int)
    case allocated(slot: Int32, fresh: Bool)
    case freed(slot: Int32, id: String, data: PackedPayload, marks: SnapshotStorage.ItemMarks)
    case sectionInserted(key: Int32, fresh: Bool)
    case sectionRemoved(key: Int32, position: Int, id: String, data: JSONValue, isReloaded: Bool)
    case sectionMoved(from: Int, to: Int)
    case itemData(slot: Int32, old: PackedPayload)
    case sectionData(key: Int32, old: JSONValue)
    case replaced(SnapshotStorage)
}

extension SnapshotStorage {
    /// Starts recording inverses of every change. O(1).
    mutating func beginUndoLog() {
        precondition(undoLog == nil, "undo logs do not nest")
        undoLog = []
    }

    /// Stops recording and forgets the inverses: the changes stay. O(1).
    mutating func commitUndoLog() {
        undoLog = nil
    }

    /// Stops recording and undoes every change made since `beginUndoLog()`. O(entries).
    mutating func rollBackUndoLog() {
        guard let log = undoLog else { return }
        undoLog = nil
        for entry in log.reversed() { undo(entry) }
    }

    private mutating func undo(_ entry: UndoEntry) {
        switch entry {
        case .attached(let slot):
            detach(slot)
        case .detached(let slot, let section, let index):
            attach(slot, toSection: section, at: index)
        case .allocated(let slot, let fresh):
            slotByID[itemIDs[Int(slot)]] = nil
            itemIdentifierBytes -= itemIDs[Int(slot)].utf8.count
            if fresh {
                precondition(Int(slot) == itemIDs.count - 1, "undo out of order")
                itemIDs.removeLast()
                itemData.removeLast()
                itemChunk.removeLast()
                itemOffset.removeLast()
                itemMarks.removeLast()
            } else {
                itemIDs[Int(slot)] = ""
                itemData.set(JSONValue.null, at: Int(slot))
                itemMarks[Int(slot)] = []
                itemChunk[Int(slot)] = -1
                freeSlots.append(slot)
            }
        case .freed(let slot, let id, let data, let marks):
            precondition(freeSlots.last == slot, "undo out of order")
            freeSlots.removeLast()
            itemIDs[Int(slot)] = id
            itemIdentifierBytes += id.utf8.count
            itemData.set(data, at: Int(slot))
            itemMarks[Int(slot)] = marks
            slotByID[id] = slot
        case .sectionInserted(let key, let fresh):
            let position = position(ofSectionKey: key)
            sectionOrder.remove(at: position)
            sectionKeyByID[sectionRecords[Int(key)].id] = nil
            sectionIdentifierBytes -= sectionRecords[Int(key)].id.utf8.count
            sectionDataBytes -= Self.packedSize(sectionRecords[Int(key)].data)
            if fresh {
                precondition(Int(key) == sectionRecords.count - 1, "undo out of order")
                sectionRecords.removeLast()
                sectionPosition.removeLast()
            } else {
                sectionRecords[Int(key)] = SectionRecord(id: "", data: .null, chunks: [], count: 0, isReloaded: false)
                sectionPosition[Int(key)] = -1
                freeSectionKeys.append(key)
            }
            renumberSections(from: position)
        case .sectionRemoved(let key, let position, let id, let data, let isReloaded):
            precondition(freeSectionKeys.last == key, "undo out of order")
            freeSectionKeys.removeLast()
            sectionRecords[Int(key)] = SectionRecord(id: id, data: data, chunks: [], count: 0, isReloaded: isReloaded)
            sectionIdentifierBytes += id.utf8.count
            sectionDataBytes += Self.packedSize(data)
            sectionKeyByID[id] = key
            sectionOrder.insert(key, at: position)
            renumberSections(from: position)
        case .sectionMoved(let from, let to):
            moveSection(from: to, to: from)
        case .itemData(let slot, let old):
            itemData.set(old, at: Int(slot))
        case .sectionData(let key, let old):
            sectionDataBytes += Self.packedSize(old) - Self.packedSize(sectionRecords[Int(key)].data)
            sectionRecords[Int(key)].data = old
        case .replaced(let storage):
            self = storage
        }
    }
}
