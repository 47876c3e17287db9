import Foundation
import ListClient
import ListWire
import PostgresTestServer
import Testing

/// PostgreSQL schema 2: registrations stored under their key (owner and name). A schema-1 database,
/// whose rows were keyed by name with the owner inside, is migrated in place when listd starts; what
/// listd writes afterwards finds those rows.
@Suite("PostgreSQL store: registrations keyed by owner", .serialized)
struct PostgresRegistrationKeyMigrationTests {
    @Test func aSchemaOneDatabaseIsKeyedByOwner() throws {
        let postgres = try PostgresTestServer()
        // listd makes the tables (schema 2, empty); the rows are then put back as listd 1 wrote them:
        // keyed by name, the owner inside ("1:row" a name uid 7 once took, which the migration must not
        // collide with uid 1's "row").
        try Daemon(arguments: ["--postgres", postgres.uri]).stop()
        func insert(_ name: String, owner: Int) -> String {
            let stored = #"{"definition":{"contentConfiguration":{"type":"cell"}},"name":"\#(name)","owner":\#(owner)}"#
            return "INSERT INTO listd_registrations(name, registration) VALUES ('\(name)', convert_to('\(stored)', 'UTF8'));"
        }
        try postgres.psql(
            """
            \(insert("1:row", owner: 7)) \(insert("row", owner: 1)) \(insert("card", owner: 65534))
            UPDATE listd_schema SET version = 1;
            """)

        let daemon = try Daemon(arguments: ["--postgres", postgres.uri])
        #expect(try postgres.psql("SELECT version FROM listd_schema") == "2\n")
        let migrated = try postgres.psql("SELECT string_agg(name, ',' ORDER BY position) FROM listd_registrations")
        #expect(migrated == "7:1:row,1:row,65534:card\n")
        func served(_ daemon: Daemon) throws -> [String] {
            try #require(try daemon.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue).map {
                "\($0["owner"]?.intValue ?? -1):\($0["registration"]?.stringValue ?? "?")"
            }
        }
        #expect(try served(daemon) == ["7:1:row", "1:row", "65534:card"], "each in its owner's namespace, in their order")
        // Writes by key reach the migrated rows: root deletes uid 7's "1:row" and makes its own "card".
        let unregistered = try daemon.request(["cmd": "unregister", "registration": "1:row", "owner": 7])
        #expect(unregistered["result"]?["owner"] == 7, "\(unregistered)")
        let registered = try daemon.request(["cmd": "register", "registration": "card", "contentConfiguration": ["type": "valueCell"]])
        #expect(registered["result"]?["owner"] == 0, "\(registered)")
        #expect(try daemon.stop() == 0)
        let stored = try postgres.psql("SELECT string_agg(name, ',' ORDER BY position) FROM listd_registrations")
        #expect(stored == "1:row,65534:card,0:card\n")
        let servedAfterRestart = try served(Daemon(arguments: ["--postgres", postgres.uri]))
        #expect(servedAfterRestart == ["1:row", "65534:card", "0:card"])
    }
}
