import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Durable against ephemeral

/// `server-benchmarks durability`: the same loads against the ephemeral listd and a durable one
/// (`--sync always`, a state directory under /tmp, or under `$LISTD_BENCH_STATE_BASE` to measure on
/// another file system such as tmpfs) in one run, with the ratios the goals are stated in:
/// single-item appends over 50 connections (unpipelined and 16 in flight), the apply of a 100k-item
/// snapshot, a start-up that loads 1,000,000 items with small payloads, and the size on disk.
func durabilityBenchmark(ephemeralSocket: String, appendsOnly: Bool = false) {
    let directory = (getenv("LISTD_BENCH_STATE_BASE").map { String(cString: $0) } ?? "/tmp") + "/listd-bench-state-\(getpid())"
    let durableSocket = "/tmp/listd-bench-durable-\(getpid()).sock"
    var durablePID = startListd(socket: durableSocket, storage: ["--state-directory", directory, "--sync", "always"])
    defer { _ = system("rm -rf \(directory)") }

    print("— appendItems, ephemeral against --sync always —")
    for (connections, pipeline, perConnection) in [(50, 1, 4_000), (50, 16, 8_000)] {
        let ephemeral = appendThroughput(socket: ephemeralSocket, connections: connections, pipeline: pipeline, perConnection: perConnection, tag: "e\(pipeline)")
        let before = storageCounters(socket: durableSocket)
        let durable = appendThroughput(socket: durableSocket, connections: connections, pipeline: pipeline, perConnection: perConnection, tag: "d\(pipeline)")
        let after = storageCounters(socket: durableSocket)
        let groups = max(1, after.groups - before.groups)
        let mutations = max(1, after.mutations - before.mutations)
        print("  durable: \(groups) groups, \(fixed(Double(mutations) / Double(groups), 1)) mutations per group, "
            + "\(fixed(Double(after.writeMilliseconds - before.writeMilliseconds) * 1_000 / Double(groups), 0)) µs per group write, "
            + "\(fixed(Double(after.waitMilliseconds - before.waitMilliseconds) * 1_000 / Double(mutations), 0)) µs mean wait for durability")
        print("  durable/ephemeral at \(connections)×\(pipeline): \(Int(100 * durable.requestsPerSecond / ephemeral.requestsPerSecond)) % of the throughput, "
            + "durable p99 \(fixed(durable.p99 / 1_000, 2)) ms")
    }

    if appendsOnly {
        kill(durablePID, SIGTERM)
        var status: Int32 = 0
        waitpid(durablePID, &status, 0)
        return
    }

    let ephemeralApply = applyMilliseconds(socket: ephemeralSocket)
    let durableApply = applyMilliseconds(socket: durableSocket)
    print("apply of a 100k-item snapshot: ephemeral \(fixed(ephemeralApply, 1)) ms, durable \(fixed(durableApply, 1)) ms "
        + "(\(fixed(durableApply / ephemeralApply, 2))×)")

    // 1,000,000 items with small payloads, then 10,000 single appends (a log tail to replay).
    let connection = try! LineConnection(path: durableSocket)
    let million = applyLine(dataSource: "million", count: 1_000_000, bytesPerItem: 40) { writer, index in
        writer.beginObject()
        writer.key("id")
        writer.string("item-\(index)")
        writer.key("data")
        writer.beginObject()
        writer.key("n")
        writer.int(index)
        writer.key("tag")
        writer.string(index % 2 == 0 ? "even" : "odd")
        writer.endObject()
        writer.endObject()
    }
    try! connection.send(bytes: million)
    _ = try! connection.readLine(timeout: .seconds(120))
    for index in 0..<10_000 { _ = try! connection.request(["cmd": "appendItems", "dataSource": "million", "items": [.string("tail-\(index)")]]) }
    let snapshotBytes = try! connection.requestLine(["cmd": "snapshot", "dataSource": "million"], timeout: .seconds(120)).line.count
    kill(durablePID, SIGTERM)
    var status: Int32 = 0
    waitpid(durablePID, &status, 0)
    let diskBytes = directoryBytes(directory)
    print("on disk: \(diskBytes >> 20) MiB for 1,010,000 items whose snapshot JSON is \(snapshotBytes >> 20) MiB "
        + "(\(fixed(Double(diskBytes) / Double(snapshotBytes), 2))×)")

    var startups: [Double] = []
    for _ in 0..<3 {
        let start = nanoseconds()
        durablePID = startListd(socket: durableSocket, storage: ["--state-directory", directory])
        startups.append(Double(nanoseconds() - start) / 1e9)
        let count = try! LineConnection(path: durableSocket).request(["cmd": "numberOfItems", "dataSource": "million"])["result"]?["count"]
        precondition(count == 1_010_000, "the restart lost items: \(String(describing: count))")
        kill(durablePID, SIGTERM)
        waitpid(durablePID, &status, 0)
    }
    startups.sort()
    print("start-up loading 1,010,000 items (until the socket answers): median \(fixed(startups[1], 2)) s")
}

/// The durable listd's `stats.storage` counters.
func storageCounters(socket: String) -> (groups: Int, mutations: Int, writeMilliseconds: Int, waitMilliseconds: Int) {
    let storage = try! LineConnection(path: socket).request(["cmd": "stats"])["result"]?["storage"]
    func counter(_ key: String) -> Int { storage?[key]?.intValue ?? 0 }
    return (counter("groupsWritten"), counter("mutationsWritten"), counter("writeMilliseconds"), counter("waitMilliseconds"))
}

/// The median time of applying the second of two 100k-item snapshots (a diff with moves, inserts and
/// deletes), end to end.
func applyMilliseconds(socket: String) -> Double {
    let source = uuids(100_000, seed: 1)
    var target = source
    target.removeSubrange(20_000..<30_000)
    target.insert(contentsOf: uuids(10_000, seed: 2), at: 30_000)
    let first = applyLine(source, dataSource: "apply")
    let second = applyLine(target, dataSource: "apply")
    let connection = try! LineConnection(path: socket)
    var times: [Double] = []
    for _ in 0..<5 {
        try! connection.send(bytes: first)
        _ = try! connection.readLine(timeout: .seconds(60))
        let start = nanoseconds()
        try! connection.send(bytes: second)
        _ = try! connection.readLine(timeout: .seconds(60))
        times.append(Double(nanoseconds() - start) / 1e6)
    }
    times.sort()
    return times[times.count / 2]
}

/// The bytes of the regular files in a directory.
func directoryBytes(_ path: String) -> Int {
    guard let handle = opendir(path) else { return 0 }
    defer { closedir(handle) }
    var total = 0
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var status = stat()
        if stat(path + "/" + name, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG { total += Int(status.st_size) }
    }
    return total
}
