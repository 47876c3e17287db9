import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: The request-path goals in one run

/// `server-benchmarks goals`: single-item appends over 50 connections, 1 and 16 in flight, against five
/// servers one after another with the same client: listd in memory (`--ephemeral`), listd durable (SQLite,
/// `--sync always`, a state directory under /tmp), the SwiftNIO floor (`NIOFloor.swift`), Redis without
/// persistence and Redis with `appendfsync always`. Prints a Markdown table per load (throughput,
/// latency, each server's CPU per request) and the ratios the request path's goals are stated in.
func goalTable(ephemeralSocket: String, ephemeralPID: pid_t) {
    let base = "/tmp/listd-goals-\(getpid())"
    _ = system("rm -rf \(base); mkdir -p \(base)/state \(base)/redis")
    defer { _ = system("rm -rf \(base)") }
    let durableSocket = "\(base)/durable.sock"
    let durable = startListd(socket: durableSocket, storage: ["--state-directory", "\(base)/state", "--sync", "always"])
    let floorSocket = "\(base)/floor.sock"
    let floor = startNIOFloor(socket: floorSocket)
    var children = [durable, floor]
    defer {
        for child in children {
            kill(child, SIGTERM)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
    }
    let redisSocket = "\(base)/redis.sock"
    let aofSocket = "\(base)/redis-aof.sock"
    let redis = startRedis(socket: redisSocket)
    let aof = startRedis(socket: aofSocket, appendOnlyDirectory: "\(base)/redis")
    children += [redis, aof].compactMap { $0 }

    struct Row {
        var name: String
        var load: LoadResult
        var cpu: Double
    }
    for (connections, pipeline, perConnection) in [(50, 1, 4_000), (50, 16, 8_000)] {
        let tag = "g\(connections)x\(pipeline)"
        var rows: [Row] = []
        func run(_ name: String, _ socket: String, _ pid: pid_t, redisProtocol: Bool) {
            if !redisProtocol {
                let setup = try! LineConnection(path: socket)
                _ = try? setup.request(["cmd": "apply", "dataSource": .string(tag), "snapshot": ["sections": [["id": "S", "items": []]]]])
            }
            let before = cpuSeconds(pid)
            let load = driveLoad(socket: socket, connections: connections, pipeline: pipeline, perConnection: perConnection) { index, number in
                redisProtocol ? rpushLine(key: tag, value: "c\(index)-\(number)") : appendLine(dataSource: tag, item: "c\(index)-\(number)")
            }
            rows.append(Row(name: name, load: load, cpu: (cpuSeconds(pid) - before) / Double(connections * perConnection) * 1e6))
        }
        run("listd (in memory)", ephemeralSocket, ephemeralPID, redisProtocol: false)
        run("listd (SQLite, sync always)", durableSocket, durable, redisProtocol: false)
        run("SwiftNIO floor", floorSocket, floor, redisProtocol: false)
        if let redis { run("Redis (no persistence)", redisSocket, redis, redisProtocol: true) }
        if let aof { run("Redis (appendfsync always)", aofSocket, aof, redisProtocol: true) }

        print("\n50 connections, \(pipeline) in flight, single-item appends (RPUSH to Redis):\n")
        print("| Server | Requests/s | p50 µs | p99 µs | CPU µs per request |")
        print("|---|---|---|---|---|")
        for row in rows {
            print("| \(row.name) | \(Int(row.load.requestsPerSecond)) | \(fixed(row.load.p50, 0)) | \(fixed(row.load.p99, 0)) | \(fixed(row.cpu, 1)) |")
        }
        let (memory, durableRow, floorRow) = (rows[0], rows[1], rows[2])
        var ratios = [
            "listd / floor throughput \(fixed(memory.load.requestsPerSecond / floorRow.load.requestsPerSecond, 2))× (goal ≥ \(pipeline == 1 ? "0.9" : "0.5"))",
            "durable / in memory \(fixed(durableRow.load.requestsPerSecond / memory.load.requestsPerSecond, 2))× (goal ≥ \(pipeline == 1 ? "0.75" : "0.6"))",
        ]
        if pipeline == 1 { ratios.append("durable p99 / in-memory p99 \(fixed(durableRow.load.p99 / memory.load.p99, 2))× (goal ≤ 2)") }
        if rows.count == 5 {
            let (redisRow, aofRow) = (rows[3], rows[4])
            ratios.insert("listd CPU / Redis CPU \(fixed(memory.cpu / redisRow.cpu, 2))× (goal ≤ \(pipeline == 1 ? "1.5" : "3"))", at: 0)
            ratios.append("Redis appendfsync always / no persistence \(fixed(aofRow.load.requestsPerSecond / redisRow.load.requestsPerSecond, 2))×")
        }
        print("\n" + ratios.joined(separator: "; "))
    }
}
