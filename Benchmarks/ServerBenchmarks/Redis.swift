// listd against Redis, driven by the same client (`driveLoad`): single-item appends as `appendItems` to
// listd and as `RPUSH` to a Redis started here on a Unix socket (no persistence, like `--ephemeral`).

import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `redis-server` on a Unix socket with persistence off, or with `appendOnlyDirectory` its
/// append-only file there, synced before every reply (`appendfsync always`); nil when it is not installed.
func startRedis(socket: String, appendOnlyDirectory: String? = nil) -> pid_t? {
    let candidates = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
    let executable = candidates.first { path in access(path, X_OK) == 0 }
    guard let executable else { return nil }
    unlink(socket)
    var arguments = [executable, "--port", "0", "--unixsocket", socket, "--save", "", "--loglevel", "warning"]
    if let appendOnlyDirectory {
        arguments += ["--dir", appendOnlyDirectory, "--appendonly", "yes", "--appendfsync", "always"]
    } else {
        arguments += ["--appendonly", "no"]
    }
    var cArguments = arguments.map { strdup($0) } + [nil]
    var pid: pid_t = 0
    // Its own log stays out of the benchmark's output.
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    guard posix_spawn(&pid, executable, &actions, nil, &cArguments, environ) == 0 else { return nil }
    for _ in 0..<500 where access(socket, F_OK) != 0 { usleep(10_000) }
    usleep(50_000)
    return pid
}

/// `RPUSH key value` in RESP; its reply (`:N\r\n`) is one line, as listd's is.
func rpushLine(key: String, value: String) -> [UInt8] {
    var text = "*3\r\n$5\r\nRPUSH\r\n"
    text += "$\(key.utf8.count)\r\n\(key)\r\n"
    text += "$\(value.utf8.count)\r\n\(value)\r\n"
    return Array(text.utf8)
}

/// Each load against listd, then at once against the SwiftNIO floor (`NIOFloor.swift`: listd's I/O
/// stack doing no work per request) and against Redis, three times; prints each triple and the ratios.
func redisComparison(listdSocket: String, listdPID: pid_t = 0) {
    let redisSocket = "/tmp/redis-bench-\(getpid()).sock"
    guard let redis = startRedis(socket: redisSocket) else {
        print("redis: redis-server is not installed (apt-get install redis-server); skipped")
        return
    }
    let floorSocket = "/tmp/nio-floor-\(getpid()).sock"
    let floor = startNIOFloor(socket: floorSocket)
    defer {
        for child in [redis, floor] {
            kill(child, SIGTERM)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        unlink(floorSocket)
    }
    /// A load's result and the server's CPU per request (µs).
    func measure(_ socket: String, _ pid: pid_t, _ connections: Int, _ pipeline: Int, _ perConnection: Int, line: (Int, Int) -> [UInt8])
        -> (LoadResult, Double)
    {
        let before = cpuSeconds(pid)
        let result = driveLoad(socket: socket, connections: connections, pipeline: pipeline, perConnection: perConnection, line: line)
        return (result, (cpuSeconds(pid) - before) / Double(connections * perConnection) * 1e6)
    }
    func describe(_ name: String, _ run: (LoadResult, Double)) -> String {
        "\(name) \(Int(run.0.requestsPerSecond)) req/s (p50 \(fixed(run.0.p50, 1)) µs, p99 \(fixed(run.0.p99, 1)) µs, CPU \(fixed(run.1, 2)) µs/req)"
    }
    let loads = [(1, 1, 50_000), (50, 1, 4_000), (1, 16, 150_000), (50, 16, 8_000)]
    for (connections, pipeline, perConnection) in loads {
        var ratios: [Double] = []
        var floorRatios: [Double] = []
        var lines: [String] = []
        for round in 0..<3 {
            let tag = "r\(connections)x\(pipeline)-\(round)"
            let setup = try! LineConnection(path: listdSocket)
            _ = try! setup.request(["cmd": "apply", "dataSource": .string(tag), "snapshot": ["sections": [["id": "S", "items": []]]]])
            let listd = measure(listdSocket, listdPID, connections, pipeline, perConnection) { index, number in
                appendLine(dataSource: tag, item: "c\(index)-\(number)")
            }
            _ = try? setup.request(["cmd": "dropDataSource", "dataSource": .string(tag)])
            let nio = measure(floorSocket, floor, connections, pipeline, perConnection) { index, number in
                appendLine(dataSource: tag, item: "c\(index)-\(number)")
            }
            let redisRun = measure(redisSocket, redis, connections, pipeline, perConnection) { index, number in
                rpushLine(key: tag, value: "c\(index)-\(number)")
            }
            ratios.append(listd.0.requestsPerSecond / redisRun.0.requestsPerSecond)
            floorRatios.append(nio.0.requestsPerSecond / redisRun.0.requestsPerSecond)
            lines.append(
                "  " + describe("listd", listd) + " | " + describe("SwiftNIO floor", nio) + " | " + describe("Redis", redisRun)
                    + " | listd \(fixed(listd.0.requestsPerSecond / redisRun.0.requestsPerSecond, 2))× Redis (p99 \(fixed(listd.0.p99 / redisRun.0.p99, 2))×),"
                    + " floor \(fixed(nio.0.requestsPerSecond / redisRun.0.requestsPerSecond, 2))× Redis")
        }
        ratios.sort()
        floorRatios.sort()
        print("appendItems vs RPUSH, \(connections) connection\(connections == 1 ? "" : "s"), \(pipeline) in flight: median \(fixed(ratios[1], 2))× Redis "
            + "(the SwiftNIO floor: \(fixed(floorRatios[1], 2))× Redis)")
        for line in lines { print(line) }
    }
}
