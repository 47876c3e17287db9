/// The storage behind `Snapshot`: sections in order, and each section's items in *chunks*.
///
/// ```
///  sectionOrder:  [k2, k0, k1]                   position → section key
///  section k2:    chunks [c4, c1]  count 700     chunk c4: start 0,   slots [s9, s3, …] (512)
///                                                chunk c1: start 512, slots [s7, …]     (188)
///  slotTable:     "a" → s9, "b" → s3, …           itemChunk[s9] = c4, itemOffset[s9] = 0
/// ```
///
/// Every item has a *slot*, a stable handle that keeps its identifier, payload and location for as long
/// as the item is in the snapshot, wherever it moves. A slot's location is its chunk and its offset in
/// that chunk; a chunk knows its section and the index of its first item there. So:
/// - identifier → index path is one hash look-up and two array reads: O(1) on average;
/// - inserting or removing one item shifts the offsets of at most `maximumChunkSize` items in its chunk
///   and the `start` of the section's later chunks: O(chunk size + chunks in the section), about
///   O(√n) for a section of n items, and never a scan of the snapshot;
/// - appending an item is O(1) amortized (the last chunk has room, or a new chunk is started).
///
/// Sections keep stable keys too. Inserting, removing or moving a section renumbers the positions of the
/// sections after it: O(number of sections), independent of the number of items.
struct SnapshotStorage: Sendable {
    static let maximumChunkSize = 512
    static let minimumChunkSize = 64

    struct Chunk: Sendable {
        var section: Int32
        var start: Int
        var slots: [Int32]
    }

    struct SectionRecord: Sendable {
        var id: String
        var data: JSONValue
        var chunks: [Int32]
        var count: Int
        var isReloaded: Bool
    }

    // Sections.
    var sectionRecords: [SectionRecord] = []  // key → record
    var freeSectionKeys: [Int32] = []
    var sectionOrder: [Int32] = []  // position → key
    var sectionPosition: [Int32] = []  // key → position, -1 when the key is free
    var sectionKeyByID: [String: Int32] = [:]

    // Items, by slot.
    var itemIDs: [String] = []
    var itemData = PayloadArena()  // packed: a payload is rebuilt when read
    var itemChunk: [Int32] = []
    var itemOffset: [Int32] = []
    var itemMarks: [ItemMarks] = []
    var freeSlots: [Int32] = []
    var slotTable = ItemSlotTable()  // identifier → slot (the identifiers are itemIDs)

    // Chunks, by handle.
    var chunks: [Chunk] = []
    var freeChunks: [Int32] = []

    // Reload and reconfigure marks, in the order they were made (UIKit reports them so).
    var reloadedItemOrder: [String] = []
    var reconfiguredItemOrder: [String] = []
    var reloadedSectionOrder: [String] = []

    var itemCount = 0
    /// Bytes of the identifiers of the items held (placed or detached) and of the sections, and the
    /// packed bytes of the sections' payloads: with the item payloads' (`itemData.liveBytes`), what the
    /// snapshot stores (`Snapshot.storedBytes`). Kept up to date by every change, O(1) each.
    var itemIdentifierBytes = 0
    var sectionIdentifierBytes = 0
    var sectionDataBytes = 0

    /// While non-nil, every persistent change appends its inverse here (see `SnapshotStorage+Undo`).
    var undoLog: [UndoEntry]? = nil

    struct ItemMarks: OptionSet, Sendable {
        var rawValue: UInt8
        static let reloaded = ItemMarks(rawValue: 1)
        static let reconfigured = ItemMarks(rawValue: 2)
        /// Set only while one call resolves its items, to find identifiers repeated within the call.
        static let visiting = ItemMarks(rawValue: 4)
    }

    // MARK: Sections

    var sectionCount: Int { sectionOrder.count }

    /// The slot of the item `id`, or `nil`. O(1) on average.
    func slot(of id: String) -> Int32? { slotTable.slot(of: id, ids: itemIDs) }

    func sectionKey(at position: Int) -> Int32 { sectionOrder[position] }

    func position(ofSectionKey key: Int32) -> Int { Int(sectionPosition[Int(key)]) }

    /// Creates the record of a new, empty section and places it at `position`. O(sections after it).
    mutating func insertSection(_ section: Section, at position: Int) {
        let record = SectionRecord(id: section.id, data: section.data, chunks: [], count: 0, isReloaded: false)
        sectionIdentifierBytes += section.id.utf8.count
        sectionDataBytes += Self.packedSize(section.data)
        let key: Int32
        let fresh = freeSectionKeys.isEmpty
        if let reused = freeSectionKeys.popLast() {
            key = reused
            sectionRecords[Int(key)] = record
        } else {
            key = Int32(sectionRecords.count)
            sectionRecords.append(record)
            sectionPosition.append(-1)
        }
        sectionKeyByID[section.id] = key
        sectionOrder.insert(key, at: position)
        renumberSections(from: position)
        undoLog?.append(.sectionInserted(key: key, fresh: fresh))
    }

    /// Removes the section at `position` with all its items. O(its items + sections after it).
    mutating func removeSection(at position: Int) {
        if undoLog != nil {
            // Item by item from the end (O(1) each), so that each removal can be undone.
            let key = sectionOrder[position]
            while let handle = sectionRecords[Int(key)].chunks.last, let slot = chunks[Int(handle)].slots.last {
                removeItem(slot)
            }
            let record = sectionRecords[Int(key)]
            undoLog?.append(.sectionRemoved(key: key, position: position, id: record.id, data: record.data, isReloaded: record.isReloaded))
        }
        let key = sectionOrder.remove(at: position)
        let record = sectionRecords[Int(key)]
        sectionIdentifierBytes -= record.id.utf8.count
        sectionDataBytes -= Self.packedSize(record.data)
        for handle in record.chunks {
            for slot in chunks[Int(handle)].slots { freeSlot(slot) }
            freeChunk(handle)
        }
        itemCount -= record.count
        sectionKeyByID[record.id] = nil
        sectionRecords[Int(key)] = SectionRecord(id: "", data: .null, chunks: [], count: 0, isReloaded: false)
        sectionPosition[Int(key)] = -1
        freeSectionKeys.append(key)
        renumberSections(from: position)
    }

    /// Moves the section at `from` so that it ends up at `to` (remove, then insert). O(sections between).
    mutating func moveSection(from: Int, to: Int) {
        guard from != to else { return }
        let key = sectionOrder.remove(at: from)
        sectionOrder.insert(key, at: to)
        renumberSections(from: min(from, to), through: max(from, to))
        undoLog?.append(.sectionMoved(from: from, to: to))
    }

    /// Rewrites `sectionPosition` for the positions in `start...end` (to the last section by default).
    mutating func renumberSections(from start: Int, through end: Int? = nil) {
        let last = min(end ?? sectionOrder.count - 1, sectionOrder.count - 1)
        guard start <= last else { return }
        for position in start...last { sectionPosition[Int(sectionOrder[position])] = Int32(position) }
    }

    // MARK: Items

    /// The section key and the index within that section of the item in `slot`. O(1).
    func location(ofSlot slot: Int32) -> (section: Int32, index: Int) {
        let chunk = chunks[Int(itemChunk[Int(slot)])]
        return (chunk.section, chunk.start + Int(itemOffset[Int(slot)]))
    }

    /// The index path of the item in `slot`. O(1).
    func indexPath(ofSlot slot: Int32) -> IndexPath {
        let (key, index) = location(ofSlot: slot)
        return IndexPath(section: position(ofSectionKey: key), item: index)
    }

    /// The slot of the item at `index` of a section. O(log chunks in the section).
    func slot(inSection key: Int32, at index: Int) -> Int32 {
        let record = sectionRecords[Int(key)]
        let chunkIndex = chunkIndex(in: record, containing: index)
        let chunk = chunks[Int(record.chunks[chunkIndex])]
        return chunk.slots[index - chunk.start]
    }

    /// The position in `record.chunks` of the chunk holding `index` (binary search on chunk starts).
    private func chunkIndex(in record: SectionRecord, containing index: Int) -> Int {
        var low = 0
        var high = record.chunks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if chunks[Int(record.chunks[middle])].start <= index { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Allocates a slot for an item whose identifier is known to be new (not yet placed in any
    /// section). O(1) on average.
    mutating func allocateSlot(for item: Item) -> Int32 {
        let (slot, isNew) = findOrAllocateSlot(for: item)
        precondition(isNew, "allocateSlot for an existing identifier")
        return slot
    }

    /// The slot of `item`'s identifier, with a single hash probe: the existing slot, or a new detached
    /// slot holding `item` (registered in `slotTable`). O(1) on average.
    mutating func findOrAllocateSlot(for item: Item) -> (slot: Int32, isNew: Bool) {
        let candidate = freeSlots.last ?? Int32(itemIDs.count)
        let (found, inserted) = slotTable.slot(of: item.id, orInsert: candidate, ids: itemIDs)
        if !inserted { return (found, false) }
        undoLog?.append(.allocated(slot: candidate, fresh: freeSlots.last != candidate))
        itemIdentifierBytes += item.id.utf8.count
        if freeSlots.last == candidate {
            freeSlots.removeLast()
            itemIDs[Int(candidate)] = item.id
            itemData.set(item.data, at: Int(candidate))
            itemMarks[Int(candidate)] = []
        } else {
            itemIDs.append(item.id)
            itemData.append(item.data)
            itemChunk.append(-1)
            itemOffset.append(-1)
            itemMarks.append([])
        }
        return (candidate, true)
    }

    /// Makes room for `count` more identifiers in the hash table at once, growing geometrically so
    /// that repeated small reservations stay amortized O(1).
    mutating func reserveAdditionalItems(_ count: Int) {
        slotTable.reserve(slotTable.count + count)
    }

    /// Frees a detached slot that was never attached (rolling back a failed call).
    mutating func discardDetachedSlot(_ slot: Int32) {
        freeSlot(slot)
    }

    mutating func freeSlot(_ slot: Int32) {
        undoLog?.append(.freed(slot: slot, id: itemIDs[Int(slot)], data: itemData.packed(at: Int(slot)), marks: itemMarks[Int(slot)]))
        slotTable.remove(itemIDs[Int(slot)], ids: itemIDs)
        itemIdentifierBytes -= itemIDs[Int(slot)].utf8.count
        itemIDs[Int(slot)] = ""
        itemData.set(JSONValue.null, at: Int(slot))
        itemMarks[Int(slot)] = []
        itemChunk[Int(slot)] = -1
        freeSlots.append(slot)
    }

    /// Places an allocated, detached slot at `index` of a section (`index` may equal the section's count).
    /// O(chunk size + chunks in the section); O(1) amortized at the end of the section.
    mutating func attach(_ slot: Int32, toSection key: Int32, at index: Int) {
        let count = sectionRecords[Int(key)].count
        precondition(index >= 0 && index <= count, "attach index out of range")
        undoLog?.append(.attached(slot: slot))
        itemCount += 1
        sectionRecords[Int(key)].count += 1

        // Fast path: the end of the section.
        if index == count {
            if let lastHandle = sectionRecords[Int(key)].chunks.last,
                chunks[Int(lastHandle)].slots.count < Self.maximumChunkSize
            {
                itemChunk[Int(slot)] = lastHandle
                itemOffset[Int(slot)] = Int32(chunks[Int(lastHandle)].slots.count)
                chunks[Int(lastHandle)].slots.append(slot)
            } else {
                let handle = allocateChunk(section: key, start: count)
                chunks[Int(handle)].slots.reserveCapacity(Self.maximumChunkSize)
                chunks[Int(handle)].slots.append(slot)
                itemChunk[Int(slot)] = handle
                itemOffset[Int(slot)] = 0
                sectionRecords[Int(key)].chunks.append(handle)
            }
            return
        }

        let chunkPosition = chunkIndex(in: sectionRecords[Int(key)], containing: index)
        let handle = sectionRecords[Int(key)].chunks[chunkPosition]
        let offset = index - chunks[Int(handle)].start
        chunks[Int(handle)].slots.insert(slot, at: offset)
        itemChunk[Int(slot)] = handle
        renumberOffsets(inChunk: handle, from: offset)
        shiftChunkStarts(ofSection: key, after: chunkPosition, by: 1)
        if chunks[Int(handle)].slots.count > Self.maximumChunkSize {
            splitChunk(at: chunkPosition, ofSection: key)
        }
    }

    /// Takes the item in `slot` out of its section, keeping the slot (for a move, or before freeing it).
    /// O(chunk size + chunks in the section).
    mutating func detach(_ slot: Int32) {
        let handle = itemChunk[Int(slot)]
        let key = chunks[Int(handle)].section
        let offset = Int(itemOffset[Int(slot)])
        let chunkPosition = chunkIndex(in: sectionRecords[Int(key)], containing: chunks[Int(handle)].start + offset)
        undoLog?.append(.detached(slot: slot, section: key, index: chunks[Int(handle)].start + offset))
        itemCount -= 1
        sectionRecords[Int(key)].count -= 1
        chunks[Int(handle)].slots.remove(at: offset)
        renumberOffsets(inChunk: handle, from: offset)
        itemChunk[Int(slot)] = -1

        shiftChunkStarts(ofSection: key, after: chunkPosition, by: -1)
        let size = chunks[Int(handle)].slots.count
        if size == 0 {
            sectionRecords[Int(key)].chunks.remove(at: chunkPosition)
            freeChunk(handle)
        } else if size < Self.minimumChunkSize {
            mergeSmallChunk(at: chunkPosition, ofSection: key)
        }
    }

    /// Removes the item in `slot` from the snapshot.
    mutating func removeItem(_ slot: Int32) {
        detach(slot)
        freeSlot(slot)
    }

    private mutating func renumberOffsets(inChunk handle: Int32, from offset: Int) {
        let slots = chunks[Int(handle)].slots
        var position = offset
        while position < slots.count {
            itemOffset[Int(slots[position])] = Int32(position)
            position += 1
        }
    }

    private mutating func shiftChunkStarts(ofSection key: Int32, after chunkPosition: Int, by delta: Int) {
        let handles = sectionRecords[Int(key)].chunks
        var position = chunkPosition + 1
        while position < handles.count {
            chunks[Int(handles[position])].start += delta
            position += 1
        }
    }

    private mutating func allocateChunk(section: Int32, start: Int) -> Int32 {
        let chunk = Chunk(section: section, start: start, slots: [])
        if let reused = freeChunks.popLast() {
            chunks[Int(reused)] = chunk
            return reused
        }
        chunks.append(chunk)
        return Int32(chunks.count - 1)
    }

    private mutating func freeChunk(_ handle: Int32) {
        chunks[Int(handle)] = Chunk(section: -1, start: 0, slots: [])
        freeChunks.append(handle)
    }

    /// Splits an overfull chunk into two halves.
    private mutating func splitChunk(at chunkPosition: Int, ofSection key: Int32) {
        let handle = sectionRecords[Int(key)].chunks[chunkPosition]
        let slots = chunks[Int(handle)].slots
        let half = slots.count / 2
        let newHandle = allocateChunk(section: key, start: chunks[Int(handle)].start + half)
        chunks[Int(newHandle)].slots = Array(slots[half...])
        chunks[Int(handle)].slots.removeSubrange(half...)
        for (offset, moved) in chunks[Int(newHandle)].slots.enumerated() {
            itemChunk[Int(moved)] = newHandle
            itemOffset[Int(moved)] = Int32(offset)
        }
        sectionRecords[Int(key)].chunks.insert(newHandle, at: chunkPosition + 1)
    }

    /// Merges an underfull chunk into a neighbour when the two fit in one chunk, so that a section never
    /// degenerates into many tiny chunks.
    private mutating func mergeSmallChunk(at chunkPosition: Int, ofSection key: Int32) {
        let handles = sectionRecords[Int(key)].chunks
        let size = chunks[Int(handles[chunkPosition])].slots.count
        var target: Int? = nil
        if chunkPosition > 0,
            chunks[Int(handles[chunkPosition - 1])].slots.count + size <= Self.maximumChunkSize
        {
            target = chunkPosition - 1
        } else if chunkPosition + 1 < handles.count,
            chunks[Int(handles[chunkPosition + 1])].slots.count + size <= Self.maximumChunkSize
        {
            target = chunkPosition
        }
        guard let first = target else { return }
        // Merge the chunk at `first + 1` into the chunk at `first`.
        let intoHandle = handles[first]
        let fromHandle = handles[first + 1]
        let base = chunks[Int(intoHandle)].slots.count
        for (offset, moved) in chunks[Int(fromHandle)].slots.enumerated() {
            itemChunk[Int(moved)] = intoHandle
            itemOffset[Int(moved)] = Int32(base + offset)
        }
        chunks[Int(intoHandle)].slots.append(contentsOf: chunks[Int(fromHandle)].slots)
        sectionRecords[Int(key)].chunks.remove(at: first + 1)
        freeChunk(fromHandle)
    }

    /// Replaces an item's payload.
    mutating func setData(_ data: JSONValue, ofSlot slot: Int32) {
        undoLog?.append(.itemData(slot: slot, old: itemData.packed(at: Int(slot))))
        itemData.set(data, at: Int(slot))
    }

    /// An item's payload, rebuilt from its packed bytes.
    func data(ofSlot slot: Int32) -> JSONValue { itemData.value(at: Int(slot)) }

    /// Replaces a section's payload.
    mutating func setData(_ data: JSONValue, ofSection key: Int32) {
        undoLog?.append(.sectionData(key: key, old: sectionRecords[Int(key)].data))
        sectionDataBytes += Self.packedSize(data) - Self.packedSize(sectionRecords[Int(key)].data)
        sectionRecords[Int(key)].data = data
    }

    /// Empties the storage: every section and item. O(1).
    mutating func removeAll() {
        let log = undoLog
        let old = self
        self = SnapshotStorage()
        if var log {
            var emptied = old
            emptied.undoLog = nil
            log.append(.replaced(emptied))
            undoLog = log
        }
    }

    /// Calls `body` with the slot of every item of a section, in order. O(items in the section).
    func forEachSlot(inSection key: Int32, _ body: (Int32) throws -> Void) rethrows {
        for handle in sectionRecords[Int(key)].chunks {
            for slot in chunks[Int(handle)].slots { try body(slot) }
        }
    }

    /// The packed size of a section's payload (0 for none).
    static func packedSize(_ data: JSONValue) -> Int {
        if case .null = data { return 0 }
        var bytes: [UInt8] = []
        PackedPayload.append(data, to: &bytes)
        return bytes.count
    }

    /// Checks every structural invariant; used by the tests after each mutation. O(n).
    func checkInvariants() -> [String] {
        var problems: [String] = []
        if sectionKeyByID.count != sectionOrder.count { problems.append("section index size") }
        var total = 0
        for (position, key) in sectionOrder.enumerated() {
            let record = sectionRecords[Int(key)]
            if sectionPosition[Int(key)] != Int32(position) { problems.append("section position \(position)") }
            if sectionKeyByID[record.id] != key { problems.append("section key of \(record.id)") }
            var start = 0
            for handle in record.chunks {
                let chunk = chunks[Int(handle)]
                if chunk.section != key { problems.append("chunk section") }
                if chunk.start != start { problems.append("chunk start in \(record.id)") }
                if chunk.slots.isEmpty || chunk.slots.count > Self.maximumChunkSize {
                    problems.append("chunk size \(chunk.slots.count)")
                }
                for (offset, slot) in chunk.slots.enumerated() {
                    if itemChunk[Int(slot)] != handle || itemOffset[Int(slot)] != Int32(offset) {
                        problems.append("slot location of \(itemIDs[Int(slot)])")
                    }
                    if self.slot(of: itemIDs[Int(slot)]) != slot { problems.append("slot of \(itemIDs[Int(slot)])") }
                }
                start += chunk.slots.count
            }
            if start != record.count { problems.append("count of \(record.id)") }
            total += start
        }
        if total != itemCount || slotTable.count != itemCount { problems.append("item count") }
        let free = Set(freeSlots)
        let held = itemIDs.indices.filter { !free.contains(Int32($0)) }
        if held.reduce(0, { $0 + itemIDs[$1].utf8.count }) != itemIdentifierBytes { problems.append("item identifier bytes") }
        if held.reduce(0, { $0 + Int(itemData.spans[$1].count) }) != itemData.liveBytes { problems.append("payload bytes") }
        let sections = sectionOrder.map { sectionRecords[Int($0)] }
        if sections.reduce(0, { $0 + $1.id.utf8.count }) != sectionIdentifierBytes { problems.append("section identifier bytes") }
        if sections.reduce(0, { $0 + Self.packedSize($1.data) }) != sectionDataBytes { problems.append("section payload bytes") }
        return problems
    }
}
