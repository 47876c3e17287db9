// `server-benchmarks postgres`: the PostgreSQL store against the embedded SQLite store in one run, both
// `--sync always`: single-item appends over 50 connections (unpipelined and 16 in flight) and the apply
// of a 100k-item snapshot, with a second listd on the same database following every change; then the
// time from a write on one instance to its event on a view of the other. It starts its own PostgreSQL
// (`PostgresTestServer`: initdb into a temporary directory, listening only on a Unix socket there).

import ListClient
import PostgresTestServer

#if canImport(Glibc)
    import Glibc
#endif

func postgresBenchmark() {
    let postgres: PostgresTestServer
    do {
        postgres = try PostgresTestServer()
    } catch {
        print("postgres: \(error); skipped")
        return
    }
    let sqliteDirectory = "/tmp/listd-bench-sqlite-\(getpid())"
    defer { _ = system("rm -rf \(sqliteDirectory)") }
    let sqliteSocket = "/tmp/listd-bench-sqlite-\(getpid()).sock"
    let postgresSocket = "/tmp/listd-bench-postgres-\(getpid()).sock"
    let sqlitePID = startListd(socket: sqliteSocket, storage: ["--state-directory", sqliteDirectory, "--sync", "always"])
    let postgresPID = startListd(socket: postgresSocket, storage: ["--postgres", postgres.uri, "--sync", "always"])
    // A second instance on the same database, running for some of the runs: it follows everything the
    // first one writes (as another host with views would), on the same two cores here.
    let followerSocket = "/tmp/listd-bench-follower-\(getpid()).sock"
    var followerPID: pid_t = 0
    defer {
        for pid in [sqlitePID, postgresPID, followerPID] where pid != 0 {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }
    print("— appendItems, SQLite against PostgreSQL (both --sync always), three rounds —")
    // LISTD_BENCH_POSTGRES_LOADS: other loads, e.g. "50x16,50x16f" (connections x in flight, f: with a
    // second instance following).
    var loads = [(50, 1, 2_000, true), (50, 1, 2_000, false), (50, 16, 4_000, true)]
    if let text = getenv("LISTD_BENCH_POSTGRES_LOADS").map({ String(cString: $0) }) {
        loads = text.split(separator: ",").compactMap { load in
            let following = load.hasSuffix("f")
            let numbers = load.dropLast(following ? 1 : 0).split(separator: "x").compactMap { Int($0) }
            guard numbers.count == 2 else { return nil }
            return (numbers[0], numbers[1], numbers[1] == 1 ? 2_000 : 4_000, following)
        }
    }
    for (connections, pipeline, perConnection, following) in loads {
        if following && followerPID == 0 {
            followerPID = startListd(socket: followerSocket, storage: ["--postgres", postgres.uri, "--sync", "always"])
        } else if !following && followerPID != 0 {
            stopProcess(followerPID)
            followerPID = 0
        }
        let setting = following ? "with a second instance following" : "one instance"
        var ratios: [Double] = []
        for round in 0..<3 {
            let sqlite = appendThroughput(socket: sqliteSocket, connections: connections, pipeline: pipeline, perConnection: perConnection, tag: "s\(pipeline)-\(round)")
            let postgresRun = appendThroughput(
                socket: postgresSocket, connections: connections, pipeline: pipeline, perConnection: perConnection,
                tag: "p\(pipeline)-\(following)-\(round)")
            ratios.append(postgresRun.requestsPerSecond / sqlite.requestsPerSecond)
            if getenv("LISTD_BENCH_POSTGRES_STATS") != nil, let stats = try? LineConnection(path: postgresSocket).request(["cmd": "stats"])["result"]?["storage"] {
                print("  the writing instance's storage: \(stats)")
            }
            print("  PostgreSQL (\(setting))/SQLite at \(connections)×\(pipeline): \(fixed(ratios.last!, 2))× the throughput, "
                + "PostgreSQL p99 \(fixed(postgresRun.p99 / 1_000, 2)) ms, SQLite p99 \(fixed(sqlite.p99 / 1_000, 2)) ms")
        }
        ratios.sort()
        print("PostgreSQL (\(setting))/SQLite at \(connections)×\(pipeline): median \(fixed(ratios[1], 2))× (\(fixed(ratios[0], 2))–\(fixed(ratios[2], 2)))")
    }
    let sqliteApply = applyMilliseconds(socket: sqliteSocket)
    let postgresApply = applyMilliseconds(socket: postgresSocket)
    print("apply of a 100k-item snapshot: SQLite \(fixed(sqliteApply, 1)) ms, PostgreSQL \(fixed(postgresApply, 1)) ms (\(fixed(postgresApply / sqliteApply, 2))×)")
    if let lag = try? LineConnection(path: followerSocket).request(["cmd": "stats"])["result"]?["storage"]?["shared"] {
        print("the second instance after the runs (\(fixed(cpuSeconds(followerPID), 1)) s of CPU; the writing one \(fixed(cpuSeconds(postgresPID), 1)) s): \(lag)")
    }
    // Measured with a follower whatever the loads were (started now when none of them had one).
    if followerPID == 0 { followerPID = startListd(socket: followerSocket, storage: ["--postgres", postgres.uri, "--sync", "always"]) }
    crossInstanceLatency(writer: postgresSocket, follower: followerSocket)
}

/// The time from sending an append to one instance to its `changes` event on a view of the other, one
/// write at a time (the writer's reply is read after the event), 3,000 writes after 200 of warm-up.
func crossInstanceLatency(writer: String, follower: String) {
    do {
        let write = try LineConnection(path: writer)
        _ = try write.request(["cmd": "appendSections", "dataSource": "latency", "sections": ["s"]])
        let view = try LineConnection(path: follower)
        var attached = try view.request(["cmd": "attach", "dataSource": "latency", "view": "v"])
        for _ in 0..<200 where attached["ok"] != true {
            usleep(10_000)  // the data source reaches the other instance first
            attached = try view.request(["cmd": "attach", "dataSource": "latency", "view": "v"])
        }
        var samples: [UInt64] = []
        for index in 0..<3_200 {
            let started = nanoseconds()
            try write.send(bytes: appendLine(dataSource: "latency", item: "i\(index)"))
            guard let event = try view.readLine(timeout: .seconds(10)) else { throw ClientError("the view closed") }
            let arrived = nanoseconds()
            guard let reply = try write.readLine(timeout: .seconds(10)), reply.starts(with: Array(#"{"ok":true"#.utf8)) else {
                throw ClientError("the write failed")
            }
            _ = event
            if index >= 200 { samples.append(arrived - started) }
        }
        samples.sort()
        print("write on one instance → event on a view of the other (3,000 writes, one at a time): "
            + "p50 \(fixed(percentile(samples, 0.5) / 1_000, 2)) ms, p99 \(fixed(percentile(samples, 0.99) / 1_000, 2)) ms, "
            + "max \(fixed(Double(samples.last ?? 0) / 1_000_000, 2)) ms")
    } catch {
        print("cross-instance latency: \(error)")
    }
}
