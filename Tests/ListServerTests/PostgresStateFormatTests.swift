import DiffableCore
import Foundation
import ListClient
import ListStorePostgres
import ListWire
import PostgresTestServer
import Testing

/// A PostgreSQL database an earlier release wrote: Tests/Fixtures/postgres-format-N.sql (`pg_dump
/// --no-owner --no-privileges --inserts`), its answers in postgres-format-N.expected.jsonl.
struct PostgresFixture: Sendable, CustomTestStringConvertible {
    let format: Int
    var dump: URL { stateFixturesDirectory.appendingPathComponent("postgres-format-\(format).sql") }
    var expected: URL { stateFixturesDirectory.appendingPathComponent("postgres-format-\(format).expected.jsonl") }
    var testDescription: String { "postgres-format-\(format)" }

    /// Every fixture present, oldest format first.
    static var all: [PostgresFixture] {
        directoryEntries(stateFixturesDirectory).compactMap { fixtureFormat(of: $0, prefix: "postgres-format-", suffix: ".sql") }.sorted()
            .map(PostgresFixture.init)
    }

    /// A new server whose `listd` database holds the dump.
    func restored() throws -> PostgresTestServer {
        let postgres = try PostgresTestServer()
        try postgres.psql(try String(contentsOf: dump, encoding: .utf8))
        return postgres
    }
}

/// What earlier releases stored in PostgreSQL opens in this listd, as `StateFormatTests` checks for the
/// state directory: served exactly, migrated in place, new changes kept, views resumed across the
/// upgrade; a database of a newer format is refused and left as it was.
@Suite("Stored formats: PostgreSQL", .serialized)
struct PostgresStateFormatTests {
    @Test func everyFormatUpToThisOneHasAFixture() {
        let fixtures = PostgresFixture.all
        #expect(!fixtures.isEmpty)
        for fixture in fixtures {
            #expect(fixture.format <= PostgresStore.schemaVersion, "a fixture of a format this listd does not know: \(fixture)")
            #expect(FileManager.default.fileExists(atPath: fixture.expected.path), "\(fixture.expected.path)")
        }
    }

    @Test(arguments: PostgresFixture.all)
    func aDatabaseOfAnEarlierReleaseOpens(_ fixture: PostgresFixture) throws {
        let postgres = try fixture.restored()
        #expect(try postgres.psql("SELECT version FROM listd_schema") == "\(fixture.format)\n")
        let exchanges = try RecordedExchange.all(in: fixture.expected)
        let changed = try #require(RecordedDataSource.all(in: exchanges).max { $0.version < $1.version }, "no data source in \(fixture.expected.path)")

        var daemon = try Daemon(arguments: ["--postgres", postgres.uri])
        try RecordedExchange.replay(exchanges, on: daemon, providersBeforeNamespaces: fixture.format < 2)
        #expect(try postgres.psql("SELECT version FROM listd_schema") == "\(PostgresStore.schemaVersion)\n", "migrated in place")
        let (event, unregistered, served) = try resumeChangeAndUnregister(changed, on: daemon)
        #expect(try daemon.stop() == 0)

        daemon = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try servedState(daemon) == served)
        #expect(try !listsRegistration(unregistered, on: daemon), "unregistered after the upgrade, back after a restart: \(unregistered)")
        let fromRelease = try RecordedExchange.exchange(
            ["cmd": "attach", "dataSource": .string(changed.name), "fromVersion": .int(changed.version), "incarnation": .string(changed.incarnation)],
            on: daemon.connect())
        #expect(fromRelease.reply["result"]?["resumed"] == true && fromRelease.events == [event], "\(fromRelease)")
        for recorded in exchanges where recorded.request["fromVersion"] != nil && recorded.request["dataSource"] == .string(changed.name) {
            guard recorded.reply["result"]?["resumed"] == true else { continue }
            let again = try RecordedExchange.exchange(recorded.request, on: daemon.connect())
            #expect(again.events == recorded.events + [event], "\(recorded.request)")
        }
        #expect(try daemon.stop() == 0)
    }

    /// The newest fixture with `listd_schema` moved past this listd's: refused at start, naming both
    /// versions and the database, with nothing in the database changed.
    @Test func aDatabaseOfANewerFormatIsRefusedUntouched() throws {
        let fixture = try #require(PostgresFixture.all.last)
        let postgres = try fixture.restored()
        let newer = PostgresStore.schemaVersion + 1
        try postgres.psql("UPDATE listd_schema SET version = \(newer)")
        // Every table of the database (listd's and any other), each with its rows, in one text.
        let contents = """
            SELECT string_agg(format('%s: %s', t.table_name,
                (xpath('/row/c/text()', query_to_xml(format('SELECT md5(coalesce(string_agg(x::text, %L ORDER BY x::text), %L)) AS c FROM %I.%I x',
                    '|', '', t.table_schema, t.table_name), false, true, '')))[1]::text), E'\\n' ORDER BY t.table_name)
            FROM information_schema.tables t WHERE t.table_schema = 'public'
            """
        let before = try postgres.psql(contents)
        #expect(before.contains("listd_schema: ") && before.contains("listd_change_log: "), "\(before)")

        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try runRefusedListd(["--socket", directory + "/listd.sock", "--postgres", postgres.uri])
        #expect(run.ended && run.status == 69, "listd started on a database of a newer format, or did not exit with EX_UNAVAILABLE (69), as PROTOCOL.md says: \(run.status)")
        #expect(run.err.contains("at host=\(postgres.directory) port=5432 dbname=listd user=postgres has listd schema version \(newer)"), "\(run.err)")
        #expect(run.err.contains("this listd (schema version \(PostgresStore.schemaVersion))"), "\(run.err)")
        #expect(try postgres.psql(contents) == before)
        #expect(try postgres.psql("SELECT version FROM listd_schema") == "\(newer)\n")
    }
}
