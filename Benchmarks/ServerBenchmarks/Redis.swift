// listd against Redis, driven by the same client (`driveLoad`): single-item appends as `appendItems` to
// listd and as `RPUSH` to a Redis started here on a Unix socket (no persistence, like `--ephemeral`).

import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `redis-server` on a Unix socket with persistence off; nil when it is not installed.
func startRedis(socket: String) -> pid_t? {
    let candidates = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
    let executable = candidates.first { path in access(path, X_OK) == 0 }
    guard let executable else { return nil }
    unlink(socket)
    let arguments = [executable, "--port", "0", "--unixsocket", socket, "--save", "", "--appendonly", "no", "--loglevel", "warning"]
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

/// Each load against listd, then at once against Redis, three times; prints each pair and the ratios.
func redisComparison(listdSocket: String, listdPID: pid_t = 0) {
    let redisSocket = "/tmp/redis-bench-\(getpid()).sock"
    guard let redis = startRedis(socket: redisSocket) else {
        print("redis: redis-server is not installed (apt-get install redis-server); skipped")
        return
    }
    defer {
        kill(redis, SIGTERM)
        var status: Int32 = 0
        waitpid(redis, &status, 0)
    }
    let loads = [(1, 1, 50_000), (50, 1, 4_000), (1, 16, 150_000), (50, 16, 8_000)]
    for (connections, pipeline, perConnection) in loads {
        var ratios: [Double] = []
        var lines: [String] = []
        for round in 0..<3 {
            let tag = "r\(connections)x\(pipeline)-\(round)"
            let setup = try! LineConnection(path: listdSocket)
            _ = try! setup.request(["cmd": "apply", "dataSource": .string(tag), "snapshot": ["sections": [["id": "S", "items": []]]]])
            let listdCPUBefore = cpuSeconds(listdPID)
            let listd = driveLoad(socket: listdSocket, connections: connections, pipeline: pipeline, perConnection: perConnection) { index, number in
                appendLine(dataSource: tag, item: "c\(index)-\(number)")
            }
            let listdCPU = (cpuSeconds(listdPID) - listdCPUBefore) / Double(connections * perConnection) * 1e6
            _ = try? setup.request(["cmd": "dropDataSource", "dataSource": .string(tag)])
            let redisCPUBefore = cpuSeconds(redis)
            let redisResult = driveLoad(socket: redisSocket, connections: connections, pipeline: pipeline, perConnection: perConnection) { index, number in
                rpushLine(key: tag, value: "c\(index)-\(number)")
            }
            let redisCPU = (cpuSeconds(redis) - redisCPUBefore) / Double(connections * perConnection) * 1e6
            ratios.append(listd.requestsPerSecond / redisResult.requestsPerSecond)
            lines.append(
                "  listd \(Int(listd.requestsPerSecond)) req/s (p50 \(fixed(listd.p50, 1)) µs, p99 \(fixed(listd.p99, 1)) µs)"
                    + " | Redis \(Int(redisResult.requestsPerSecond)) req/s (p50 \(fixed(redisResult.p50, 1)) µs, p99 \(fixed(redisResult.p99, 1)) µs)"
                    + " | \(fixed(listd.requestsPerSecond / redisResult.requestsPerSecond, 2))×, p99 \(fixed(listd.p99 / redisResult.p99, 2))×"
                    + " | CPU per request: listd \(fixed(listdCPU, 2)) µs, Redis \(fixed(redisCPU, 2)) µs")
        }
        ratios.sort()
        print("appendItems vs RPUSH, \(connections) connection\(connections == 1 ? "" : "s"), \(pipeline) in flight: median \(fixed(ratios[1], 2))× Redis")
        for line in lines { print(line) }
    }
}
