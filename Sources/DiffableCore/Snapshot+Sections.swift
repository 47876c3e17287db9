/// Section mutations, with UIKit's rules.
extension Snapshot {
    /// Adds sections, empty, at the end.
    ///
    /// - Throws: `.duplicateSection` when an identifier repeats within the call or already exists.
    /// - Complexity: O(k) for k sections.
    public mutating func appendSections(_ sections: [Section]) throws {
        try checkNewSections(sections)
        for section in sections { storage.insertSection(section, at: storage.sectionCount) }
    }

    /// Inserts sections, empty, before an existing section.
    ///
    /// - Throws: `.duplicateSection` (repeated or existing identifiers), `.sectionNotFound` (unknown
    ///   destination), `.invalidArgument` (the destination is among the inserted sections).
    /// - Complexity: O(k + number of sections).
    public mutating func insertSections(_ sections: [Section], beforeSection destination: String) throws {
        let position = try insertionPosition(for: sections, relativeTo: destination)
        for (offset, section) in sections.enumerated() { storage.insertSection(section, at: position + offset) }
    }

    /// Inserts sections, empty, after an existing section.
    ///
    /// - Throws: like `insertSections(_:beforeSection:)`.
    /// - Complexity: O(k + number of sections).
    public mutating func insertSections(_ sections: [Section], afterSection destination: String) throws {
        let position = try insertionPosition(for: sections, relativeTo: destination) + 1
        for (offset, section) in sections.enumerated() { storage.insertSection(section, at: position + offset) }
    }

    /// Deletes sections with their items. Unknown identifiers are ignored, as in UIKit, and reported in
    /// the returned warning.
    ///
    /// - Complexity: O(deleted items + k × number of sections).
    @discardableResult
    public mutating func deleteSections(_ sections: [String]) -> [SnapshotWarning] {
        var unknown: [String] = []
        var seen = Set<String>()
        for id in sections where seen.insert(id).inserted {
            guard let key = storage.sectionKeyByID[id] else {
                unknown.append(id)
                continue
            }
            storage.removeSection(at: storage.position(ofSectionKey: key))
        }
        guard !unknown.isEmpty else { return [] }
        return [
            SnapshotWarning(
                .unknownSectionsIgnored,
                "Sections \(quoted(unknown)) do not exist in the snapshot; ignored.",
                identifiers: unknown)
        ]
    }

    /// Moves a section (with its items) so that it comes just before another section.
    ///
    /// - Throws: `.sectionNotFound` for an unknown section, `.invalidMove` when moving a section relative
    ///   to itself.
    /// - Complexity: O(number of sections).
    public mutating func moveSection(_ section: String, beforeSection destination: String) throws {
        try moveSection(section, relativeTo: destination, after: false)
    }

    /// Moves a section (with its items) so that it comes just after another section.
    ///
    /// - Throws: like `moveSection(_:beforeSection:)`.
    /// - Complexity: O(number of sections).
    public mutating func moveSection(_ section: String, afterSection destination: String) throws {
        try moveSection(section, relativeTo: destination, after: true)
    }

    /// Marks sections to be reloaded when this snapshot is applied.
    ///
    /// - Throws: `.sectionNotFound` naming every unknown section; nothing is marked then.
    /// - Complexity: O(k).
    public mutating func reloadSections(_ sections: [String]) throws {
        let unknown = sections.filter { storage.sectionKeyByID[$0] == nil }
        if !unknown.isEmpty {
            throw SnapshotError(
                .sectionNotFound,
                "Attempted to reload sections that do not exist in the snapshot: \(quoted(unknown)).",
                identifiers: unknown)
        }
        for id in sections {
            let key = Int(storage.sectionKeyByID[id]!)
            if !storage.sectionRecords[key].isReloaded {
                storage.sectionRecords[key].isReloaded = true
                storage.reloadedSectionOrder.append(id)
            }
        }
    }

    /// Replaces the payloads of existing sections.
    ///
    /// - Throws: `.duplicateSection` for a repeated identifier, `.sectionNotFound` naming every unknown
    ///   section; nothing changes then.
    /// - Complexity: O(k).
    public mutating func updateSections(_ sections: [Section]) throws {
        try Self.checkUnique(sections.map(\.id), code: .duplicateSection, what: "section")
        let unknown = sections.map(\.id).filter { storage.sectionKeyByID[$0] == nil }
        if !unknown.isEmpty {
            throw SnapshotError(
                .sectionNotFound, "Sections \(quoted(unknown)) do not exist in the snapshot.", identifiers: unknown)
        }
        for section in sections { storage.setData(section.data, ofSection: storage.sectionKeyByID[section.id]!) }
    }

    // MARK: Validation

    private func checkNewSections(_ sections: [Section]) throws {
        let ids = sections.map(\.id)
        try Self.checkUnique(ids, code: .duplicateSection, what: "section")
        let existing = ids.filter { storage.sectionKeyByID[$0] != nil }
        if !existing.isEmpty {
            throw SnapshotError(
                .duplicateSection,
                "Sections \(quoted(existing)) already exist in the snapshot. Section identifiers must be unique.",
                identifiers: existing)
        }
    }

    private func insertionPosition(for sections: [Section], relativeTo destination: String) throws -> Int {
        if sections.contains(where: { $0.id == destination }) {
            throw SnapshotError(
                .invalidArgument,
                "The destination section \"\(destination)\" is among the sections being inserted.",
                identifiers: [destination])
        }
        let key = try sectionKey(destination)
        try checkNewSections(sections)
        return storage.position(ofSectionKey: key)
    }

    private mutating func moveSection(_ section: String, relativeTo destination: String, after: Bool) throws {
        let key = try sectionKey(section)
        let destinationKey = try sectionKey(destination)
        if key == destinationKey {
            throw SnapshotError(
                .invalidMove, "Cannot move section \"\(section)\" relative to itself.", identifiers: [section])
        }
        let from = storage.position(ofSectionKey: key)
        var to = storage.position(ofSectionKey: destinationKey)
        if to > from { to -= 1 }  // positions after removing the moved section
        storage.moveSection(from: from, to: after ? to + 1 : to)
    }
}
