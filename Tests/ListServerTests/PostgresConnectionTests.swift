import Foundation
import ListStore
import PostgresTestServer
import Testing
import TestSupport

@testable import ListStorePostgres

/// The libpq wrapper against a real PostgreSQL: what the store's commit relies on (the command tag of a
/// COMMIT that rolled back), the bound on every wait (`waitsEnd`), and connection strings that do not parse.
@Suite("PostgreSQL connection")
struct PostgresConnectionTests {
    /// A COMMIT of a transaction an error aborted succeeds as a command, with the tag ROLLBACK: the
    /// store refuses to take that for a commit.
    @Test func aCommitAfterAFailedStatementSaysRollback() throws {
        let server = try PostgresTestServer()
        let connection = try PostgresConnection(uri: server.uri)
        try connection.execute("CREATE TABLE t(n int)")
        try connection.execute("BEGIN")
        try connection.execute("INSERT INTO t VALUES (1)")
        #expect(throws: StorageError.self) { try connection.execute("SELECT 1/0") }
        #expect(try connection.execute("COMMIT").commandTag == "ROLLBACK")
        #expect(try connection.query("SELECT count(*) FROM t").int(0, 0) == 0)
        // What the store commits with: an aborted transaction is an error, not a commit.
        try connection.execute("BEGIN")
        #expect(throws: StorageError.self) { try connection.execute("SELECT 1/0") }
        #expect(throws: StorageError.self) { try connection.commit() }
        try connection.execute("BEGIN")
        try connection.execute("INSERT INTO t VALUES (1)")
        #expect(try connection.execute("COMMIT").commandTag == "COMMIT")
        try connection.execute("BEGIN")
        try connection.execute("INSERT INTO t VALUES (2)")
        try connection.commit()
        #expect(try connection.query("SELECT count(*) FROM t").int(0, 0) == 2)
    }

    /// A pipeline runs its statements in one round trip: prepared ones are prepared once per connection,
    /// arrays (with NULL elements) arrive as sent, and a failed statement is reported with the ones
    /// after it skipped, while the connection stays usable.
    @Test func aPipelineRunsPreparesOnceAndReportsTheFirstFailure() throws {
        let server = try PostgresTestServer()
        let connection = try PostgresConnection(uri: server.uri)
        try connection.execute("CREATE TABLE t(n bigint PRIMARY KEY, b bytea)")
        let insert = "INSERT INTO t(n, b) SELECT * FROM unnest($1::int8[], $2::bytea[])"
        func rows(_ numbers: [Int], _ bytes: [[UInt8]?]) -> PostgresStatement {
            PostgresStatement(sql: insert, parameters: [.integers(numbers), .byteArrays(bytes)], preparedName: "t_insert")
        }
        let first = try connection.pipeline([
            PostgresStatement(sql: "BEGIN"), rows([1, -2, Int.max], [[0, 255], nil, []]), PostgresStatement(sql: "SELECT count(*) FROM t"),
            PostgresStatement(sql: "COMMIT"),
        ])
        #expect(first.firstError == nil)
        #expect(first.results[1]?.affectedRows == 3 && first.results[2]?.int(0, 0) == 3)
        let stored = try connection.query("SELECT n, b FROM t ORDER BY n")
        #expect((0..<3).map { stored.int($0, 0) } == [-2, 1, Int.max])
        #expect(stored.bytes(0, 1) == nil && stored.bytes(1, 1) == [0, 255] && stored.bytes(2, 1) == [])
        #expect(try connection.query("SELECT count(*) FROM pg_prepared_statements WHERE name = 't_insert'").int(0, 0) == 1)

        // A duplicate key fails the second insert: the statement after it is skipped, nothing commits.
        let count = PostgresStatement(sql: "SELECT count(*) FROM t", preparedName: "t_count")
        let second = try connection.pipeline([
            PostgresStatement(sql: "BEGIN"), rows([3], [[3]]), count, rows([1], [[1]]), PostgresStatement(sql: "SELECT 1"),
        ])
        #expect(second.results[1]?.affectedRows == 1 && second.results[2]?.int(0, 0) == 4)
        #expect(second.results[3] == nil && second.results[4] == nil)
        #expect(second.firstError?.kind == .conflict, "a taken key (SQLSTATE 23505): \(String(describing: second.firstError))")
        try connection.execute("ROLLBACK")
        #expect(connection.isConnected)
        // A statement prepared in a transaction that rolled back stays prepared (and is not prepared again).
        let third = try connection.pipeline([count])
        #expect(third.firstError == nil && third.results[0]?.int(0, 0) == 3)
    }

    /// A server that stops answering (a partition) fails a statement by `waitsEnd` when that comes before
    /// the connection's own timeout, and closes the connection.
    @Test func noWaitGoesPastItsEnd() throws {
        let server = try PostgresTestServer(network: .init(tls: false))
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let passfile = try server.writePassfile(in: directory)
        let proxy = try FaultProxy(upstreamHost: "127.0.0.1", upstreamPort: server.port)
        defer { proxy.stop() }
        let connection = try PostgresConnection(
            uri: server.connectionString(address: proxy.host, port: proxy.port, passfile: passfile), timeout: .seconds(120))
        #expect(try connection.query("SELECT 1").int(0, 0) == 1)
        proxy.blackHole()
        connection.waitsEnd = ContinuousClock.now + .seconds(1)
        let started = ContinuousClock.now
        #expect(throws: StorageError.self) { try connection.query("SELECT 2") }
        #expect(ContinuousClock.now - started < .seconds(30), "bounded by waitsEnd, not the 120 s timeout")
        #expect(!connection.isConnected)
    }

    /// libpq's message for a connection string it cannot parse may quote the password: it is not shown.
    @Test func aStringThatDoesNotParseIsRefusedWithoutLibpqsMessage() {
        for uri in ["postgresql://listd:hunter2%zz@/listd", "dbname=listd password='hunter2"] {
            #expect(!PostgresConnection.parses(uri))
            do {
                _ = try PostgresConnection(uri: uri, timeout: .seconds(1))
                Issue.record("connected with \(uri)")
            } catch {
                #expect(error.message.contains("does not parse"), "\(error.message)")
                #expect(!error.message.contains("hunter2"), "\(error.message)")
            }
        }
        #expect(PostgresConnection.parses("listd"), "a database name")
        #expect(PostgresConnection.redacted("listd") == "dbname=listd")
        #expect(PostgresConnection.redacted("postgresql://listd:hunter2@db.example:5433/listd") == "host=db.example port=5433 dbname=listd user=listd")
    }
}
