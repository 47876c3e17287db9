import CellCore
import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import Testing

@Suite("State model: owners and per-user quotas")
struct OwnershipTests {
    var limits: ChangeLimits {
        var limits = ChangeLimits(maximumDataSources: 100, maximumItemsPerDataSource: 1_000, maximumIdentifierBytes: 64, maximumRegistrations: 50)
        limits.quota = OwnerQuota(maximumDataSources: 2, maximumItems: 5, maximumRegistrations: 1)
        return limits
    }

    func quotaError(_ change: StateChange, _ model: StateModel) -> String? {
        do throws(WireError) {
            _ = try model.apply(change, limits: limits)
            return nil
        } catch {
            return error.details["quota"]?.stringValue ?? error.code.rawValue
        }
    }

    func registration(_ name: String, owner: UInt32) throws -> Registration {
        var registration = try Registration(name: name, definition: ["contentConfiguration": ["type": "cell", "text": "{{title}}"]])
        registration.owner = owner
        return registration
    }

    @Test func whatAChangeCreatesIsOwnedAndCounted() throws {
        let model = StateModel()
        _ = try model.apply(
            .dataSource(name: "a", ifVersion: nil, createAs: DataSourceCreation(incarnation: "i", owner: 1000), .edit(.appendSections(["S"]))), limits: limits)
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: nil, .edit(.appendItems(["x", "y"], toSection: "S"))), limits: limits)
        _ = try model.apply(.createDataSource(name: "b", incarnation: "j", content: DataSourceContent(owner: 1000)), limits: limits)
        _ = try model.apply(.register(try registration("r", owner: 1000)), limits: limits)
        #expect(model.dataSources["a"]?.owner == 1000)
        #expect(model.usage(of: 1000) == OwnerUsage(dataSources: 2, items: 2, registrations: 1))
        // Dropping, deleting and unregistering give the quota back.
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: nil, .edit(.deleteItems(["x"]))), limits: limits)
        _ = try model.apply(.dropDataSource(name: "b"), limits: limits)
        _ = try model.apply(.unregister(name: "r", owner: 1000), limits: limits)
        #expect(model.usage(of: 1000) == OwnerUsage(dataSources: 1, items: 1, registrations: 0))
    }

    @Test func quotasRefuseWithTheirNameAndChangeNothing() throws {
        let model = StateModel()
        let alice = DataSourceCreation(incarnation: "i", owner: 1000)
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: alice, .edit(.appendSections(["S"]))), limits: limits)
        _ = try model.apply(.dataSource(name: "b", ifVersion: nil, createAs: alice, .edit(.appendSections(["S"]))), limits: limits)
        #expect(quotaError(.dataSource(name: "c", ifVersion: nil, createAs: alice, .edit(.appendSections(["S"]))), model) == "maxDataSourcesPerUser")
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: nil, .edit(.appendItems(["1", "2", "3"], toSection: "S"))), limits: limits)
        #expect(quotaError(.dataSource(name: "b", ifVersion: nil, createAs: nil, .edit(.appendItems(["4", "5", "6"], toSection: "S"))), model) == "maxItemsPerUser")
        let big = try Snapshot([(Section("S"), ["p", "q", "r"])])
        #expect(quotaError(.dataSource(name: "b", ifVersion: nil, createAs: nil, .replaceSnapshot(big, reloadData: false)), model) == "maxItemsPerUser")
        _ = try model.apply(.register(try registration("r1", owner: 1000)), limits: limits)
        #expect(quotaError(.register(try registration("r2", owner: 1000)), model) == "maxRegistrationsPerUser")
        #expect(model.usage(of: 1000) == OwnerUsage(dataSources: 2, items: 3, registrations: 1))
        #expect(model.dataSources["c"] == nil && model.dataSources["b"]?.snapshot.numberOfItems == 0)
        // Another user is not held back by alice's quota; root is exempt.
        _ = try model.apply(
            .dataSource(name: "c", ifVersion: nil, createAs: DataSourceCreation(incarnation: "k", owner: 1001), .edit(.appendSections(["S"]))), limits: limits)
        _ = try model.apply(.register(try registration("r2", owner: 1001)), limits: limits)
        for index in 0..<4 {
            _ = try model.apply(.dataSource(name: "root-\(index)", ifVersion: nil, createAs: DataSourceCreation(incarnation: "r\(index)", owner: 0), .edit(.appendSections(["S"]))), limits: limits)
        }
        _ = try model.apply(.dataSource(name: "root-0", ifVersion: nil, createAs: nil, .edit(.appendItems(["1", "2", "3", "4", "5", "6"], toSection: "S"))), limits: limits)
    }

    @Test func collapsedOutlineItemsCountToo() throws {
        let model = StateModel()
        let alice = DataSourceCreation(incarnation: "i", owner: 1000)
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: alice, .edit(.appendSections(["S"]))), limits: limits)
        var outline = SectionSnapshot()
        try outline.append(["root"])
        try outline.append(["c1", "c2", "c3"], to: "root")  // collapsed: one visible item, four held
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: nil, .replaceOutline(section: "S", outline)), limits: limits)
        #expect(model.dataSources["a"]?.snapshot.numberOfItems == 1)
        #expect(model.usage(of: 1000).items == 4)
        var bigger = outline
        try bigger.append(["c4", "c5"], to: "root")
        #expect(quotaError(.dataSource(name: "a", ifVersion: nil, createAs: nil, .replaceOutline(section: "S", bigger)), model) == "maxItemsPerUser")
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: nil, .edit(.deleteSections(["S"]))), limits: limits)
        #expect(model.usage(of: 1000).items == 0)
    }

    /// A cell provider keeps the owners its rules name, through the stored encodings (a checkpoint's
    /// content and a logged change); a name without one is the data source owner's.
    @Test func aCellProvidersRegistrationOwnersAreStoredAndServeOnlyThem() throws {
        let provider = CellProvider(rules: [.init(section: "S", reference: RegistrationReference("card", owner: 1001))], defaultRegistration: "row")
        #expect(provider.references.map { $0.key(dataSourceOwner: 1000) } == ["1001:card", "1000:row"])
        var content = DataSourceContent(owner: 1000, version: 1)
        content.cellProvider = provider
        content.supplementaryProviders["header"] = provider
        let decoded = try StateCoding.decodeContent(StateCoding.encode(content))
        #expect(decoded.cellProvider == provider && decoded.supplementaryProviders["header"] == provider)
        guard case .setCellProvider(let logged, nil) = try StateCoding.decodeOperation(StateCoding.encode(.setCellProvider(provider, elementKind: nil)))
        else {
            Issue.record("not a setCellProvider")
            return
        }
        #expect(logged == provider)
    }

    /// `maxBytesPerUser`: what a user's data sources store (identifiers and packed payloads) is counted
    /// with every change; at the quota only removing works, an `apply` is measured exactly, dropping gives
    /// the bytes back, a recount from the state agrees, and root is exempt.
    @Test func storedBytesAreCountedAndCappedPerUser() throws {
        var limits = ChangeLimits(maximumDataSources: 100, maximumItemsPerDataSource: 1_000, maximumIdentifierBytes: 64, maximumRegistrations: 50)
        limits.quota = OwnerQuota(maximumDataSources: 10, maximumItems: 1_000, maximumRegistrations: 10, maximumBytes: 1_000)
        let model = StateModel()
        func bytesError(_ change: StateChange) -> String? {
            do throws(WireError) {
                _ = try model.apply(change, limits: limits)
                return nil
            } catch {
                return error.details["quota"]?.stringValue ?? error.code.rawValue
            }
        }
        let text = JSONValue.string(String(repeating: "x", count: 300))
        _ = try model.apply(
            .dataSource(name: "a", ifVersion: nil, createAs: DataSourceCreation(incarnation: "i", owner: 1000), .edit(.appendSections(["S"]))), limits: limits)
        var appended = 0
        while bytesError(.dataSource(name: "a", ifVersion: nil, createAs: nil, .edit(.appendItems([Item("i\(appended)", data: ["t": text])], toSection: "S")))) == nil {
            appended += 1
        }
        let a = try #require(model.dataSources["a"])
        #expect(appended == 4, "three fit under 1,000 bytes, the fourth carries the user past it")
        #expect(model.storedBytes(of: 1000) == a.snapshot.storedBytes && a.snapshot.storedBytes > 1_000)
        #expect(bytesError(.dataSource(name: "a", ifVersion: nil, createAs: nil, .edit(.appendItems(["tiny"], toSection: "S")))) == "maxBytesPerUser")
        #expect(bytesError(.createDataSource(name: "b", incarnation: "j", content: DataSourceContent(owner: 1000))) == nil, "an empty one stores nothing")
        // Removing always works and gives the bytes back.
        #expect(bytesError(.dataSource(name: "a", ifVersion: nil, createAs: nil, .edit(.deleteItems(["i0", "i1"])))) == nil)
        #expect(model.storedBytes(of: 1000) == a.snapshot.storedBytes && a.snapshot.storedBytes < 1_000)
        // An apply is measured exactly: what it would store in place of what is there.
        let big = try Snapshot([(Section("S"), (0..<5).map { Item("n\($0)", data: ["t": text]) })])
        #expect(bytesError(.dataSource(name: "a", ifVersion: nil, createAs: nil, .replaceSnapshot(big, reloadData: false))) == "maxBytesPerUser")
        let small = try Snapshot([(Section("S"), [Item("n0", data: ["t": text])])])
        #expect(bytesError(.dataSource(name: "a", ifVersion: nil, createAs: nil, .replaceSnapshot(small, reloadData: false))) == nil)
        #expect(model.storedBytes(of: 1000) == small.storedBytes)
        // An outline's own copies count too: payloads collapsed away inside one are not a way around it.
        var outline = SectionSnapshot()
        try outline.append([Item("parent")])
        try outline.append([Item("hidden", data: ["t": text])], to: "parent")
        _ = try model.apply(.dataSource(name: "a", ifVersion: nil, createAs: nil, .replaceOutline(section: "S", outline)), limits: limits)
        #expect(model.storedBytes(of: 1000) == a.storedBytes && a.storedBytes == a.snapshot.storedBytes + outline.storedBytes)
        #expect(a.snapshot.storedBytes < 20 && a.storedBytes > 300, "the collapsed payload is counted")
        // Root is exempt; dropping gives everything back.
        _ = try model.apply(.createDataSource(name: "r", incarnation: "k", content: DataSourceContent(owner: 0, snapshot: big)), limits: limits)
        _ = try model.apply(.dropDataSource(name: "a"), limits: limits)
        #expect(model.storedBytes(of: 1000) == 0 && model.storedBytes(of: 0) == big.storedBytes)
    }

    @Test func ownersSurviveTheStoredEncodings() throws {
        var content = DataSourceContent(owner: 1000, version: 3)
        content.snapshot = try Snapshot([(Section("S"), ["a"])])
        let decoded = try StateCoding.decodeContent(StateCoding.encode(content))
        #expect(decoded.owner == 1000 && decoded.version == 3)
        // What was stored before owners existed belongs to root.
        #expect(try StateCoding.decodeContent(Array(#"{"version":1,"sections":[],"layout":{}}"#.utf8)).owner == 0)
        #expect(try StateCoding.decodeRegistration(StateCoding.encode(try registration("r", owner: 1000))).owner == 1000)
        #expect(try StateCoding.decodeRegistration(Array(#"{"name":"r","definition":{"contentConfiguration":{"type":"cell"}}}"#.utf8)).owner == 0)
        #expect(throws: StorageError.self) {
            try StateCoding.decodeRegistration(Array(#"{"name":"r","owner":-1,"definition":{"contentConfiguration":{"type":"cell"}}}"#.utf8))
        }
    }

    @Test func loadingRecountsUsage() throws {
        let model = StateModel()
        var content = DataSourceContent(owner: 1000)
        content.snapshot = try Snapshot([(Section("S"), ["a", "b"])])
        model.restoreRegistrations([try registration("r", owner: 1000)])
        try model.restore(StoredDataSource(name: "d", incarnation: "i", checkpoint: content, checkpointBytes: 0))
        #expect(model.usage(of: 1000) == OwnerUsage(dataSources: 1, items: 2, registrations: 1))
    }
}
