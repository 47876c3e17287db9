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

/// Where the undo log stood when a transaction began: it opened the log, or it nests in one a caller
/// opened (a batch inside a change whose undo is kept), in which case it owns the entries after `count`.
struct UndoMark {
    let opened: Bool
    let count: Int
}

extension SnapshotStorage {
    /// Starts a transaction whose changes can be rolled back: opens the undo log, or marks where this
    /// transaction starts in the one already open. O(1).
    mutating func beginUndoLog() -> UndoMark {
        if let log = undoLog { return UndoMark(opened: false, count: log.count) }
        undoLog = []
        return UndoMark(opened: true, count: 0)
    }

    /// Ends the transaction and keeps its changes; a log it opened stops recording. O(1).
    mutating func commitUndoLog(_ mark: UndoMark) {
        if mark.opened { undoLog = nil }
    }

    /// Ends the transaction and undoes its changes, newest first. O(its entries).
    mutating func rollBackUndoLog(_ mark: UndoMark) {
        guard var log = undoLog else { return }
        undoLog = nil
        while log.count > mark.count { undo(log.removeLast()) }
        if !mark.opened { undoLog = log }
    }

    /// Undoes recorded entries, newest first (nothing records meanwhile). O(entries).
    mutating func undo(_ entries: [UndoEntry]) {
        precondition(undoLog == nil, "undo while recording")
        for entry in entries.reversed() { undo(entry) }
    }

    private mutating func undo(_ entry: UndoEntry) {
        switch entry {
        case .attached(let slot):
            detach(slot)
        case .detached(let slot, let section, let index):
            attach(slot, toSection: section, at: index)
        case .allocated(let slot, let fresh):
            slotTable.remove(itemIDs[Int(slot)], ids: itemIDs)
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
            slotTable.insert(id, slot: slot)
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
