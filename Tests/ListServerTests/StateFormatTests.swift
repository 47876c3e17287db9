import DiffableCore
import Foundation
import ListClient
import ListStoreSQLite
import ListWire
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A state directory an earlier release left (Tests/Fixtures/state-format-N/VARIANT, its answers in
/// VARIANT.expected.jsonl beside it): after a clean stop, or killed with its last changes in SQLite's log.
struct StateDirectoryFixture: Sendable, CustomTestStringConvertible {
    let format: Int
    let variant: String
    var directory: URL { stateFixturesDirectory.appendingPathComponent("state-format-\(format)/\(variant)") }
    var expected: URL { stateFixturesDirectory.appendingPathComponent("state-format-\(format)/\(variant).expected.jsonl") }
    var testDescription: String { "state-format-\(format)/\(variant)" }

    /// Every fixture present, oldest format first.
    static var all: [StateDirectoryFixture] {
        directoryEntries(stateFixturesDirectory).compactMap { fixtureFormat(of: $0, prefix: "state-format-") }.sorted().flatMap { format in
            directoryEntries(stateFixturesDirectory.appendingPathComponent("state-format-\(format)")).filter { !$0.hasSuffix(".jsonl") }
                .map { StateDirectoryFixture(format: format, variant: $0) }
        }
    }

    /// A fresh state directory (mode 0700, files 0600, as listd makes them) holding a copy of the fixture.
    func copy() throws -> String {
        let state = try makeTemporaryDirectory() + "/state"
        guard mkdir(state, 0o700) == 0 else { throw ClientError("cannot make \(state)") }
        for name in directoryEntries(directory) {
            try FileManager.default.copyItem(atPath: directory.path + "/" + name, toPath: state + "/" + name)
            chmod(state + "/" + name, 0o600)
        }
        return state
    }
}

/// What earlier releases stored opens in this listd: each state directory of Tests/Fixtures (made by the
/// release that introduced its format, scripts/make-state-fixtures) is served exactly as that release
/// served it, is brought to this listd's format in place, takes new changes that survive a restart, and
/// views resume across the upgrade. A database of a newer format is refused, untouched.
@Suite("Stored formats: SQLite", .serialized)
struct StateFormatTests {
    /// `PRAGMA user_version` of a database, read with the sqlite3 shell.
    static func userVersion(_ database: String) throws -> Int? {
        Int(try runProgram(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, "PRAGMA user_version"]).out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `user_version` from a database file's header, read without SQLite: a fixture is never opened in
    /// place (SQLite would fold its write-ahead log into it, and it would no longer be what the release left).
    static func headerUserVersion(_ database: String) -> Int? {
        guard let header = FileManager.default.contents(atPath: database), header.count >= 100 else { return nil }
        return header[60..<64].reduce(0) { $0 << 8 | Int($1) }
    }

    @Test func everyFormatUpToThisOneHasFixtures() throws {
        let fixtures = StateDirectoryFixture.all
        #expect(fixtures.contains { $0.variant == "clean" } && fixtures.contains { $0.variant == "killed" }, "\(fixtures)")
        for fixture in fixtures {
            #expect(fixture.format <= SQLiteStore.schemaVersion, "a fixture of a format this listd does not know: \(fixture)")
            #expect(FileManager.default.fileExists(atPath: fixture.expected.path), "\(fixture.expected.path)")
            #expect(Self.headerUserVersion(fixture.directory.path + "/listd.sqlite3") == fixture.format, "\(fixture)")
            if fixture.variant == "killed" {
                let log = fixture.directory.path + "/listd.sqlite3-wal"
                #expect((fileFingerprint(log)?.bytes.count ?? 0) > 0, "the killed release's last changes are in \(log)")
            }
        }
    }

    @Test(arguments: StateDirectoryFixture.all)
    func aStateDirectoryOfAnEarlierReleaseOpens(_ fixture: StateDirectoryFixture) throws {
        let state = try fixture.copy()
        defer { try? FileManager.default.removeItem(atPath: (state as NSString).deletingLastPathComponent) }
        let exchanges = try RecordedExchange.all(in: fixture.expected)
        let sources = RecordedDataSource.all(in: exchanges)
        let changed = try #require(sources.max { $0.version < $1.version }, "no data source in \(fixture.expected.path)")

        var daemon = try Daemon(arguments: ["--state-directory", state])
        try RecordedExchange.replay(exchanges, on: daemon, providersBeforeNamespaces: fixture.format < 3)
        let (event, unregistered, served) = try resumeChangeAndUnregister(changed, on: daemon)
        #expect(try daemon.stop() == 0)
        #expect(try Self.userVersion(state + "/listd.sqlite3") == SQLiteStore.schemaVersion, "stored in this listd's format")

        daemon = try Daemon(arguments: ["--state-directory", state])
        #expect(try servedState(daemon) == served)
        #expect(try !listsRegistration(unregistered, on: daemon), "unregistered after the upgrade, back after a restart: \(unregistered)")
        // The release's events and the new one, from the log, in order.
        let fromRelease = try RecordedExchange.exchange(
            ["cmd": "attach", "dataSource": .string(changed.name), "fromVersion": .int(changed.version), "incarnation": .string(changed.incarnation)],
            on: daemon.connect())
        #expect(fromRelease.reply["result"]?["resumed"] == true && fromRelease.events == [event], "\(fromRelease)")
        let replayed = exchanges.filter { $0.request["fromVersion"] != nil && $0.request["dataSource"] == .string(changed.name) }
        for recorded in replayed where recorded.reply["result"]?["resumed"] == true {
            let again = try RecordedExchange.exchange(recorded.request, on: daemon.connect())
            #expect(again.events == recorded.events + [event], "\(recorded.request)")
        }
        #expect(try daemon.stop() == 0)
    }

    /// A database a newer listd wrote (the newest fixture with a higher `user_version`): listd stops at
    /// start, saying which versions and which file, and leaves the files as they were.
    @Test func aDatabaseOfANewerFormatIsRefusedUntouched() throws {
        let fixture = try #require(StateDirectoryFixture.all.last { $0.variant == "clean" })
        let state = try fixture.copy()
        defer { try? FileManager.default.removeItem(atPath: (state as NSString).deletingLastPathComponent) }
        let database = state + "/listd.sqlite3"
        let newer = SQLiteStore.schemaVersion + 1
        _ = try runProgram(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, "PRAGMA user_version = \(newer)"])
        let databaseFiles = { directoryEntries(URL(fileURLWithPath: state)).filter { $0.hasPrefix("listd.sqlite3") } }
        let before = databaseFiles().map { ($0, fileFingerprint(state + "/" + $0)) }
        #expect(before.map(\.0) == ["listd.sqlite3"])

        let run = try runRefusedListd(["--socket", state + "/../listd.sock", "--state-directory", state])
        #expect(run.ended && run.status == 69, "listd started on a database of a newer format, or did not exit with EX_UNAVAILABLE (69), as PROTOCOL.md says: \(run.status)")
        #expect(run.err.contains("\(database) has schema version \(newer)"), "\(run.err)")
        #expect(run.err.contains("this listd (schema version \(SQLiteStore.schemaVersion))"), "\(run.err)")
        let after = databaseFiles().map { ($0, fileFingerprint(state + "/" + $0)) }
        #expect(after.map(\.0) == before.map(\.0), "files left beside the database: \(after.map(\.0))")
        for ((name, was), (_, now)) in zip(before, after) {
            #expect(was?.bytes == now?.bytes && was?.modified == now?.modified, "\(name) changed")
        }
        #expect(try Self.userVersion(database) == newer)
    }
}
