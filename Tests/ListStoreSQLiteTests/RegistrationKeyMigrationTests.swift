import CellCore
import DiffableCore
import Foundation
@testable import ListEngine
import ListStore
import ListStoreSQLite
import TestSupport
import Testing

/// Schema 3: registrations stored under their key (owner and name). A schema-2 database, whose rows were
/// keyed by name with the owner inside, is migrated in place; what is written afterwards finds those rows.
@Suite("SQLite store: registrations keyed by owner")
struct RegistrationKeyMigrationTests {
    @Test func aSchemaTwoDatabaseIsKeyedByOwner() throws {
        let directory = try SQLiteStoreTests.Directory()
        // A schema-2 database as listd wrote it: the owner inside each registration, the row keyed by name
        // ("1:row" a name uid 7 once took, which the migration must not collide with).
        func stored(_ name: String, owner: UInt32) throws -> String {
            var registration = try Registration(name: name, definition: ["contentConfiguration": ["type": "cell"]])
            registration.owner = owner
            return String(decoding: StateCoding.encode(registration), as: UTF8.self)
        }
        _ = try SQLiteStore(path: directory.database, sync: .always)  // schema 3, empty
        let sql = """
            INSERT INTO registrations VALUES (1, '1:row', CAST('\(try stored("1:row", owner: 7))' AS BLOB));
            INSERT INTO registrations VALUES (2, 'row', CAST('\(try stored("row", owner: 1))' AS BLOB));
            INSERT INTO registrations VALUES (3, 'card', CAST('\(try stored("card", owner: 65534))' AS BLOB));
            PRAGMA user_version = 2;
            """
        let shell = try runSQLiteShell(directory.database, sql)
        #expect(shell.status == 0, "\(shell.error)")

        let store = try SQLiteStore(path: directory.database, sync: .always)
        let model = try StateModel(loading: try store.load())
        #expect(model.registrationOrder == ["7:1:row", "1:row", "65534:card"], "keyed, in their order")
        // Records written by keys now reach the migrated rows.
        try store.write([.unregister(name: "1:row")])
        var bobs = try Registration(name: "card", definition: ["contentConfiguration": ["type": "valueCell"]])
        bobs.owner = 1
        try store.write([.register(name: bobs.key, registration: StateCoding.encode(bobs))])
        let again = try StateModel(loading: try SQLiteStore(path: directory.database, sync: .always).load())
        #expect(again.registrationOrder == ["7:1:row", "65534:card", "1:card"])
    }
}
