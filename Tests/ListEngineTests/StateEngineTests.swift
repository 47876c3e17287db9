import CellCore
import DiffableCore
import ListEngine
import ListLayout
import ListStore
import ListWire
import Testing

/// The engine through its public API only (what the server may call): every write it offers, and the
/// served data sources staying the model's own.
@Suite("State engine: the one writer")
struct StateEngineTests {
    let limits = ChangeLimits(maximumDataSources: 50, maximumItemsPerDataSource: 100_000, maximumIdentifierBytes: 64, maximumRegistrations: 20)

    /// A served data source as a server's, with or without views.
    final class Watched: DataSourceAttachment {
        var watched = false
        var hasViews: Bool { watched }
    }

    func engine(versions: Int = 100) -> StateEngine<Watched> {
        StateEngine(retention: (versions, 1 << 20)) { _ in Watched() }
    }

    func edit(_ name: String, _ edit: SnapshotEdit, create: Bool = false) -> StateChange {
        .dataSource(name: name, ifVersion: nil, createAs: create ? DataSourceCreation(incarnation: "i-\(name)", owner: 1000) : nil, .edit(edit))
    }

    /// Served data sources are exactly the model's (the same objects).
    func expectConsistent(_ engine: StateEngine<Watched>, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Set(engine.dataSources.keys) == Set(engine.model.dataSources.keys), sourceLocation: sourceLocation)
        for (name, served) in engine.dataSources {
            #expect(served.model === engine.model.dataSources[name], "\(name)", sourceLocation: sourceLocation)
        }
    }

    @Test func aCommitServesTheDataSourceAndRetainsItsEvent() throws {
        let engine = engine()
        let created = try engine.commit(edit("d", .appendSections(["S"]), create: true), limits: limits, recordingUndo: false)
        #expect(created.outcome.createdDataSource)
        #expect(created.previousVersion == nil)
        let applied = try engine.commit(edit("d", .appendItems(["a", "b"], toSection: "S")), limits: limits, recordingUndo: false)
        #expect(applied.previousVersion == 1)
        #expect(applied.dataSource === engine.dataSources["d"])
        let event = try #require(applied.event)
        let parsed = try JSONParser.parse(event)
        #expect(parsed["event"] == "changes")
        #expect(parsed["version"] == 2)
        #expect(applied.retainedEvent == event)
        #expect(engine.dataSources["d"]?.retained.events(after: 1) == [event])
        expectConsistent(engine)
    }

    @Test func aLayoutChangeMakesALayoutChangedEvent() throws {
        let engine = engine()
        _ = try engine.commit(edit("d", .appendSections(["S"]), create: true), limits: limits, recordingUndo: false)
        let grouped = LayoutDescription(defaultLayout: .list(ListSectionConfiguration(appearance: .grouped)))
        let applied = try engine.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(grouped)), limits: limits, recordingUndo: false)
        #expect(try JSONParser.parse(#require(applied.event))["event"] == "layoutChanged")
        // The same layout again changes nothing: no version, no event.
        let again = try engine.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(grouped)), limits: limits, recordingUndo: false)
        #expect(again.outcome.unchanged && again.outcome.version == 2 && again.event == nil && engine.dataSources["d"]?.version == 2)
    }

    @Test func aRefusedChangeLeavesEverythingAsItWas() throws {
        let engine = engine()
        _ = try engine.commit(edit("d", .appendSections(["S"]), create: true), limits: limits, recordingUndo: false)
        #expect(throws: WireError.self) {
            try engine.commit(edit("d", .appendItems(["x"], toSection: "nowhere")), limits: limits, recordingUndo: false)
        }
        #expect(engine.dataSources["d"]?.version == 1)
        #expect(engine.dataSources["d"]?.retained.events(after: 1) == [])
        expectConsistent(engine)
    }

    @Test func aHugeChangeNothingReceivesIsNotEncoded() throws {
        let engine = engine()
        _ = try engine.commit(edit("d", .appendSections(["S"]), create: true), limits: limits, recordingUndo: false)
        let many = (0..<25_000).map { Item("i\($0)") }
        let unwatched = try engine.commit(edit("d", .appendItems(many, toSection: "S")), limits: limits, recordingUndo: false)
        #expect(unwatched.event == nil && unwatched.changesJSON == nil)
        #expect(engine.dataSources["d"]?.retained.events(after: 1) == nil, "a version without its event is a gap")
        engine.dataSources["d"]!.attachment.watched = true
        let watched = try engine.commit(edit("d", .deleteItems(many.map(\.id))), limits: limits, recordingUndo: false)
        #expect(watched.event != nil, "views get it")
        #expect(watched.retainedEvent?.count == watched.event?.count, "and it is small enough (numbers) to retain")
    }

    @Test func undoingACreationStopsServingIt() throws {
        let engine = engine()
        _ = try engine.commit(edit("kept", .appendSections(["S"]), create: true), limits: limits, recordingUndo: false)
        let first = try engine.commit(edit("kept", .appendItems(["a"], toSection: "S")), limits: limits, recordingUndo: true)
        let second = try engine.commit(edit("new", .appendSections(["T"]), create: true), limits: limits, recordingUndo: true)
        let served = engine.dataSources["new"]
        let gone = engine.undo([first.outcome.undo!, second.outcome.undo!], dataSources: ["kept", "new"])
        #expect(gone.count == 1 && gone.first === served)
        #expect(engine.dataSources["new"] == nil)
        #expect(engine.dataSources["kept"]?.version == 1)
        #expect(engine.dataSources["kept"]?.retained.events(after: 1) == [], "the undone version's event is forgotten")
        expectConsistent(engine)
    }

    @Test func aDroppedDataSourceIsServedUntilRetired() throws {
        let engine = engine()
        _ = try engine.commit(edit("d", .appendSections(["S"]), create: true), limits: limits, recordingUndo: false)
        let dropped = try engine.commit(.dropDataSource(name: "d"), limits: limits, recordingUndo: false)
        let served = try #require(dropped.dataSource)
        #expect(engine.dataSources["d"] === served && engine.model.dataSources["d"] == nil)
        engine.retire(served)
        #expect(engine.dataSources["d"] == nil)
        expectConsistent(engine)
    }

    @Test func servingAStoredDataSource() throws {
        let engine = engine()
        _ = try engine.commit(edit("d", .appendSections(["S"]), create: true), limits: limits, recordingUndo: false)
        let served = engine.dataSources["d"]
        var content = try #require(engine.model.dataSources["d"]?.content)
        let older = StoredDataSource(name: "d", incarnation: "i-d", checkpoint: content, checkpointBytes: 0)
        guard case .unchanged = try engine.serve(stored: older) else { Issue.record("not unchanged"); return }
        content.version = 5
        guard case .reloaded(let reloaded) = try engine.serve(stored: StoredDataSource(name: "d", incarnation: "i-d", checkpoint: content, checkpointBytes: 0))
        else { Issue.record("not reloaded"); return }
        #expect(reloaded === served && reloaded.version == 5)
        let other = StoredDataSource(name: "d", incarnation: "another", checkpoint: content, checkpointBytes: 0, retainedChanges: [(5, Array("{}".utf8))])
        guard case .replaced(let previous, let current) = try engine.serve(stored: other) else { Issue.record("not replaced"); return }
        #expect(previous === served && current !== served && current.incarnation == "another")
        #expect(current.retained.events(after: 4) == [Array("{}".utf8)])
        expectConsistent(engine)
        #expect(engine.forget(dataSource: "d") === current)
        #expect(engine.forget(dataSource: "d") == nil)
        expectConsistent(engine)
    }

    @Test func restoringRegistrationsNamesTheChangedOnes() throws {
        let engine = engine()
        let row = try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell"]])
        let card = try Registration(name: "card", definition: ["contentConfiguration": ["type": "cell"]])
        _ = try engine.commit(.register(row), limits: limits, recordingUndo: false)
        _ = try engine.commit(.register(card), limits: limits, recordingUndo: false)
        #expect(engine.restoreRegistrations([row, card]) == nil, "the same: nothing changed")
        let changed = try Registration(name: "card", definition: ["contentConfiguration": ["type": "valueCell"]])
        #expect(engine.restoreRegistrations([changed]).map(Set.init) == ["0:row", "0:card"], "row deleted, card defined otherwise (by key)")
        #expect(engine.model.registrationOrder == ["0:card"])
        #expect(engine.model.registration(named: "card", owner: 0)?.definition == changed.definition)
    }
}
