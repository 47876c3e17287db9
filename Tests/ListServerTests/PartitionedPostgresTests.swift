import DiffableCore
import Foundation
import ListClient
import ListWire
import PostgresTestServer
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// listd reaching PostgreSQL over TCP as another host would: TLS verified against a test CA
/// (`sslmode=verify-full`), the password checked with SCRAM-SHA-256 and read from a passfile, and the
/// link through a proxy that can black-hole it (a partition: no reset, nothing passes) and heal.
@Suite("listd and PostgreSQL over a link that fails", .serialized)
struct PartitionedPostgresTests {
    /// A PostgreSQL on TCP with TLS and a password, the passfile (0600) in a directory of the test's.
    struct Database {
        let server: PostgresTestServer
        let directory: String
        let passfile: String

        init(tls: Bool = true) throws {
            server = try PostgresTestServer(network: .init(tls: tls))
            directory = try makeTemporaryDirectory()
            passfile = try server.writePassfile(in: directory)
        }

        /// The connection string through `proxy` (or straight to the server).
        func connectionString(through proxy: FaultProxy? = nil) -> String {
            server.connectionString(address: proxy?.host, port: proxy?.port, passfile: passfile)
        }
    }

    /// Over TLS with the password from a file: listd works, and the password is nowhere in what it shows
    /// (stats, errors, the log); a server whose certificate does not name the host is refused at start.
    @Test func tlsWithAPasswordFromAFile() throws {
        let database = try Database()
        defer { try? FileManager.default.removeItem(atPath: database.directory) }
        let daemon = try Daemon(arguments: ["--postgres", database.connectionString()])
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        let stats = try daemon.request(["cmd": "stats"]).result()
        #expect(stats["storage"]?["store"] == "postgresql", "\(stats)")
        let sessions = try database.server.psql("SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE ssl AND usename = 'listd'")
        #expect(Int(sessions.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 1, "listd's sessions use TLS: \(sessions)")
        let broken = try daemon.request(["cmd": "appendItems", "dataSource": "missing", "items": ["a"]])
        #expect(try daemon.stop() == 0)
        for text in ["\(stats)", "\(broken)", daemon.log] {
            #expect(!text.contains(database.server.password), "the password shows")
        }

        // The password given in the connection string itself (not advised; a passfile keeps it off the
        // command line) shows nowhere either: not in stats, an error, or the log.
        for inline in ["password=\(database.server.password)", "password = '\(database.server.password)'"] {
            let withPassword = database.connectionString().replacingOccurrences(of: "passfile=\(database.passfile)", with: inline)
            let given = try Daemon(arguments: ["--postgres", withPassword])
            let givenStats = try given.request(["cmd": "stats"]).result()
            let givenError = try given.request(["cmd": "appendItems", "dataSource": "missing", "items": ["a"]])
            #expect(givenStats["storage"]?["store"] == "postgresql", "\(givenStats)")
            #expect(try given.stop() == 0)
            for text in ["\(givenStats)", "\(givenError)", given.log] {
                #expect(!text.contains(database.server.password), "the password shows")
            }
        }

        // The certificate names db.listd.test: a client that expects another name refuses the server.
        let wrongName = database.connectionString().replacingOccurrences(of: "host=db.listd.test", with: "host=other.listd.test")
        let (status, _, output) = try runExecutable(
            "listd", ["--socket", database.directory + "/refused.sock", "--postgres", wrongName, "--postgres-timeout", "5"])
        #expect(status != 0, "listd refused to start")
        #expect(output.contains("other.listd.test"), "\(output)")
        #expect(!output.contains(database.server.password))
    }

    /// A partition between listd and its database: a write fails with `storage-failed` within the
    /// configured bound (never a hang), reads go on from what was stored, another instance that still
    /// reaches the database goes on writing; once healed, the cut-off instance catches up, writes again,
    /// and its view has every version once, in order.
    @Test func aPartitionFailsWritesInTimeServesReadsAndHeals() throws {
        let database = try Database()
        defer { try? FileManager.default.removeItem(atPath: database.directory) }
        let proxy = try FaultProxy(upstreamHost: "127.0.0.1", upstreamPort: database.server.port)
        defer { proxy.stop() }
        let cutOff = try Daemon(arguments: ["--postgres", database.connectionString(through: proxy), "--postgres-timeout", "2"])
        let other = try Daemon(arguments: ["--postgres", database.connectionString(), "--postgres-timeout", "2"])
        #expect(try cutOff.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": ["a", "b"]]]]])["ok"] == true)
        #expect(try eventually { try other.request(["cmd": "snapshot", "dataSource": "d"])["ok"] == true })
        let view = try cutOff.connect()
        let attached = try view.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()
        let firstVersion = try #require(attached["version"]?.intValue)
        let before = try cutOff.request(["cmd": "snapshot", "dataSource": "d"]).result()

        proxy.blackHole()
        let writer = try cutOff.connect()
        let started = ContinuousClock.now
        let failed = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": ["lost"]], timeout: .seconds(60))
        let waited = ContinuousClock.now - started
        #expect(failed["ok"] == false && failed["error"]?["code"] == "storage-failed", "\(failed)")
        #expect(waited < .seconds(10), "the write failed within twice the 2 s bound and some slack, not \(waited)")
        // Reads go on, from what was stored.
        let reading = ContinuousClock.now
        #expect(try cutOff.request(["cmd": "snapshot", "dataSource": "d"]).result() == before)
        #expect(ContinuousClock.now - reading < .seconds(5))
        // The other host still reaches the database.
        for item in ["c", "d"] {
            #expect(try other.request(["cmd": "appendItems", "dataSource": "d", "items": [.string(item)]])["ok"] == true)
        }

        proxy.heal()
        let expected = try other.request(["cmd": "snapshot", "dataSource": "d"]).result()
        #expect(try within(.seconds(60)) { try cutOff.request(["cmd": "snapshot", "dataSource": "d"])["result"] == expected }, "caught up after healing")
        var lastVersion = 0
        #expect(
            try within(.seconds(60)) {
                let reply = try cutOff.request(["cmd": "appendItems", "dataSource": "d", "items": ["after"]])
                lastVersion = reply["result"]?["version"]?.intValue ?? 0
                return reply["ok"] == true
            }, "writes again after healing")
        var versions: [Int] = []
        while versions.last ?? firstVersion < lastVersion {
            guard let event = try view.readJSON(timeout: .seconds(30)) else { throw ClientError("the view closed") }
            if let version = event["version"]?.intValue, event["event"] == "changes" { versions.append(version) }
        }
        #expect(versions == Array((firstVersion + 1)...lastVersion), "every version once, in order")
        let items = try other.request(["cmd": "snapshot", "dataSource": "d"]).result()["sections"]?.arrayValue.first?["items"]
        #expect(!"\(String(describing: items))".contains("lost"), "the failed write is nowhere")
    }

    /// A commit whose answer is lost is resolved from PostgreSQL's commit log, never guessed: when the
    /// COMMIT reached the server, the write succeeds (and its reply says so); when it did not, the
    /// server's transaction is ended and the write fails, storing nothing. (Plain TCP here, so that the
    /// proxy can see the COMMIT go by.)
    @Test func aCommitCutOffIsResolvedFromTheCommitLog() throws {
        let database = try Database(tls: false)
        defer { try? FileManager.default.removeItem(atPath: database.directory) }
        let proxy = try FaultProxy(upstreamHost: "127.0.0.1", upstreamPort: database.server.port)
        defer { proxy.stop() }
        let daemon = try Daemon(arguments: ["--postgres", database.connectionString(through: proxy), "--postgres-timeout", "2"])
        let writer = try daemon.connect()
        #expect(try writer.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        func stored() throws -> [String] {
            try database.server.psql("SELECT count(*) FROM listd_change_log").split(separator: "\n").map(String.init)
        }
        let logged = try stored()

        // The COMMIT reaches the server; its answer never comes back.
        proxy.cut(afterClientSends: "COMMIT", forward: true)
        let started = ContinuousClock.now
        let committed = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": ["kept"]], timeout: .seconds(60))
        #expect(proxy.cuts == 1, "the COMMIT was cut off")
        #expect(committed["ok"] == true, "committed, so acknowledged: \(committed)")
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(try stored() != logged, "in the database")

        // The COMMIT never reaches the server: its transaction is ended there, the write fails.
        proxy.cut(afterClientSends: "COMMIT", forward: false)
        let lost = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": ["lost"]], timeout: .seconds(60))
        #expect(proxy.cuts == 2)
        #expect(lost["error"]?["code"] == "storage-failed" && lost["error"]?["outcome"] == nil, "known not stored: \(lost)")
        let items = try daemon.request(["cmd": "snapshot", "dataSource": "d"]).result()["sections"]?.arrayValue.first?["items"]
        #expect(items == ["kept"], "\(String(describing: items))")
        let versions = try database.server.psql("SELECT count(*) = max(version) - min(version) + 1 FROM listd_change_log")
        #expect(versions.hasPrefix("t"), "versions contiguous in the log")
        #expect(try writer.request(["cmd": "appendItems", "dataSource": "d", "items": ["after"]])["ok"] == true)
    }

    /// SIGTERM stops a listd whose database is out of reach within `--stop-timeout`, even while a write
    /// waits on the database for far longer (its reply never came: nothing was acknowledged); the cut
    /// short stop says so in the log and in its exit status (75).
    @Test func sigtermStopsAPartitionedInstanceInTime() throws {
        let database = try Database()
        defer { try? FileManager.default.removeItem(atPath: database.directory) }
        let proxy = try FaultProxy(upstreamHost: "127.0.0.1", upstreamPort: database.server.port)
        defer { proxy.stop() }
        let daemon = try Daemon(arguments: [
            "--postgres", database.connectionString(through: proxy), "--postgres-timeout", "120", "--stop-timeout", "3",
        ])
        #expect(try daemon.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]])["ok"] == true)
        proxy.blackHole()
        let writer = try daemon.connect()
        try writer.send(["cmd": "appendItems", "dataSource": "d", "items": ["a"]])
        #expect(
            try within(.seconds(30)) { try daemon.request(["cmd": "stats"]).result()["storage"]?["writesInFlight"] == 1 },
            "the write waits on the database")
        let stopping = ContinuousClock.now
        let status = try daemon.stop(timeout: .seconds(60))
        let took = ContinuousClock.now - stopping
        #expect(status == 75, "the stop was cut short (EX_TEMPFAIL)")
        #expect(took < .seconds(8), "stopped within the 3 s stop bound and some slack, not \(took)")
        #expect(daemon.log.contains("not stopped within 3.0 s"), "\(daemon.log)")
    }
}
