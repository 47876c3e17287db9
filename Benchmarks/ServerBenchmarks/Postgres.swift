// `server-benchmarks postgres`: the PostgreSQL store against the embedded SQLite store in one run, both
// `--sync always`: single-item appends over 50 connections (unpipelined and 16 in flight) and the apply
// of a 100k-item snapshot. It starts its own PostgreSQL (`PostgresTestServer`: initdb into a temporary
// directory, listening only on a Unix socket there).

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
    defer {
        for pid in [sqlitePID, postgresPID] {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }
    print("— appendItems, SQLite against PostgreSQL (both --sync always), three rounds —")
    for (connections, pipeline, perConnection) in [(50, 1, 2_000), (50, 16, 4_000)] {
        var ratios: [Double] = []
        for round in 0..<3 {
            let sqlite = appendThroughput(socket: sqliteSocket, connections: connections, pipeline: pipeline, perConnection: perConnection, tag: "s\(pipeline)-\(round)")
            let postgresRun = appendThroughput(
                socket: postgresSocket, connections: connections, pipeline: pipeline, perConnection: perConnection, tag: "p\(pipeline)-\(round)")
            ratios.append(postgresRun.requestsPerSecond / sqlite.requestsPerSecond)
            print("  PostgreSQL/SQLite at \(connections)×\(pipeline): \(fixed(ratios.last!, 2))× the throughput, PostgreSQL p99 \(fixed(postgresRun.p99 / 1_000, 2)) ms, "
                + "SQLite p99 \(fixed(sqlite.p99 / 1_000, 2)) ms")
        }
        ratios.sort()
        print("PostgreSQL/SQLite at \(connections)×\(pipeline): median \(fixed(ratios[1], 2))×")
    }
    let sqliteApply = applyMilliseconds(socket: sqliteSocket)
    let postgresApply = applyMilliseconds(socket: postgresSocket)
    print("apply of a 100k-item snapshot: SQLite \(fixed(sqliteApply, 1)) ms, PostgreSQL \(fixed(postgresApply, 1)) ms (\(fixed(postgresApply / sqliteApply, 2))×)")
}
