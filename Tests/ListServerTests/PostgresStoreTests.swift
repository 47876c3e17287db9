import DiffableCore
import Foundation
import ListClient
import ListWire
import PostgresTestServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The PostgreSQL store against a real PostgreSQL (started per test, see `PostgresServer`): what listd
/// acknowledged survives restarts and `kill -9`, the schema is listd's own, a write that another
/// writer beat is run again on the caught-up state, and a backup is an embedded store's database a listd serves as it is.
@Suite("PostgreSQL store", .serialized)
struct PostgresStoreTests {
    @Test func aCleanRestartKeepsEverything() throws {
        let postgres = try PostgresTestServer()
        let queries: [JSONValue] = [
            ["cmd": "snapshot", "dataSource": "tasks"], ["cmd": "sectionSnapshot", "dataSource": "tasks", "section": "tree"],
            ["cmd": "layout", "dataSource": "tasks"], ["cmd": "registrations"], ["cmd": "listDataSources"],
            ["cmd": "cellProvider", "dataSource": "tasks"], ["cmd": "snapshot", "dataSource": "big"],
        ]
        // Large enough to be stored in parts.
        let bigItems: [JSONValue] = (0..<20_000).map { ["id": .string("item-\($0)"), "data": ["n": .int($0)]] }
        var before: [JSONValue] = []
        do {
            let daemon = try Daemon(arguments: ["--postgres", postgres.uri])
            let connection = try daemon.connect()
            for request: JSONValue in [
                ["cmd": "register", "registration": "plain", "contentConfiguration": ["type": "cell", "text": "{{title}}"]],
                ["cmd": "appendSections", "dataSource": "tasks", "sections": [["id": "todo", "data": ["title": "To do"]], "tree"]],
                ["cmd": "appendItems", "dataSource": "tasks", "toSection": "todo", "items": [["id": "a", "data": ["title": "Alpha", "n": 1]], "b", "c"]],
                ["cmd": "batch", "dataSource": "tasks", "operations": [["cmd": "moveItem", "item": "c", "beforeItem": "a"], ["cmd": "deleteItems", "items": ["b"]]]],
                ["cmd": "updateItems", "dataSource": "tasks", "items": [["id": "a", "data": ["title": "Alpha!", "n": 2.5]]]],
                [
                    "cmd": "applySectionSnapshot", "dataSource": "tasks", "section": "tree",
                    "snapshot": ["items": [["id": "root", "children": ["leaf1", ["id": "leaf2", "data": ["x": true]]]], "other"]],
                ],
                ["cmd": "expand", "dataSource": "tasks", "section": "tree", "items": ["root"]],
                ["cmd": "setLayout", "dataSource": "tasks", "layout": ["default": ["list": ["appearance": "insetGrouped"]]]],
                ["cmd": "setCellProvider", "dataSource": "tasks", "rules": [], "default": "plain"],
                ["cmd": "apply", "dataSource": "big", "snapshot": ["sections": [["id": "s", "items": .array(bigItems)]]]],
                ["cmd": "appendItems", "dataSource": "big", "items": ["after"]],
                ["cmd": "createDataSource", "dataSource": "gone"],
                ["cmd": "dropDataSource", "dataSource": "gone"],
            ] {
                let reply = try connection.request(request)
                #expect(reply["ok"] == true, "\(request) → \(reply)")
            }
            before = try queries.map { try connection.request($0)["result"] ?? .null }
            #expect(try daemon.stop() == 0)
        }
        let daemon = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(daemon.notify.messages.joined().contains("loaded 2 data sources and 1 registration from PostgreSQL at host=\(postgres.directory) port=5432 dbname=listd user=postgres"), "\(daemon.notify.messages)")
        let after = try queries.map { try daemon.request($0)["result"] ?? .null }
        for (index, query) in queries.enumerated() { #expect(before[index] == after[index], "\(query)") }
        #expect(after[6]["sections"]?.arrayValue.first?["items"]?.arrayValue.count == 20_001)
        // listd's tables, with one row per version of each data source, up to its version.
        #expect(try postgres.psql("SELECT version FROM listd_schema") == "2\n")
        let tasksVersion = try #require(after[4]["dataSources"]?.arrayValue.first { $0["dataSource"] == "tasks" || $0["name"] == "tasks" }?["version"]?.intValue)
        let logged = try postgres.psql(
            "SELECT string_agg(c.version::text, ',' ORDER BY c.version) FROM listd_change_log c JOIN listd_data_sources d ON d.id = c.source WHERE d.name = 'tasks'")
        #expect(logged == (1...tasksVersion).map(String.init).joined(separator: ",") + "\n", "\(logged)")
        let versions = try postgres.psql("SELECT name || ':' || version FROM listd_data_sources ORDER BY name")
        #expect(versions == "big:2\ntasks:\(tasksVersion)\n", "\(versions)")
    }

    /// Five writers of single appends and five of 20-operation batches while listd is killed with
    /// SIGKILL, three times: every acknowledged write is there after the restart, every batch whole or absent.
    @Test(arguments: ["always", "periodic"])
    func killNineLosesNoAcknowledgedWrite(sync: String) throws {
        let postgres = try PostgresTestServer()
        try checkKillNineLosesNoAcknowledgedWrite(minimumPerRound: 20) { try Daemon(arguments: ["--postgres", postgres.uri, "--sync", sync]) }
        // Versions are contiguous in the log.
        let gaps = try postgres.psql(
            "SELECT count(*) FROM (SELECT version - lag(version) OVER (ORDER BY version) AS step FROM listd_change_log) s WHERE step <> 1")
        #expect(gaps == "0\n")
    }

    /// Another writer stored the next version first (simulated in SQL, without a notification, as a
    /// missed one would look): this listd's write of that version stores nothing; listd catches up with
    /// the other writer's change and runs the mutation again on it, and the reply has the version after.
    @Test func aWriteThatDoesNotContinueTheStoredVersionIsRunAgainOnTheCaughtUpState() throws {
        let postgres = try PostgresTestServer()
        let daemon = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        #expect(try daemon.request(["cmd": "appendItems", "dataSource": "d", "items": ["a"]])["ok"] == true)
        try postgres.psql(
            """
            INSERT INTO listd_change_log(source, version, operation, changes)
                SELECT source, 3, convert_to(replace(convert_from(operation, 'UTF8'), '"a"', '"z"'), 'UTF8'), NULL
                FROM listd_change_log WHERE version = 2;
            UPDATE listd_data_sources SET version = 3 WHERE name = 'd';
            """)
        let view = try daemon.connect()
        #expect(try view.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()["version"] == 2)
        let retried = try daemon.request(["cmd": "appendItems", "dataSource": "d", "items": ["b"]])
        #expect(retried["result"]?["version"] == 4, "\(retried)")
        func items(_ daemon: Daemon) throws -> JSONValue? {
            try daemon.request(["cmd": "snapshot", "dataSource": "d"])["result"]?["sections"]?.arrayValue.first?["items"]
        }
        #expect(try items(daemon) == ["a", "z", "b"])
        // The view got the other writer's change, then this one's.
        let versions = try (0..<2).map { _ in try view.readJSON()?["version"] }
        #expect(versions == [3, 4])
        let storage = try daemon.request(["cmd": "stats"]).result()["storage"]
        #expect(storage?["writeFailures"] == 1 && storage?["shared"]?["conflicts"] == 1, "\(String(describing: storage))")
        // An ifVersion is checked against the stored version: the other writer's version 5 is caught up with first.
        try postgres.psql(
            """
            INSERT INTO listd_change_log(source, version, operation, changes)
                SELECT source, 5, convert_to(replace(convert_from(operation, 'UTF8'), '"a"', '"y"'), 'UTF8'), NULL
                FROM listd_change_log WHERE version = 2;
            UPDATE listd_data_sources SET version = 5 WHERE name = 'd';
            """)
        let expecting = try daemon.request(["cmd": "appendItems", "dataSource": "d", "items": ["c"], "ifVersion": 5])
        #expect(expecting["result"]?["version"] == 6, "\(expecting)")
        try daemon.stop()
        #expect(try items(Daemon(arguments: ["--postgres", postgres.uri])) == ["a", "z", "b", "y", "c"])
    }

    /// A write that keeps losing its version (a trigger refuses every version update, as endless other
    /// writers would) is run again three times, then fails with storage-failed and `conflict: true`,
    /// having changed nothing; once the database takes writes again, so does listd.
    @Test func aWriteThatKeepsLosingFailsAfterThreeRetries() throws {
        let postgres = try PostgresTestServer()
        let daemon = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        try postgres.psql(
            """
            CREATE FUNCTION refuse_versions() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
            CREATE TRIGGER refuse BEFORE UPDATE ON listd_data_sources FOR EACH ROW EXECUTE FUNCTION refuse_versions();
            """)
        let failed = try daemon.request(["cmd": "appendItems", "dataSource": "d", "items": ["a"]])
        #expect(failed["error"]?["code"] == "storage-failed" && failed["error"]?["conflict"] == true, "\(failed)")
        let shared = try daemon.request(["cmd": "stats"]).result()["storage"]?["shared"]
        #expect(shared?["conflicts"] == 4, "the first attempt and three retries: \(String(describing: shared))")
        #expect(try daemon.request(["cmd": "snapshot", "dataSource": "d"])["result"]?["version"] == 1)
        try postgres.psql("DROP TRIGGER refuse ON listd_data_sources")
        #expect(try daemon.request(["cmd": "appendItems", "dataSource": "d", "items": ["a"]])["result"]?["version"] == 2)
    }

    /// A backup is an embedded store's database that a listd serves with the same state.
    @Test func aBackupServesTheSameState() throws {
        let postgres = try PostgresTestServer()
        let daemon = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "d", "sections": [["id": "s", "data": ["title": "S"]]]])["ok"] == true)
        for index in 0..<30 {
            #expect(try daemon.request(["cmd": "appendItems", "dataSource": "d", "items": [["id": .string("i\(index)"), "data": ["n": .int(index)]]]])["ok"] == true)
        }
        #expect(try daemon.request(["cmd": "register", "registration": "r", "contentConfiguration": ["type": "cell", "text": "{{n}}"]])["ok"] == true)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let backup = try runExecutable("listctl", ["backup", directory + "/state/listd.sqlite3"], daemon: daemon)
        #expect(backup.status == 0, "\(backup.err)")
        let restored = try Daemon(arguments: ["--state-directory", directory + "/state"])
        for query: JSONValue in [["cmd": "snapshot", "dataSource": "d"], ["cmd": "registrations"]] {
            #expect(try restored.request(query)["result"] == daemon.request(query)["result"], "\(query)")
        }
    }

    /// The database goes away: a change fails with storage-failed and changes nothing. The failed change
    /// is undone in memory, so reads of that data source go on answering the last stored state (and an
    /// attached view gets no event for it); changes are refused while the store cannot be read, and
    /// `stats` says so. Once the database is back, listd notices by itself and takes changes; the view's
    /// versions go on without a gap.
    @Test func aLostDatabaseFailsChangesAndReadsGoOn() throws {
        let postgres = try PostgresTestServer()
        var daemon: Daemon? = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try daemon!.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        #expect(try daemon!.request(["cmd": "appendItems", "dataSource": "d", "items": ["a"]])["ok"] == true)
        #expect(try daemon!.request(["cmd": "appendSections", "dataSource": "other", "sections": ["o"]])["ok"] == true)
        let viewer = try daemon!.connect()
        #expect(try viewer.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()["version"] == 2)
        try postgres.stop(mode: "immediate")
        let failed = try daemon!.request(["cmd": "appendItems", "dataSource": "d", "items": ["b"]])
        #expect(failed["ok"] == false && failed["error"]?["code"] == "storage-failed", "\(failed)")
        // The failed change is undone in memory: reads of its data source answer the stored state.
        for _ in 0..<3 {
            let read = try daemon!.request(["cmd": "snapshot", "dataSource": "d"]).result()
            #expect(read["version"] == 2 && read["sections"]?.arrayValue.first?["items"] == ["a"], "\(read)")
            #expect(try daemon!.request(["cmd": "numberOfItems", "dataSource": "d"]).result()["count"] == 1)
        }
        #expect(try daemon!.request(["cmd": "snapshot", "dataSource": "other"])["result"]?["sections"]?.arrayValue.first?["id"] == "o")
        #expect(
            try eventually { try daemon!.request(["cmd": "stats"]).result()["storage"]?["available"] == false },
            "listd learns that the store cannot be read")
        let write = try daemon!.request(["cmd": "appendItems", "dataSource": "other", "items": ["x"]])
        #expect(write["error"]?["code"] == "storage-failed", "\(write)")
        #expect(write["error"]?["message"]?.stringValue?.contains("reads go on") == true, "\(write)")
        #expect(try daemon!.request(["cmd": "item", "dataSource": "d", "item": "a"])["ok"] == true)
        // Back: listd notices by itself; the failed change is gone, new ones are stored.
        try postgres.start()
        #expect(try eventually { try daemon!.request(["cmd": "stats"]).result()["storage"]?["available"] == true })
        #expect(try daemon!.request(["cmd": "snapshot", "dataSource": "d"])["result"]?["sections"]?.arrayValue.first?["items"] == ["a"])
        #expect(try daemon!.request(["cmd": "appendItems", "dataSource": "d", "items": ["c"]])["ok"] == true)
        // The view got nothing for the failed change, and version 3 is the stored one.
        let event = try #require(try viewer.readJSON(timeout: .seconds(20)))
        #expect(event["event"] == "changes" && event["version"] == 3, "\(event)")
        #expect(event["changes"]?.description.contains("\"c\"") == true && event["changes"]?.description.contains("\"b\"") == false, "\(event)")
        try daemon!.stop(signal: SIGKILL)
        daemon = nil
        let restarted = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try restarted.request(["cmd": "snapshot", "dataSource": "d"])["result"]?["sections"]?.arrayValue.first?["items"] == ["a", "c"])
    }

    @Test func anUnreachableDatabaseStopsTheStartWithTheReason() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try runProgram(
            binaryDirectory.appendingPathComponent("listd").path,
            ["--socket", directory + "/listd.sock", "--postgres", "postgresql://listd:secret@/listd?host=\(directory)"], timeout: .seconds(30))
        #expect(result.status != 0)
        #expect(result.err.contains("Cannot connect to PostgreSQL at host=\(directory) dbname=listd user=listd:"), "\(result.err)")
        #expect(!result.err.contains("secret"), "the password is not logged")
        // However the password is given: a URI's query, a key=value pair with spaces or quotes.
        for uri in [
            "postgresql:///listd?host=\(directory)&password=hunter2", "host=\(directory) dbname=listd password = hunter2",
            "host=\(directory) dbname=listd password='hunter2 x'",
            // libpq's own message for a string that does not parse quotes the part it stopped at.
            "postgresql://listd:hunter2%zz@/listd?host=\(directory)", "host=\(directory) dbname=listd password='hunter2",
        ] {
            let refused = try runProgram(binaryDirectory.appendingPathComponent("listd").path, ["--socket", directory + "/listd.sock", "--postgres", uri], timeout: .seconds(30))
            #expect(refused.status != 0)
            #expect(!refused.err.contains("hunter2"), "\(refused.err)")
        }
    }
}
