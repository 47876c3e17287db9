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

/// listd instances on hosts of their own: PostgreSQL and each instance in a network namespace, each
/// instance's link to the database through a `FaultProxy` on the test's side (the kernel here has no
/// netem), TCP with TLS verified against a test CA, SCRAM and a passfile.
@Suite(
    "Instances on hosts of their own (network namespaces)", .serialized,
    .enabled(if: TestNetwork.available, "needs root and network namespaces (ip netns): skipped on this machine"))
struct SeveralHostsTests {
    /// Waits until `condition` holds, for at most `limit` (each try may itself take seconds here).
    func within(_ limit: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try condition()
    }

    func items(_ daemon: Daemon, minVersion: Int? = nil) throws -> [String] {
        var request: JSONValue = ["cmd": "snapshot", "dataSource": "d"]
        if let minVersion { request = ["cmd": "snapshot", "dataSource": "d", "minVersion": .int(minVersion)] }
        let snapshot = try daemon.request(request).result()
        return snapshot["sections"]?.arrayValue.flatMap { $0["items"]?.arrayValue ?? [] }.compactMap(\.stringValue) ?? []
    }

    /// Two instances on two hosts and the database on a third: read-your-writes across hosts, 50 ms of
    /// latency each way, connections dropped, a partition and its healing, and one instance killed with
    /// SIGKILL under load. Nothing acknowledged is lost or doubled, the view on the first host gets
    /// every version once, in order.
    @Test func twoHostsThroughLatencyDropsAPartitionAndAKill() throws {
        let network = try TestNetwork()
        let databaseHost = try network.addHost("db")
        let hostA = try network.addHost("a")
        let hostB = try network.addHost("b")
        let database = try PostgresTestServer(network: .init(address: databaseHost.address, namespace: databaseHost.namespace))
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let passfile = directory + "/pgpass"
        let descriptor = open(passfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        let line = Array(database.passfileLine.utf8)
        #expect(descriptor >= 0 && Glibc.write(descriptor, line, line.count) == line.count)
        close(descriptor)
        let linkA = try FaultProxy(listeningOn: hostA.gateway, upstreamHost: databaseHost.address, upstreamPort: database.port)
        let linkB = try FaultProxy(listeningOn: hostB.gateway, upstreamHost: databaseHost.address, upstreamPort: database.port)
        defer {
            linkA.stop()
            linkB.stop()
        }
        func start(on host: TestNetwork.Host, through link: FaultProxy) throws -> Daemon {
            try Daemon(
                arguments: [
                    "--postgres", database.tlsConnectionString(address: link.host, port: link.port, passfile: passfile), "--postgres-timeout", "2",
                ], namespace: host.namespace)
        }
        let a = try start(on: hostA, through: linkA)
        let b = try start(on: hostB, through: linkB)

        // Read-your-writes across hosts.
        let created = try a.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "s", "items": ["first"]]]]]).result()
        let createdVersion = try #require(created["version"]?.intValue)
        #expect(try items(b, minVersion: createdVersion) == ["first"])
        // The sessions come over TLS from the test's end of the database host's link (the proxies).
        let sessions = try database.psql(
            "SELECT DISTINCT host(client_addr) || ' ' || ssl FROM pg_stat_activity JOIN pg_stat_ssl USING (pid) WHERE usename = 'listd'")
        #expect(sessions.trimmingCharacters(in: .whitespacesAndNewlines) == "\(databaseHost.gateway) true", "\(sessions)")
        let view = try a.connect()
        let attached = try view.request(["cmd": "attach", "dataSource": "d", "view": "v"]).result()
        let firstVersion = try #require(attached["version"]?.intValue)
        var acknowledged = ["first"]
        let writerA = try a.connect()
        func append(_ item: String, through writer: LineConnection) throws -> JSONValue {
            let reply = try writer.request(["cmd": "appendItems", "dataSource": "d", "items": [.string(item)]], timeout: .seconds(60))
            if reply["ok"] == true { acknowledged.append(item) }
            return reply
        }

        // 50 ms each way: a write takes several round trips, and still succeeds.
        linkA.setLatency(.milliseconds(50))
        let slowStart = ContinuousClock.now
        #expect(try append("slow", through: writerA)["ok"] == true)
        #expect(ContinuousClock.now - slowStart >= .milliseconds(100), "the latency is on the link")
        #expect(try items(b, minVersion: acknowledged.count).contains("slow"))
        linkA.setLatency(.zero)

        // Every connection of host A reset: writes fail (storage-failed) or succeed, and work again.
        linkA.dropConnections()
        var afterDrop = 0
        var unexpected: [JSONValue] = []
        let worksAgain = try within(.seconds(60)) {
            afterDrop += 1
            let reply = try append("drop\(afterDrop)", through: writerA)
            if reply["ok"] != true && reply["error"]?["code"] != "storage-failed" { unexpected.append(reply) }
            return reply["ok"] == true
        }
        #expect(worksAgain, "writes work again after the reset")
        #expect(unexpected.isEmpty, "only storage-failed meanwhile: \(unexpected)")

        // A partition: A's write fails within the bound, A goes on reading, B goes on writing.
        linkA.blackHole()
        let partitioned = ContinuousClock.now
        let cutOff = try append("cut-off", through: writerA)
        #expect(cutOff["error"]?["code"] == "storage-failed", "\(cutOff)")
        #expect(ContinuousClock.now - partitioned < .seconds(10))
        #expect(try a.request(["cmd": "numberOfItems", "dataSource": "d"])["ok"] == true, "reads go on")
        let writerB = try b.connect()
        for index in 0..<5 { #expect(try append("b\(index)", through: writerB)["ok"] == true) }
        linkA.heal()
        #expect(try within(.seconds(60)) { try items(a) == items(b) }, "host A caught up after healing")
        #expect(try within(.seconds(60)) { try append("healed", through: writerA)["ok"] == true })

        // Host B killed with SIGKILL while 200 appends are in flight to it: every acknowledged one stays.
        let loadB = try b.connect()
        for index in 0..<200 { try loadB.send(["cmd": "appendItems", "dataSource": "d", "items": [.string("load\(index)")]]) }
        var newest = 0
        for index in 0..<50 {
            guard let reply = try loadB.readJSON(timeout: .seconds(30)) else { break }
            if reply["ok"] == true {
                acknowledged.append("load\(index)")
                newest = max(newest, reply["result"]?["version"]?.intValue ?? 0)
            }
        }
        try b.stop(signal: SIGKILL)
        let final = try items(a, minVersion: newest)
        for item in acknowledged { #expect(final.filter { $0 == item }.count == 1, "\(item) once") }
        #expect(!final.contains("cut-off"), "the write that failed is nowhere")
        #expect(Set(final).count == final.count, "no item twice")

        // The view on host A: every version once, in order, up to the newest.
        let last = try a.request(["cmd": "snapshot", "dataSource": "d"]).result()["version"]?.intValue ?? 0
        var versions: [Int] = []
        while (versions.last ?? firstVersion) < last {
            guard let event = try view.readJSON(timeout: .seconds(30)) else { break }
            if event["event"] == "changes", let version = event["version"]?.intValue { versions.append(version) }
        }
        #expect(versions == Array((firstVersion + 1)...last), "every version once, in order")
    }
}
