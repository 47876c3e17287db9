import CellCore
import DiffableCore
import ListEngine
import ListLayout
import ListStore
import ListWire
import Testing

/// One account per user for every byte listd holds because of it: layouts and provider rules are
/// charged to the data source's owner, the retained change log too (its oldest events dropped when the
/// owner is at the quota), and `maxBytesPerUser` refuses the request that would pass it naming the part.
@Suite("User accounts: every byte charged to someone")
struct UserAccountTests {
    func limits(bytes: Int) -> ChangeLimits {
        var limits = ChangeLimits(maximumDataSources: 100, maximumItemsPerDataSource: 100_000, maximumIdentifierBytes: 64, maximumRegistrations: 50)
        limits.quota = OwnerQuota(maximumDataSources: 10, maximumItems: 100_000, maximumRegistrations: 10, maximumBytes: bytes)
        return limits
    }

    func engine(changeLogBytes: Int = 64 << 20) -> StateEngine<NoViews> {
        StateEngine(retention: (10_000, changeLogBytes))
    }

    let alice = AccountHolder(uid: 1000)

    /// A layout of `sections` named section layouts (about 60 bytes each as stored).
    func layout(sections: Int) -> LayoutDescription {
        LayoutDescription(sections: Dictionary(uniqueKeysWithValues: (0..<sections).map {
            ("section-with-a-long-name-\($0)", SectionLayout.list(ListSectionConfiguration(appearance: .insetGrouped)))
        }))
    }

    func create(_ engine: StateEngine<NoViews>, _ name: String, owner: UInt32 = 1000, limits: ChangeLimits) throws {
        _ = try engine.commit(
            .dataSource(name: name, ifVersion: nil, createAs: DataSourceCreation(incarnation: "i-\(name)", owner: owner), .edit(.appendSections(["S"]))),
            limits: limits, recordingUndo: false)
    }

    func part(of error: () throws -> Void) -> String? {
        do {
            try error()
            return nil
        } catch let error as WireError {
            return error.code == .quotaExceeded ? error.details["part"]?.stringValue : "\(error.code.rawValue): \(error.message)"
        } catch {
            return "\(error)"
        }
    }

    @Test func layoutsAndProviderRulesAreChargedToTheOwnerAndRefusedPastTheQuota() throws {
        let limits = limits(bytes: 60_000)
        let engine = engine()
        try create(engine, "d", limits: limits)
        let accounts = engine.model.accounts
        #expect(accounts.chargedBytes(of: alice)[.layouts] == 0, "the default layout costs nothing")
        _ = try engine.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(layout(sections: 20))), limits: limits, recordingUndo: false)
        let layoutBytes = accounts.chargedBytes(of: alice)[.layouts]
        #expect(layoutBytes > 20 * 40)
        // A layout that would carry alice past her quota is refused, naming the part; nothing changed.
        let refused = part {
            _ = try engine.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(layout(sections: 2_000))), limits: limits, recordingUndo: false)
        }
        #expect(refused == "layouts")
        #expect(accounts.chargedBytes(of: alice)[.layouts] == layoutBytes && engine.model.dataSources["d"]?.version == 2)
        // Provider rules are charged too; replacing them charges the difference.
        let provider = CellProvider(rules: (0..<30).map { CellProvider.Rule(section: "S\($0)", registration: "row") })
        var unchecked = limits
        unchecked.checksRegistrations = false
        _ = try engine.commit(
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setCellProvider(provider, elementKind: nil)), limits: unchecked, recordingUndo: false)
        #expect(accounts.chargedBytes(of: alice)[.cellProviders] > 30 * 10)
        // Dropping the data source gives every part back.
        _ = try engine.commit(.dropDataSource(name: "d"), limits: limits, recordingUndo: false)
        engine.retire(try #require(engine.dataSources["d"]))
        #expect(accounts.chargedBytes(of: alice).isEmpty, "\(accounts.chargedBytes(of: alice))")
    }

    /// Finding 2: alternating two large snapshots grew a data source's retained events to
    /// `changeLogBytes` whatever the owner's quota. Now they are charged, and the oldest go first.
    @Test func theChangeLogIsChargedAndTrimmedToTheOwnersQuota() throws {
        let quota = 400_000
        let limits = limits(bytes: quota)
        let engine = engine()
        try create(engine, "d", limits: limits)
        let first = try Snapshot([(Section("S"), (0..<2_000).map { Item("a\($0)") })])
        let second = try Snapshot([(Section("S"), (0..<2_000).map { Item("b\($0)") })])
        for round in 0..<40 {
            _ = try engine.commit(
                .dataSource(name: "d", ifVersion: nil, createAs: nil, .replaceSnapshot(round.isMultiple(of: 2) ? first : second, reloadData: false)),
                limits: limits, recordingUndo: false)
        }
        let served = try #require(engine.dataSources["d"])
        let account = engine.model.accounts.chargedBytes(of: alice)
        #expect(account[.changeLog] == served.retained.byteCount, "the account follows the retained events")
        #expect(account[.changeLog] > 0, "the newest events are kept")
        #expect(account.total <= quota, "\(account)")
        // Views resuming from before the oldest kept event get the whole snapshot (no events).
        #expect(served.retained.events(after: 2) == nil)
        #expect(served.retained.events(after: served.version - 1)?.count == 1)
        // Root's data sources keep their whole log (root is exempt); a root relay is not.
        try create(engine, "r", owner: 0, limits: limits)
        for round in 0..<10 {
            _ = try engine.commit(
                .dataSource(name: "r", ifVersion: nil, createAs: nil, .replaceSnapshot(round.isMultiple(of: 2) ? first : second, reloadData: false)),
                limits: limits, recordingUndo: false)
        }
        #expect(engine.dataSources["r"]?.retained.events(after: 1)?.count == 10)
        #expect(!AccountHolder(uid: 0).isCharged && AccountHolder(uid: 0, relay: true).isCharged)
        // Dropping the data source releases its log.
        _ = try engine.commit(.dropDataSource(name: "d"), limits: limits, recordingUndo: false)
        engine.retire(served)
        #expect(engine.model.accounts.chargedBytes(of: alice)[.changeLog] == 0)
    }

    /// A recount from the whole state (a load, an undo) agrees with what was charged change by change.
    @Test func aRecountAgreesWithTheCharges() throws {
        let limits = limits(bytes: .max)
        let engine = engine()
        try create(engine, "d", limits: limits)
        _ = try engine.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(layout(sections: 5))), limits: limits, recordingUndo: false)
        _ = try engine.commit(
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .edit(.appendItems([Item("x", data: ["t": "some text"])], toSection: "S"))),
            limits: limits, recordingUndo: false)
        let charged = engine.model.accounts.chargedBytes(of: alice)
        let undone = try engine.commit(
            .dataSource(name: "d", ifVersion: nil, createAs: nil, .setLayout(layout(sections: 9))), limits: limits, recordingUndo: true)
        _ = engine.undo([try #require(undone.outcome.undo)], dataSources: ["d"])
        var recounted = engine.model.accounts.chargedBytes(of: alice)
        recounted[.changeLog] = charged[.changeLog]
        #expect(recounted == charged)
    }

    @Test func aCheckRefusesOnlyGrowthAndNamesThePart() throws {
        let accounts = UserAccounts()
        accounts.charge(alice, .cells, 900)
        accounts.liveBytes = { _ in (queues: 50, output: 40) }
        #expect(accounts.bytes(of: alice).total == 990)
        do {
            try accounts.check(alice, adding: 20, to: .cells, limit: 1_000)
            Issue.record("passed")
        } catch {
            #expect(error.code == .quotaExceeded && error.details["part"] == "cells" && error.details["held"] == 990)
        }
        try accounts.check(alice, adding: 20, releasing: 30, to: .cells, limit: 1_000)
        try accounts.check(AccountHolder(uid: 0), adding: 1 << 30, to: .cells, limit: 1_000)
        #expect(throws: WireError.self) { try accounts.check(AccountHolder(uid: 0, relay: true), adding: 1 << 30, to: .cells, limit: 1_000) }
    }
}
