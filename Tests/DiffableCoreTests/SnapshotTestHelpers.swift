import DiffableCore
import Testing

/// Builds a snapshot from a compact description: `["A": ["a", "b"], "B": []]` keeps the given order.
func makeSnapshot(_ layout: KeyValuePairs<String, [String]>) throws -> Snapshot {
    var snapshot = Snapshot()
    for (section, items) in layout {
        try snapshot.appendSections([Section(section)])
        try snapshot.appendItems(items.map { Item($0) }, toSection: section)
    }
    return snapshot
}

/// The layout of a snapshot as `"A: a, b | B: c"`, for compact expectations.
func layout(_ snapshot: Snapshot) -> String {
    snapshot.sectionIdentifiers.map { section in
        let items = (try? snapshot.itemIdentifiers(inSection: section)) ?? []
        return items.isEmpty ? "\(section):" : "\(section): \(items.joined(separator: ", "))"
    }.joined(separator: " | ")
}

/// Expects `body` to throw a `SnapshotError` with `code` naming `identifiers`, and `snapshot` unchanged.
func expectError(
    _ code: SnapshotError.Code, naming identifiers: [String]? = nil, in snapshot: inout Snapshot,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (inout Snapshot) throws -> Void
) {
    let before = snapshot
    let marksBefore = (snapshot.reloadedItemIdentifiers, snapshot.reconfiguredItemIdentifiers, snapshot.reloadedSectionIdentifiers)
    do {
        try body(&snapshot)
        Issue.record("expected \(code.rawValue), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as SnapshotError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        if let identifiers { #expect(error.identifiers == identifiers, sourceLocation: sourceLocation) }
        for id in error.identifiers {
            #expect(error.message.contains(id), "message names \(id): \(error.message)", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
    #expect(snapshot == before, "a failed call changed the snapshot", sourceLocation: sourceLocation)
    let marksAfter = (snapshot.reloadedItemIdentifiers, snapshot.reconfiguredItemIdentifiers, snapshot.reloadedSectionIdentifiers)
    #expect(marksAfter == marksBefore, "a failed call changed the marks", sourceLocation: sourceLocation)
    #expect(snapshot.invariantViolations() == [], sourceLocation: sourceLocation)
}

/// Checks the rules a real collection view enforces within one `performBatchUpdates` batch.
func batchRuleViolations(_ stage: ChangeStage) -> [String] {
    var problems: [String] = []
    let deletedSections = Set(stage.sectionDeletes)
    let movedFromSections = Set(stage.sectionMoves.map(\.from))
    let reloadedSections = Set(stage.sectionReloads.map(\.index))
    let insertedSections = Set(stage.sectionInserts.map(\.index))
    let movedToSections = Set(stage.sectionMoves.map(\.to))
    let touchedBefore = deletedSections.union(movedFromSections).union(reloadedSections)
    let touchedAfter = insertedSections.union(movedToSections)
    if !deletedSections.isDisjoint(with: movedFromSections) { problems.append("section deleted and moved") }
    if !reloadedSections.isDisjoint(with: deletedSections.union(movedFromSections)) {
        problems.append("section reloaded and deleted or moved")
    }
    for path in stage.itemDeletes + stage.itemMoves.map(\.from) + stage.itemReloads.map(\.indexPath)
    where touchedBefore.contains(path.section) {
        problems.append("item \(path) touched in a deleted, moved or reloaded section")
    }
    for path in stage.itemInserts.map(\.indexPath) + stage.itemMoves.map(\.to) + stage.itemReconfigures.map(\.indexPath)
    where touchedAfter.contains(path.section) {
        problems.append("item \(path) placed in an inserted or moved section")
    }
    let reloaded = Set(stage.itemReloads.map(\.indexPath))
    if !reloaded.isDisjoint(with: stage.itemMoves.map(\.from)) || !reloaded.isDisjoint(with: stage.itemDeletes) {
        problems.append("item reloaded and moved or deleted")
    }
    if !stage.itemReconfigures.isEmpty
        && !(stage.itemDeletes.isEmpty && stage.itemInserts.isEmpty && stage.itemMoves.isEmpty
            && stage.sectionDeletes.isEmpty && stage.sectionInserts.isEmpty && stage.sectionMoves.isEmpty)
    {
        problems.append("reconfigures mixed with structural changes")
    }
    return problems
}

/// Diffs, checks the batch rules of every stage, applies the stages and checks the result.
@discardableResult
func expectRoundTrip(
    from old: Snapshot, to new: Snapshot, sourceLocation: SourceLocation = #_sourceLocation
) throws -> StagedChanges {
    let changes = new.difference(from: old)
    for stage in changes.stages {
        #expect(!stage.isEmpty, sourceLocation: sourceLocation)
        #expect(batchRuleViolations(stage) == [], sourceLocation: sourceLocation)
    }
    var applied = old
    try applied.apply(changes)
    #expect(applied == new, "apply(diff) differs:\n\(applied)\n---\n\(new)", sourceLocation: sourceLocation)
    #expect(applied.invariantViolations() == [], sourceLocation: sourceLocation)
    return changes
}
