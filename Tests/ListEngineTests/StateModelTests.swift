import CellCore
import DiffableCore
import ListLayout
@testable import ListEngine
import ListStore
import ListWire
import Testing

@Suite("State model: the one commit path")
struct StateModelTests {
    let limits = ChangeLimits(maximumDataSources: 10, maximumItemsPerDataSource: 100, maximumIdentifierBytes: 64, maximumRegistrations: 5)

    /// A model holding data source "d" with section S and items a, b, c.
    func model() throws -> StateModel {
        let model = StateModel()
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: "i1", .edit(.appendSections(["S"]))), limits: limits)
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems(["a", "b", "c"], toSection: "S"))), limits: limits)
        return model
    }

    /// The error code `change` is refused with, or nil when it is accepted.
    func errorCode(_ change: StateChange, _ model: StateModel) -> ErrorCode? {
        do throws(WireError) {
            _ = try model.apply(change, limits: limits)
            return nil
        } catch {
            return error.code
        }
    }

    /// A replaced snapshot's identifiers are checked item by item in order: the first refused one is the
    /// one the error names, whichever rule it breaks.
    @Test func theFirstRefusedItemOfAReplacedSnapshotIsNamed() throws {
        let model = try model()
        let long = String(repeating: "x", count: 65)
        let snapshot = try Snapshot([(Section("S"), ["ok"]), (Section("T"), ["fine", Item(long), "bell\u{7}"])])
        do throws(WireError) {
            _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceSnapshot(snapshot, reloadData: false)), limits: limits)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .limitExceeded && error.message.contains("longer than 64 bytes"))
        }
        let control = try Snapshot([(Section("S"), ["ok", "bell\u{7}"]), (Section("T"), [Item(long)])])
        do throws(WireError) {
            _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceSnapshot(control, reloadData: false)), limits: limits)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("U+0007"))
        }
        #expect(model.dataSources["d"]?.snapshot.itemIdentifiers == ["a", "b", "c"])
    }

    @Test func everyAcceptedChangeBumpsTheVersionOnce() throws {
        let model = try model()
        let d = try #require(model.dataSources["d"])
        #expect(d.version == 2 && d.incarnation == "i1")
        let outcome = try model.apply(
            .dataSource(name: "d", ifVersion: 2, createAs: nil, .batch([.deleteItems(["a"]), .moveItem("c", .before("b"))])), limits: limits)
        #expect(outcome.version == 3 && d.snapshot.itemIdentifiers == ["c", "b"])
        // Layout and cell provider changes are versions too; setting what is there already is none.
        let grouped = LayoutDescription(defaultLayout: .list(ListSectionConfiguration(appearance: .grouped)))
        #expect(try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(grouped)), limits: limits).version == 4)
        let same = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(grouped)), limits: limits)
        #expect(same.unchanged && same.version == 4 && d.version == 4)
        _ = try model.apply(.register(Registration(name: "row", definition: ["contentConfiguration": ["type": "cell"]])), limits: limits)
        let provider = CellProvider(defaultRegistration: "row")
        let changed = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setCellProvider(provider, elementKind: nil)), limits: limits)
        #expect(changed.version == 5 && changed.changes.stages.isEmpty && !changed.reloadData)
        #expect(d.cellProvider == provider)
    }

    /// `apply` (a whole new snapshot) is held to `maxItemsPerDataSource` like the edits are: one item
    /// over is refused and the data source is as it was.
    @Test func anApplyOverTheItemLimitIsRefused() throws {
        let model = try model()
        let d = try #require(model.dataSources["d"])
        let before = d.snapshot
        let over = try Snapshot([(Section("S"), (0...limits.maximumItemsPerDataSource).map { Item("i\($0)") })])
        #expect(throws: WireError.self) {
            try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceSnapshot(over, reloadData: false)), limits: limits)
        }
        #expect(d.snapshot == before && d.version == 2)
        let atTheLimit = try Snapshot([(Section("S"), (0..<limits.maximumItemsPerDataSource).map { Item("i\($0)") })])
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceSnapshot(atTheLimit, reloadData: false)), limits: limits)
        #expect(d.snapshot.numberOfItems == limits.maximumItemsPerDataSource)
    }

    @Test func aFailingChangeChangesNothing() throws {
        let model = try model()
        let d = try #require(model.dataSources["d"])
        let before = d.snapshot.itemIdentifiers
        // The batch's second operation fails: the first is undone.
        #expect(errorCode(.dataSource(name: "d", ifVersion: nil, createAs: nil, .batch([.deleteItems(["a"]), .moveItem("zz", .after("b"))])), model) == .itemNotFound)
        #expect(errorCode(.dataSource(name: "d", ifVersion: 7, createAs: nil, .edit(.deleteAllItems)), model) == .versionConflict)
        #expect(errorCode(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setCellProvider(CellProvider(defaultRegistration: "missing"), elementKind: nil)), model) == .registrationNotFound)
        #expect(errorCode(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansion(section: "S", items: ["nope"], expanded: true)), model) == .itemNotFound)
        #expect(d.version == 2 && d.snapshot.itemIdentifiers == before && d.cellProvider == nil)
    }

    @Test func creatingAndChangingIsOneChange() throws {
        let model = StateModel()
        // The data source would be created, but the edit fails: no data source.
        #expect(errorCode(.dataSource(name: "new", ifVersion: nil, createAs: "i2", .edit(.appendItems(["x"], toSection: "S"))), model) == .sectionNotFound)
        #expect(model.dataSources["new"] == nil)
        // Without createAs a missing data source is an error.
        #expect(errorCode(.dataSource(name: "new", ifVersion: nil, createAs: nil, .edit(.appendSections(["S"]))), model) == .dataSourceNotFound)
        let created = try model.apply(.dataSource(name: "new", ifVersion: nil, createAs: "i2", .edit(.appendSections(["S"]))), limits: limits)
        #expect(created.createdDataSource && created.version == 1)
        #expect(errorCode(.createDataSource(name: "new", incarnation: "i3", content: DataSourceContent()), model) == .dataSourceExists)
        _ = try model.apply(.dropDataSource(name: "new"), limits: limits)
        _ = try model.apply(.createDataSource(name: "new", incarnation: "i4", content: DataSourceContent()), limits: limits)
        #expect(model.dataSources["new"]?.incarnation == "i4" && model.dataSources["new"]?.version == 0, "a new incarnation starts again")
    }

    @Test func limitsAreCheckedLiveButNotOnReplay() throws {
        let model = try model()
        let many = (0..<98).map { Item("n\($0)") }
        #expect(errorCode(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems(many, toSection: "S"))), model) == .limitExceeded)
        #expect(errorCode(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems([Item(String(repeating: "x", count: 65))], toSection: "S"))), model) == .limitExceeded)
        _ = try model.apply(.dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems(many, toSection: "S"))), limits: .none)
        #expect(model.dataSources["d"]?.snapshot.numberOfItems == 101)
    }

    @Test func registrationsAreCreatedOnceAndUnregistered() throws {
        let model = StateModel()
        let row = try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell", "text": "{{title}}"]])
        #expect(try model.apply(.register(row), limits: limits).createdRegistration)
        #expect(try !model.apply(.register(row), limits: limits).createdRegistration, "the same definition again is a no-op")
        let other = try Registration(name: "row", definition: ["contentConfiguration": ["type": "subtitleCell"]])
        #expect(errorCode(.register(other), model) == .registrationExists)
        _ = try model.apply(.unregister(name: "row"), limits: limits)
        #expect(model.registrations.isEmpty && model.registrationOrder.isEmpty)
        #expect(errorCode(.unregister(name: "row"), model) == .registrationNotFound)
    }

    /// The property a change log relies on: the same changes applied to a fresh model give the same state.
    @Test func replayingTheChangesGivesTheSameState() throws {
        var outline = SectionSnapshot()
        try outline.append([Item("fruit")])
        try outline.append([Item("apple"), Item("pear")], to: "fruit")
        let changes: [StateChange] = [
            .dataSource(name: "d", ifVersion: nil, createAs: "i1", .edit(.appendSections(["S", "T"]))),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems([Item("a", data: ["n": 1]), "b"], toSection: "S"))),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceOutline(section: "T", outline)),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setExpansion(section: "T", items: ["fruit"], expanded: true)),
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .batch([.updateItems([Item("a", data: ["n": 2])]), .moveItem("b", .before("a"))])),
            .dataSource(name: "e", ifVersion: nil, createAs: "i2", .replaceSnapshot(try Snapshot([(Section("X"), ["x1", "x2"])]), reloadData: false)),
        ]
        func replay() throws -> StateModel {
            let model = StateModel()
            for change in changes { _ = try model.apply(change, limits: limits) }
            return model
        }
        let first = try replay()
        let second = try replay()
        for name in ["d", "e"] {
            let a = try #require(first.dataSources[name])
            let b = try #require(second.dataSources[name])
            #expect(a.version == b.version && a.snapshot.itemIdentifiers == b.snapshot.itemIdentifiers)
            #expect(a.snapshot.sectionIdentifiers == b.snapshot.sectionIdentifiers && a.outlines == b.outlines)
        }
        let d = try #require(first.dataSources["d"])
        #expect(d.version == 5 && d.snapshot.itemIdentifiers == ["b", "a", "fruit", "apple", "pear"])
        #expect(d.outlines["T"]?.visibleItems.map(\.id) == ["fruit", "apple", "pear"])
    }

    /// `register` with replace: the definition changes in place (owner and position kept), an identical
    /// one changes nothing, another kind is refused, a missing one is made; the store record is the
    /// registration as it now is (an upsert).
    @Test func aRegistrationIsReplacedInPlace() throws {
        let model = StateModel()
        var row = try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell", "text": "{{title}}"]])
        row.owner = 1000
        _ = try model.apply(.register(row), limits: limits)
        _ = try model.apply(.register(try Registration(name: "other", definition: ["contentConfiguration": ["type": "cell"]])), limits: limits)
        var replacement = try Registration(name: "row", definition: ["contentConfiguration": ["type": "valueCell", "text": "{{title}}"]])
        replacement.owner = 1000  // the owner's (or an administrator's naming the owner)
        let change = StateChange.replaceRegistration(replacement)
        let outcome = try model.apply(change, limits: limits)
        #expect(outcome.replacedRegistration && !outcome.createdRegistration)
        let replaced = model.registration(named: "row", owner: 1000)
        #expect(replaced?.contentType == "valueCell" && replaced?.owner == 1000, "the owner stays")
        #expect(model.registrationOrder == ["1000:row", "0:other"], "its place stays")
        guard case .register(let name, let encoded)? = model.records(of: change, outcome: outcome, event: nil).first else {
            Issue.record("a register record")
            return
        }
        #expect(name == "1000:row" && (try? StateCoding.decodeRegistration(encoded))?.owner == 1000, "stored under its key")
        #expect(try model.apply(change, limits: limits).replacedRegistration == false, "identical: nothing")
        var header = try Registration(name: "row", definition: ["kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": "plainHeader"]])
        header.owner = 1000
        #expect(errorCode(.replaceRegistration(header), model) == .invalidArgument, "another kind")
        let fresh = try model.apply(.replaceRegistration(try Registration(name: "new", definition: ["contentConfiguration": ["type": "cell"]])), limits: limits)
        #expect(fresh.createdRegistration && model.registrationOrder == ["1000:row", "0:other", "0:new"])
    }
}
