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
    func items(_ daemon: Daemon, minVersion: Int? = nil) throws -> [String] {
        var request: JSONValue = ["cmd": "snapshot", "dataSource": "d"]
        if let minVersion { request = ["cmd": "snapshot", "dataSource": "d", "minVersion": .int(minVersion)] }
        let snapshot = try daemon.request(request).result()
        return snapshot["sections"]?.arrayValue.flatMap { $0["items"]?.arrayValue ?? [] }.compactMap(\.stringValue) ?? []
    }

    /// PostgreSQL on host "db", and links from hosts "a" and "b" to it through fault proxies.
    final class Hosts {
        let network: TestNetwork
        let databaseHost: TestNetwork.Host
        let hostA: TestNetwork.Host
        let hostB: TestNetwork.Host
        let database: PostgresTestServer
        let directory: String
        let passfile: String
        let linkA: FaultProxy
        let linkB: FaultProxy

        init() throws {
            network = try TestNetwork()
            databaseHost = try network.addHost("db")
            hostA = try network.addHost("a")
            hostB = try network.addHost("b")
            database = try PostgresTestServer(network: .init(address: databaseHost.address, namespace: databaseHost.namespace))
            directory = try makeTemporaryDirectory()
            passfile = try database.writePassfile(in: directory)
            linkA = try FaultProxy(listeningOn: hostA.gateway, upstreamHost: databaseHost.address, upstreamPort: database.port)
            linkB = try FaultProxy(listeningOn: hostB.gateway, upstreamHost: databaseHost.address, upstreamPort: database.port)
        }

        func stop() {
            linkA.stop()
            linkB.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func start(on host: TestNetwork.Host, through link: FaultProxy) throws -> Daemon {
            try Daemon(
                arguments: [
                    "--postgres", database.connectionString(address: link.host, port: link.port, passfile: passfile), "--postgres-timeout", "2",
                ], namespace: host.namespace)
        }

        func startA() throws -> Daemon { try start(on: hostA, through: linkA) }
        func startB() throws -> Daemon { try start(on: hostB, through: linkB) }
    }

    /// Two instances on two hosts and the database on a third: read-your-writes across hosts, 50 ms of
    /// latency each way, connections dropped, a partition and its healing, and one instance killed with
    /// SIGKILL under load. Nothing acknowledged is lost or doubled, the view on the first host gets
    /// every version once, in order.
    @Test func twoHostsThroughLatencyDropsAPartitionAndAKill() throws {
        let hosts = try Hosts()
        let (database, databaseHost, linkA) = (hosts.database, hosts.databaseHost, hosts.linkA)
        defer { hosts.stop() }
        let a = try hosts.startA()
        let b = try hosts.startB()

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
        let slow = try append("slow", through: writerA)
        #expect(slow["ok"] == true, "\(slow)")
        #expect(ContinuousClock.now - slowStart >= .milliseconds(100), "the latency is on the link")
        #expect(try items(b, minVersion: slow["result"]?["version"]?.intValue).contains("slow"))
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

    /// The outcome of every append, from the writer threads.
    final class Ledger: @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [String: Outcome] = [:]
        private var unreachable = 0
        func record(_ item: String, _ outcome: Outcome) { lock.withLock { recorded[item] = outcome } }
        var outcomes: [String: Outcome] { lock.withLock { recorded } }
        /// A writer could not connect to its listd (which the nemesis never stops): it ended early.
        func writerCouldNotConnect() { lock.withLock { unreachable += 1 } }
        var writersThatCouldNotConnect: Int { lock.withLock { unreachable } }
    }

    /// What one append came to, as its writer saw it.
    enum Outcome: Equatable, Sendable {
        case acknowledged(version: Int)
        /// `storage-failed` without `"outcome": "unknown"`: not stored.
        case failed
        /// No reply in time, or `"outcome": "unknown"`: may be stored.
        case unknown
    }

    /// A check in the style of Jepsen's list-append: writers on both hosts append unique identifiers to
    /// one list while a nemesis resets, delays and partitions the hosts' links for a while
    /// (`LISTD_TEST_NEMESIS_SECONDS`, 60 by default). Afterwards: every acknowledged append is present
    /// exactly once, no failed one is, nothing appears that nobody sent, both instances hold the same
    /// list, and each host's view, replayed event by event from its first version, ends on that list with
    /// contiguous versions.
    @Test func listAppendUnderFaults() throws {
        let hosts = try Hosts()
        defer { hosts.stop() }
        let a = try hosts.startA()
        let b = try hosts.startB()
        let created = try a.request(["cmd": "appendSections", "dataSource": "list", "sections": ["s"]]).result()["version"]?.intValue ?? 0
        var views: [(daemon: Daemon, connection: LineConnection, version: Int)] = []
        for daemon in [a, b] {
            let view = try daemon.connect()
            let attached = try view.request(["cmd": "attach", "dataSource": "list", "view": "v", "minVersion": .int(created)]).result()
            views.append((daemon, view, attached["version"]?.intValue ?? 0))
            #expect(attached["sections"]?.arrayValue.first?["items"] == [])
        }
        let seconds = Double(ProcessInfo.processInfo.environment["LISTD_TEST_NEMESIS_SECONDS"] ?? "") ?? 60
        let end = ContinuousClock.now + .milliseconds(Int64(seconds * 1_000))
        let ledger = Ledger()
        let writersDone = DispatchGroup()
        for writer in 0..<4 {
            let socket = (writer % 2 == 0 ? a : b).socketPath
            writersDone.enter()
            Thread.detachNewThread {
                defer { writersDone.leave() }
                var connection = try? LineConnection(path: socket)
                var sequence = 0
                while ContinuousClock.now < end {
                    if connection == nil { connection = try? LineConnection(path: socket) }
                    guard connection != nil else {
                        ledger.writerCouldNotConnect()
                        return
                    }
                    let item = "w\(writer)-\(sequence)"
                    sequence += 1
                    var outcome = Outcome.unknown
                    if let reply = try? connection?.request(["cmd": "appendItems", "dataSource": "list", "items": [.string(item)]], timeout: .seconds(30)) {
                        if reply["ok"] == true, let version = reply["result"]?["version"]?.intValue {
                            outcome = .acknowledged(version: version)
                        } else if reply["error"]?["code"] == "storage-failed" && reply["error"]?["outcome"] != "unknown" {
                            outcome = .failed
                        }
                    } else {
                        connection = nil  // no reply: its fate is unknown; go on on a new connection
                    }
                    ledger.record(item, outcome)
                }
            }
        }
        // The nemesis.
        var random = SeededGenerator(seed: UInt64(ProcessInfo.processInfo.environment["LISTD_TEST_NEMESIS_SEED"] ?? "") ?? 20_261_126)
        var faults: [String: Int] = [:]
        while ContinuousClock.now < end {
            let link = Bool.random(using: &random) ? hosts.linkA : hosts.linkB
            let name = link === hosts.linkA ? "a" : "b"
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                link.dropConnections()
                faults["reset " + name, default: 0] += 1
            case 1:
                link.setLatency(.milliseconds(50))
                faults["latency " + name, default: 0] += 1
            case 2, 3:
                link.blackHole()
                faults["partition " + name, default: 0] += 1
            default:
                link.heal()
                link.setLatency(.zero)
            }
            Thread.sleep(forTimeInterval: Double.random(in: 1...4, using: &random))
        }
        for link in [hosts.linkA, hosts.linkB] {
            link.heal()
            link.setLatency(.zero)
        }
        #expect(writersDone.wait(timeout: .now() + 120) == .success, "the writers finished")
        #expect(ledger.writersThatCouldNotConnect == 0, "every writer reached its listd for the whole run")
        let results = ledger.outcomes

        // Both instances converge on one list.
        func list(_ daemon: Daemon) throws -> (items: [String], version: Int) {
            let snapshot = try daemon.connect().request(["cmd": "snapshot", "dataSource": "list"], timeout: .seconds(30)).result()
            let items = snapshot["sections"]?.arrayValue.first?["items"]?.arrayValue.compactMap { $0.stringValue } ?? []
            return (items, snapshot["version"]?.intValue ?? 0)
        }
        let converged = (try? within(.seconds(90)) { try list(a) == list(b) }) ?? false
        #expect(converged, "both instances hold the same list")
        let (final, version) = try list(a)
        let acknowledged = results.filter { if case .acknowledged = $0.value { return true } else { return false } }.map(\.key)
        let failed = results.filter { $0.value == .failed }.map(\.key)
        let unknown = results.filter { $0.value == .unknown }.map(\.key)
        let present = Dictionary(final.map { ($0, 1) }, uniquingKeysWith: +)
        let lost = acknowledged.filter { present[$0] != 1 }
        #expect(lost.isEmpty, "acknowledged appends missing or doubled: \(lost.prefix(20))")
        #expect(failed.filter { present[$0] != nil }.isEmpty, "failed appends present")
        #expect(present.filter { $0.value > 1 }.isEmpty, "appends present twice")
        #expect(final.filter { results[$0] == nil }.isEmpty, "items nobody sent")
        #expect(version == created + final.count, "one version per stored append")

        // Each view, replayed from its first version, ends on the list; versions contiguous.
        for (daemon, connection, first) in views {
            var replayed: [String] = []
            var versions: [Int] = []
            while (versions.last ?? first) < version {
                guard let event = try connection.readJSON(timeout: .seconds(30)) else { break }
                guard event["event"] == "changes", let eventVersion = event["version"]?.intValue else { continue }
                versions.append(eventVersion)
                for stage in event["changes"]?["stages"]?.arrayValue ?? [] {
                    let inserts = (stage["itemInserts"]?.arrayValue ?? []).sorted {
                        ($0["indexPath"]?.arrayValue.last?.intValue ?? 0) < ($1["indexPath"]?.arrayValue.last?.intValue ?? 0)
                    }
                    for insert in inserts {
                        let index = insert["indexPath"]?.arrayValue.last?.intValue ?? replayed.count
                        replayed.insert(insert["item"]?.stringValue ?? "?", at: min(index, replayed.count))
                    }
                }
            }
            #expect(versions == Array((first + 1)...max(first + 1, version)).prefix(versions.count).map { $0 } && versions.last == version,
                "\(daemon.socketPath): versions contiguous up to \(version)")
            #expect(replayed == final, "the view's events replay to the list")
        }
        let faultCount = faults.values.reduce(0, +)
        print(
            "list-append under faults: \(results.count) appends over \(seconds) s (acknowledged \(acknowledged.count), failed \(failed.count), "
                + "unknown \(unknown.count), of which stored \(unknown.filter { present[$0] != nil }.count)), \(faultCount) faults \(faults.sorted { $0.key < $1.key }), "
                + "lost 0 of \(acknowledged.count) checked: \(lost.count) lost")
    }
}
