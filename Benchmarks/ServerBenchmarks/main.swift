// Benchmarks for listd over its Unix socket. Run with:
//     swift build -c release && swift run -c release server-benchmarks
// It starts the release `listd` from the same build directory on a socket in /tmp, drives it from one
// client thread (poll() over every connection, requests encoded in advance, as redis-benchmark does),
// and prints throughput, latency percentiles and listd's CPU per request. `server-benchmarks redis` drives
// a Redis it starts (RPUSH) with the same client, back to back (Redis.swift).

import CEpoll
import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Process and sockets

func binaryDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let path = String(decoding: buffer[0..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
}

/// CPU seconds (user + system) a process has used, from /proc/PID/stat.
func cpuSeconds(_ pid: pid_t) -> Double {
    guard let file = fopen("/proc/\(pid)/stat", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 4096)
    guard fgets(&line, 4096, file) != nil else { return 0 }
    let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // Fields after the command name (which ends with ")"): state is field 3; utime, stime are 14, 15.
    let fields = text[text.index(after: text.lastIndex(of: ")")!)...].split(separator: " ")
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (Double(fields[11])! + Double(fields[12])!) / ticks
}

/// CPU time of `pid`'s live threads in seconds, to the nanosecond (`/proc/PID/task/*/schedstat`),
/// where `cpuSeconds` counts clock ticks of 10 ms. Threads that ended are not counted.
func preciseCPUSeconds(_ pid: pid_t) -> Double {
    guard pid != 0, let directory = opendir("/proc/\(pid)/task") else { return 0 }
    defer { closedir(directory) }
    var total: UInt64 = 0
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard name.first?.isNumber == true, let file = fopen("/proc/\(pid)/task/\(name)/schedstat", "r") else { continue }
        var line = [CChar](repeating: 0, count: 256)
        if fgets(&line, 256, file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            total += text.split(separator: " ").first.flatMap { UInt64($0) } ?? 0
        }
        fclose(file)
    }
    return Double(total) / 1e9
}

func startListd(socket: String, storage: [String] = ["--ephemeral"]) -> pid_t {
    unlink(socket)
    var pid: pid_t = 0
    // LISTD_BENCH_LISTD: another listd binary (to compare two builds run after run).
    let binary = getenv("LISTD_BENCH_LISTD").map { String(cString: $0) } ?? binaryDirectory() + "/listd"
    let arguments = [binary, "--socket", socket, "--log-level", "warning", "--max-line-bytes", "67108864"] + storage
    var cArguments = arguments.map { strdup($0) } + [nil]
    let status = posix_spawn(&pid, arguments[0], nil, nil, &cArguments, environ)
    precondition(status == 0, "cannot start \(arguments[0])")
    for _ in 0..<500 {
        if (try? LineConnection(path: socket)) != nil { return pid }
        usleep(10_000)
    }
    fatalError("listd did not start")
}

func connectRaw(_ path: String) -> Int32 {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(result == 0, "connect failed")
    return descriptor
}

func nanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func percentile(_ sorted: [UInt64], _ fraction: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1_000
}

func fixed(_ value: Double, _ decimals: Int) -> String {
    let scale = pow(10, Double(decimals))
    let scaled = Int((value * scale).rounded())
    guard decimals > 0 else { return "\(scaled)" }
    let fraction = String(abs(scaled) % Int(scale))
    return "\(scaled / Int(scale))." + String(repeating: "0", count: decimals - fraction.count) + fraction
}

// MARK: Throughput

/// What one load run measured.
struct LoadResult {
    var requestsPerSecond: Double
    var p50: Double
    var p99: Double
    /// The slowest request, in microseconds.
    var maximum: Double = 0
}

/// `connections` clients each send `perConnection` requests (`line(client, number)`, each ending in
/// `\n`), keeping `pipeline` in flight per connection; every reply ends with one `\n` (listd's lines,
/// Redis's `:N\r\n`). One thread polls every connection, so listd and Redis are driven identically.
func driveLoad(socket: String, connections: Int, pipeline: Int, perConnection: Int, line: (Int, Int) -> [UInt8]) -> LoadResult {
    struct Client {
        var descriptor: Int32
        var lines: [[UInt8]]
        var sent = 0
        var received = 0
        var sendTimes: [UInt64]
    }
    var clients: [Client] = (0..<connections).map { index in
        let lines = (0..<perConnection).map { number in line(index, number) }
        return Client(descriptor: connectRaw(socket), lines: lines, sendTimes: Array(repeating: 0, count: perConnection))
    }
    var latencies: [UInt64] = []
    latencies.reserveCapacity(connections * perConnection)
    var buffer = [UInt8](repeating: 0, count: 1 << 20)

    func sendMore(_ client: inout Client) {
        var batch: [UInt8] = []
        let now = nanoseconds()
        while client.sent < client.lines.count && client.sent - client.received < pipeline {
            batch.append(contentsOf: client.lines[client.sent])
            client.sendTimes[client.sent] = now
            client.sent += 1
        }
        var offset = 0
        while offset < batch.count {
            let written = batch[offset...].withUnsafeBytes { write(client.descriptor, $0.baseAddress, $0.count) }
            precondition(written > 0, "write failed")
            offset += written
        }
    }

    let start = nanoseconds()
    for index in clients.indices { sendMore(&clients[index]) }
    var pollers = clients.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
    var done = 0
    while done < connections {
        _ = poll(&pollers, nfds_t(pollers.count), 10_000)
        for index in pollers.indices where pollers[index].revents & Int16(POLLIN) != 0 {
            let count = buffer.withUnsafeMutableBytes { read(clients[index].descriptor, $0.baseAddress, $0.count) }
            precondition(count > 0, "the server closed a connection")
            let now = nanoseconds()
            for byte in buffer[0..<count] where byte == 0x0A {
                latencies.append(now - clients[index].sendTimes[clients[index].received])
                clients[index].received += 1
            }
            if clients[index].received == clients[index].lines.count {
                done += 1
                pollers[index].events = 0
            } else {
                sendMore(&clients[index])
            }
        }
    }
    let elapsed = Double(nanoseconds() - start) / 1e9
    for client in clients { close(client.descriptor) }
    latencies.sort()
    return LoadResult(
        requestsPerSecond: Double(connections * perConnection) / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99),
        maximum: Double(latencies.last ?? 0) / 1_000)
}

/// A single-item `appendItems` request line.
func appendLine(dataSource: String, item: String) -> [UInt8] {
    Array(#"{"cmd":"appendItems","dataSource":"\#(dataSource)","items":["\#(item)"]}"#.utf8) + [0x0A]
}

/// `connections` clients each send `perConnection` single-item appendItems, keeping `pipeline` in flight.
@discardableResult
func appendThroughput(socket: String, connections: Int, pipeline: Int, perConnection: Int, tag: String, listdPID: pid_t = 0) -> (requestsPerSecond: Double, p99: Double) {
    let setup = try! LineConnection(path: socket)
    let cpuBefore = cpuSeconds(listdPID)
    _ = try! setup.request(["cmd": "apply", "dataSource": .string(tag), "snapshot": ["sections": [["id": "S", "items": []]]]])
    let result = driveLoad(socket: socket, connections: connections, pipeline: pipeline, perConnection: perConnection) { index, number in
        appendLine(dataSource: tag, item: "c\(index)-\(number)")
    }
    let cpu = (cpuSeconds(listdPID) - cpuBefore) / Double(connections * perConnection) * 1e6
    print("appendItems, \(connections) connection\(connections == 1 ? "" : "s"), \(pipeline) in flight: "
        + "\(Int(result.requestsPerSecond)) requests/s, p50 \(fixed(result.p50, 1)) µs, p99 \(fixed(result.p99, 1)) µs, max \(fixed(result.maximum / 1_000, 1)) ms"
        + (listdPID == 0 ? "" : "; listd CPU \(fixed(cpu, 2)) µs per request"))
    _ = try? setup.request(["cmd": "dropDataSource", "dataSource": .string(tag)])
    return (result.requestsPerSecond, result.p99)
}

// MARK: Whole-snapshot apply

func uuids(_ count: Int, seed: UInt64) -> [String] {
    var state = seed
    let digits = Array("0123456789ABCDEF".utf8)
    return (0..<count).map { _ in
        var bytes: [UInt8] = []
        for index in 0..<36 {
            if [8, 13, 18, 23].contains(index) {
                bytes.append(UInt8(ascii: "-"))
                continue
            }
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes.append(digits[Int(state >> 60)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

func applyLine(_ ids: [String], dataSource: String) -> [UInt8] {
    applyLine(dataSource: dataSource, count: ids.count, bytesPerItem: 40) { writer, index in writer.string(ids[index]) }
}

/// An `apply` request line of one section "S" with `count` items, each written by `writeItem`.
func applyLine(dataSource: String, count: Int, bytesPerItem: Int, _ writeItem: (inout JSONWriter, Int) -> Void) -> [UInt8] {
    var writer = JSONWriter(capacity: count * bytesPerItem + 200)
    writer.beginObject()
    writer.key("cmd")
    writer.string("apply")
    writer.key("dataSource")
    writer.string(dataSource)
    writer.key("snapshot")
    writer.beginObject()
    writer.key("sections")
    writer.beginArray()
    writer.beginObject()
    writer.key("id")
    writer.string("S")
    writer.key("items")
    writer.beginArray()
    for index in 0..<count { writeItem(&writer, index) }
    writer.endArray()
    writer.endObject()
    writer.endArray()
    writer.endObject()
    writer.endObject()
    return writer.bytes + [0x0A]
}

/// The hashing floor, as in core-benchmarks: building a `Dictionary<String, Int>` of `ids` with
/// reserved capacity, in milliseconds.
func hashingFloor(_ ids: [String]) -> Double {
    let start = nanoseconds()
    var index = [String: Int]()
    index.reserveCapacity(ids.count)
    for (position, id) in ids.enumerated() { index[id] = position }
    precondition(index.count == ids.count)
    return Double(nanoseconds() - start) / 1e6
}

/// The median of `values` (not empty).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// `apply` of a 100k-item snapshot over the socket, diffed against the previous 100k, against the
/// hashing floor. This machine's speed drifts during a run, so the floor is measured in every round
/// right before and right after the timed apply (the better of the two), and the figure is the
/// median of the per-round ratios, with their range.
func applyBenchmark(socket: String, listdPID: pid_t = 0) {
    let count = 100_000
    let source = uuids(count, seed: 1)
    var target = source
    target.removeSubrange(20_000..<30_000)
    target.insert(contentsOf: uuids(10_000, seed: 2), at: 30_000)
    var random = SystemRandomNumberGenerator()
    target[0..<2_000].shuffle(using: &random)
    let first = applyLine(source, dataSource: "big")
    let second = applyLine(target, dataSource: "big")

    // JSON parsing alone (the daemon's parser), for the same line.
    var parses: [Double] = []
    for _ in 0..<5 {
        let start = nanoseconds()
        _ = try! JSONParser.parse(second)
        parses.append(Double(nanoseconds() - start) / 1e6)
    }

    let connection = try! LineConnection(path: socket)
    var times: [Double] = []
    var floors: [Double] = []
    var ratios: [Double] = []
    var firstCPU: [Double] = []
    var diffCPU: [Double] = []
    var replyBytes = 0
    for round in 0..<8 {
        // Back to the source: the first round creates the data source (a full apply), later ones
        // diff the target back to the source.
        let firstBefore = preciseCPUSeconds(listdPID)
        try! connection.send(bytes: first)
        _ = try! connection.readLine(timeout: .seconds(60))
        let firstAfter = preciseCPUSeconds(listdPID)
        let floorBefore = hashingFloor(target)
        let start = nanoseconds()
        try! connection.send(bytes: second)
        let reply = try! connection.readLine(timeout: .seconds(60))!
        let elapsed = Double(nanoseconds() - start) / 1e6
        let cpuAfter = preciseCPUSeconds(listdPID)
        let floor = min(floorBefore, hashingFloor(target))
        replyBytes = reply.count
        if round == 0 { continue }  // warm-up
        times.append(elapsed)
        floors.append(floor)
        ratios.append(elapsed / floor)
        firstCPU.append((firstAfter - firstBefore) * 1_000)
        diffCPU.append((cpuAfter - firstAfter) * 1_000)
    }
    print("apply of a 100k-item snapshot (\(second.count / 1_000) kB line, diff against the previous 100k): "
        + "\(fixed(median(times), 1)) ms end to end (\(fixed(times.min()!, 1))–\(fixed(times.max()!, 1))); "
        + "hashing floor \(fixed(median(floors), 1)) ms (\(fixed(floors.min()!, 1))–\(fixed(floors.max()!, 1))); "
        + "per-round ratio median \(fixed(median(ratios), 2))× (\(fixed(ratios.min()!, 2))–\(fixed(ratios.max()!, 2))×, \(ratios.count) rounds)")
    print("  JSON parse alone \(fixed(median(parses), 1)) ms; reply \(replyBytes / 1_000) kB"
        + (listdPID == 0 ? "" : "; listd CPU per apply (median, range): \(fixed(median(diffCPU), 1)) ms (\(fixed(diffCPU.min()!, 1))–\(fixed(diffCPU.max()!, 1))) for the timed diff, "
            + "\(fixed(median(firstCPU), 1)) ms (\(fixed(firstCPU.min()!, 1))–\(fixed(firstCPU.max()!, 1))) for the apply back to the source"))
}

// MARK: Reading a snapshot back

/// `listctl show DS --json` of 100k, 400k and 1M items with small payloads: the whole client path
/// (reading a reply of tens of megabytes, parsing it, printing it), which must grow linearly.
func readBackBenchmark(socket: String) {
    let connection = try! LineConnection(path: socket)
    for count in [100_000, 400_000, 1_000_000] {
        let line = applyLine(dataSource: "read\(count)", count: count, bytesPerItem: 48) { writer, index in
            writer.value(["id": .string("item-\(index)"), "data": ["title": .string("Item \(index)"), "n": .int(index)]])
        }
        try! connection.send(bytes: line)
        _ = try! connection.readLine(timeout: .seconds(120))
        var times: [Double] = []
        for _ in 0..<3 {
            var pid: pid_t = 0
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            let arguments = [binaryDirectory() + "/listctl", "--socket", socket, "show", "read\(count)", "--json"]
            var cArguments = arguments.map { strdup($0) } + [nil]
            let start = nanoseconds()
            precondition(posix_spawn(&pid, arguments[0], &actions, nil, &cArguments, environ) == 0, "cannot start listctl")
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            times.append(Double(nanoseconds() - start) / 1e9)
            posix_spawn_file_actions_destroy(&actions)
            precondition(status == 0, "listctl show failed")
        }
        print("listctl show --json of \(count / 1_000)k items with payloads: \(fixed(times.min()!, 2)) s (best of 3)")
    }
}

// MARK: Fan-out

func fanOutBenchmark(socket: String, views: Int) {
    let setup = try! LineConnection(path: socket)
    _ = try! setup.request(["cmd": "apply", "dataSource": "wide", "snapshot": ["sections": [["id": "S", "items": []]]]])
    var descriptors: [Int32] = []
    let attach = Array(#"{"cmd":"attach","dataSource":"wide"}"#.utf8) + [0x0A]
    var buffer = [UInt8](repeating: 0, count: 65_536)
    for _ in 0..<views {
        let descriptor = connectRaw(socket)
        _ = attach.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        var got = 0
        while got == 0 || buffer[got - 1] != 0x0A {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + got, $0.count - got) }
            precondition(count > 0)
            got += count
        }
        descriptors.append(descriptor)
    }
    var results: [Double] = []
    // epoll, so that the client's wait is O(ready views), not O(views) per wake-up (with poll() the
    // client, not listd, was most of the figure at 10,000 views).
    let epoll = epoll_create1(0)
    precondition(epoll >= 0)
    defer { close(epoll) }
    for descriptor in descriptors {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = descriptor
        precondition(epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0)
    }
    var ready = [epoll_event](repeating: epoll_event(), count: 1_024)
    for round in 0..<5 {
        let start = nanoseconds()
        try! setup.send(["cmd": "appendItems", "dataSource": "wide", "items": [.string("x\(round)")]])
        var remaining = views
        // A view counts once, when the read that ends its line comes (a line may take more than one).
        while remaining > 0 {
            let count = epoll_wait(epoll, &ready, Int32(ready.count), 10_000)
            if count < 0 && errno == EINTR { continue }
            precondition(count > 0, "a view did not get the change")
            for index in 0..<Int(count) {
                let descriptor = ready[index].data.fd
                let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                precondition(got > 0, "listd closed a view's connection")
                if buffer[got - 1] == 0x0A { remaining -= 1 }
            }
        }
        results.append(Double(nanoseconds() - start) / 1e6)
        _ = try! setup.readLine()
    }
    results.sort()
    print("one change fanned out to \(views) views: all received it within \(fixed(results[2], 2)) ms (median of 5)")
    for descriptor in descriptors { close(descriptor) }
}

// MARK: Dequeue

/// Dequeue throughput for the built-in list configuration with a two-field template: batches of
/// `batch` index paths (and endDisplaying of the previous batch), pipelined `pipeline` deep.
/// What one dequeue run measured.
struct DequeueRun {
    var cellsPerSecond: Double
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    var serverMicrosecondsPerCell: Double
    var created: Int
    var dequeued: Int
}

/// A 100,000-item data source `dataSource` whose cells all come from registration `registration`.
func prepareDequeue(_ connection: LineConnection, dataSource: String, registration: String, contentConfiguration: JSONValue) {
    let count = 100_000
    _ = try! connection.request(["cmd": "register", "registration": .string(registration), "contentConfiguration": contentConfiguration])
    var writer = JSONWriter(capacity: count * 80)
    writer.beginObject()
    writer.key("cmd"); writer.string("apply")
    writer.key("dataSource"); writer.string(dataSource)
    writer.key("snapshot"); writer.beginObject(); writer.key("sections"); writer.beginArray(); writer.beginObject()
    writer.key("id"); writer.string("S"); writer.key("items"); writer.beginArray()
    for index in 0..<count {
        writer.value(["id": .string("i\(index)"), "data": ["title": .string("Item \(index)"), "subtitle": .string("Subtitle \(index)"), "text": "😀"]])
    }
    writer.endArray(); writer.endObject(); writer.endArray(); writer.endObject(); writer.endObject()
    try! connection.send(bytes: writer.bytes + [0x0A])
    _ = try! connection.readLine(timeout: .seconds(60))
    _ = try! connection.request(["cmd": "setCellProvider", "dataSource": .string(dataSource), "rules": [], "default": .string(registration)])
    _ = try! connection.request(["cmd": "attach", "dataSource": .string(dataSource), "view": .string(dataSource)])
}

/// Scrolls view `dataSource` (see `prepareDequeue`) as a view does: each write ends displaying the
/// previous batch and dequeues the next; every batch's round trip is timed.
func runDequeue(_ connection: LineConnection, dataSource view: String, registration: String, batch: Int, rounds: Int, listdPID: pid_t) -> DequeueRun {
    let count = 100_000
    var lines: [[UInt8]] = []
    for round in 0..<rounds {
        let first = (round * batch) % (count - batch)
        let paths = (first..<first + batch).map { "[0,\($0)]" }.joined(separator: ",")
        lines.append(Array(#"{"cmd":"dequeue","view":"\#(view)","indexPaths":[\#(paths)]}"#.utf8) + [0x0A])
    }
    var cellsDequeued = 0
    var latencies: [UInt64] = []
    latencies.reserveCapacity(rounds)
    let cpuBefore = cpuSeconds(listdPID)
    let start = nanoseconds()
    var previous: [String] = []
    for line in lines {
        var bytes = line
        if !previous.isEmpty {
            bytes = Array((#"{"cmd":"endDisplaying","view":"\#(view)","cells":["# + previous.map { "\"\($0)\"" }.joined(separator: ",") + "]}\n").utf8) + line
        }
        let sent = nanoseconds()
        try! connection.send(bytes: bytes)
        if !previous.isEmpty { _ = try! connection.readLine(timeout: .seconds(30)) }
        let reply = try! connection.readLine(timeout: .seconds(30))!
        latencies.append(nanoseconds() - sent)
        if cellsDequeued == 0, reply.count < 100_000, String(decoding: reply, as: UTF8.self).contains("\"error\"") {
            fatalError("dequeue failed: \(String(decoding: reply.prefix(600), as: UTF8.self))")
        }
        previous = cellIdentifiers(in: reply)
        cellsDequeued += previous.count
    }
    let elapsed = Double(nanoseconds() - start) / 1e9
    let serverCPU = cpuSeconds(listdPID) - cpuBefore
    let stats = try! connection.request(["cmd": "registrations"])
    let created = stats["result"]?["registrations"]?.arrayValue.first { $0["registration"]?.stringValue == registration }?["created"]?.intValue ?? 0
    latencies.sort()
    return DequeueRun(
        cellsPerSecond: Double(cellsDequeued) / elapsed, p50Milliseconds: percentile(latencies, 0.5) / 1e3,
        p99Milliseconds: percentile(latencies, 0.99) / 1e3, serverMicrosecondsPerCell: serverCPU / Double(cellsDequeued) * 1e6,
        created: created, dequeued: cellsDequeued)
}

func dequeueBenchmark(socket: String, batch: Int, rounds: Int, listdPID: pid_t) {
    let connection = try! LineConnection(path: socket)
    let dataSource = "cells\(batch)"
    prepareDequeue(connection, dataSource: dataSource, registration: "bench\(batch)", contentConfiguration: [
        "type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{subtitle}}",
    ])
    let run = runDequeue(connection, dataSource: dataSource, registration: "bench\(batch)", batch: batch, rounds: rounds, listdPID: listdPID)
    print("dequeue, batches of \(batch) (with endDisplaying of the previous batch in the same write): \(Int(run.cellsPerSecond)) cells/s end to end, "
        + "p50 \(fixed(run.p50Milliseconds, 3)) ms, p99 \(fixed(run.p99Milliseconds, 3)) ms per batch; "
        + "listd used \(fixed(run.serverMicrosecondsPerCell, 2)) µs of CPU per cell (\(Int(1e6 / run.serverMicrosecondsPerCell)) cells per CPU-second); "
        + "\(run.created) cells created for \(run.dequeued) dequeued")
}

/// The same scroll through the emoji plugin (built with ListPluginKit, a separate process) and through a
/// built-in registration showing the same thing: cells/s, p50/p99 per batch of 50, and the difference.
/// Starts the emoji plugin on `socket` and waits until listd lists it; kill it with `stopProcess`.
func startEmojiPlugin(socket: String, connection: LineConnection) -> pid_t {
    var pluginPID: pid_t = 0
    let arguments = [binaryDirectory() + "/emoji-plugin", "--socket", socket]
    var cArguments = arguments.map { strdup($0) } + [nil]
    precondition(posix_spawn(&pluginPID, arguments[0], nil, nil, &cArguments, environ) == 0, "cannot start \(arguments[0])")
    for _ in 0..<500 {
        if connection.requestOrNil(["cmd": "stats"])?["result"]?["plugins"]?.arrayValue.isEmpty == false { break }
        usleep(10_000)
    }
    return pluginPID
}

/// Kills a child process and reaps it.
func stopProcess(_ pid: pid_t) {
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
}

func pluginBenchmark(socket: String, batch: Int, rounds: Int, listdPID: pid_t) {
    let connection = try! LineConnection(path: socket)
    let pluginPID = startEmojiPlugin(socket: socket, connection: connection)
    defer { stopProcess(pluginPID) }
    prepareDequeue(connection, dataSource: "viaPlugin", registration: "pluginEmoji", contentConfiguration: ["type": "plugin:emoji"])
    prepareDequeue(connection, dataSource: "builtIn", registration: "builtInEmoji", contentConfiguration: [
        "type": "cell", "text": "{{text}}", "textProperties": ["font": "largeTitle", "alignment": "center"],
    ])
    // Warm both paths up, then measure.
    _ = runDequeue(connection, dataSource: "viaPlugin", registration: "pluginEmoji", batch: batch, rounds: rounds / 10, listdPID: listdPID)
    _ = runDequeue(connection, dataSource: "builtIn", registration: "builtInEmoji", batch: batch, rounds: rounds / 10, listdPID: listdPID)
    let pluginCPUBefore = cpuSeconds(pluginPID)
    let viaPlugin = runDequeue(connection, dataSource: "viaPlugin", registration: "pluginEmoji", batch: batch, rounds: rounds, listdPID: listdPID)
    let pluginCPU = cpuSeconds(pluginPID) - pluginCPUBefore
    let builtIn = runDequeue(connection, dataSource: "builtIn", registration: "builtInEmoji", batch: batch, rounds: rounds, listdPID: listdPID)
    for (name, run) in [("through the emoji plugin (ListPluginKit)", viaPlugin), ("built-in registration, same cells", builtIn)] {
        print("dequeue \(name), batches of \(batch): \(Int(run.cellsPerSecond)) cells/s, p50 \(fixed(run.p50Milliseconds, 3)) ms, "
            + "p99 \(fixed(run.p99Milliseconds, 3)) ms per batch; listd \(fixed(run.serverMicrosecondsPerCell, 2)) µs CPU per cell")
    }
    print("plugin overhead: \(fixed(builtIn.cellsPerSecond / viaPlugin.cellsPerSecond, 2))× the time per cell, "
        + "+\(fixed(viaPlugin.p99Milliseconds - builtIn.p99Milliseconds, 3)) ms p99 per batch; the plugin process used "
        + "\(fixed(pluginCPU / Double(viaPlugin.dequeued) * 1e6, 2)) µs of CPU per cell")
}

// MARK: Scrolling a million items

/// A 50-row window scrolled over 1,000,000 items (two registrations), 10 rows at a time, down and back:
/// how many cells are created, and the memory a displayed cell costs.
func scrollBenchmark(socket: String, listdPID: pid_t) {
    let connection = try! LineConnection(path: socket)
    let count = 1_000_000
    let rows = 50
    let step = 10
    _ = try! connection.request(["cmd": "register", "registration": "odd", "contentConfiguration": ["type": "cell", "text": "{{id}}"]])
    _ = try! connection.request(["cmd": "register", "registration": "even", "contentConfiguration": ["type": "valueCell", "text": "{{id}}", "secondaryText": "{{p}}"]])
    var writer = JSONWriter(capacity: count * 40)
    writer.beginObject()
    writer.key("cmd"); writer.string("apply")
    writer.key("dataSource"); writer.string("million")
    writer.key("snapshot"); writer.beginObject(); writer.key("sections"); writer.beginArray(); writer.beginObject()
    writer.key("id"); writer.string("S"); writer.key("items"); writer.beginArray()
    for index in 0..<count { writer.value(["id": .string("m\(index)"), "data": ["p": .int(index % 2)]]) }
    writer.endArray(); writer.endObject(); writer.endArray(); writer.endObject(); writer.endObject()
    try! connection.send(bytes: writer.bytes + [0x0A])
    _ = try! connection.readLine(timeout: .seconds(120))
    _ = try! connection.request([
        "cmd": "setCellProvider", "dataSource": "million", "rules": [["match": ["field": "p", "equals": 0], "registration": "even"]], "default": "odd",
    ])
    _ = try! connection.request(["cmd": "attach", "dataSource": "million", "view": "scroller"])
    var window: [Int: String] = [:]
    func move(leaving: [Int], entering: Range<Int>) {
        var bytes: [UInt8] = []
        if !leaving.isEmpty {
            let cells = leaving.compactMap { window.removeValue(forKey: $0) }
            bytes += Array((#"{"cmd":"endDisplaying","view":"scroller","cells":["# + cells.map { "\"\($0)\"" }.joined(separator: ",") + "]}\n").utf8)
        }
        bytes += Array((#"{"cmd":"dequeue","view":"scroller","indexPaths":["# + entering.map { "[0,\($0)]" }.joined(separator: ",") + "]}\n").utf8)
        try! connection.send(bytes: bytes)
        if !leaving.isEmpty { _ = try! connection.readLine() }
        let reply = try! JSONParser.parse(try! connection.readLine()!)
        for cell in reply["result"]?["cells"]?.arrayValue ?? [] {
            window[cell["indexPath"]!.arrayValue[1].intValue!] = cell["cell"]!.stringValue!
        }
    }
    let start = nanoseconds()
    move(leaving: [], entering: 0..<rows)
    var first = 0
    while first + rows + step <= count {
        move(leaving: Array(first..<first + step), entering: first + rows..<first + rows + step)
        first += step
    }
    while first >= step {
        move(leaving: Array(first + rows - step..<first + rows), entering: first - step..<first)
        first -= step
    }
    let elapsed = Double(nanoseconds() - start) / 1e9
    let registrations = try! connection.request(["cmd": "registrations"])["result"]!["registrations"]!.arrayValue
    let created = registrations.compactMap { $0["created"]?.intValue }.reduce(0, +)
    let reused = registrations.compactMap { $0["reused"]?.intValue }.reduce(0, +)
    print("scrolling 1M items with a 50-row window, 10 rows a step, down and back: \(created) cells created "
        + "(limit 50 + 2 × \(registrations.count) registrations = \(50 + 2 * registrations.count)), \(reused) reused, \(fixed(elapsed, 1)) s")

}

// MARK: Main

signal(SIGPIPE, SIG_IGN)
// LISTD_BENCH_SOCKET: drive a listd started elsewhere (e.g. under valgrind --tool=callgrind) instead.
// The SwiftNIO floor server, started by `redisComparison` as a child process.
if CommandLine.arguments.dropFirst().first == "nio-floor-server" { runNIOFloorServer(socket: CommandLine.arguments[2]) }
let externalSocket = getenv("LISTD_BENCH_SOCKET").map { String(cString: $0) }
let socketPath = externalSocket ?? "/tmp/listd-bench-\(getpid()).sock"
// Room for the 10,000-view fan-out (the default maxConnections is 4,096).
let benchConfig = "/tmp/listd-bench-\(getpid()).json"
if let file = fopen(benchConfig, "w") {
    fputs("{\"maxConnections\": 20000, \"maxConnectionsPerUser\": 20000}\n", file)
    fclose(file)
}
let pid = externalSocket == nil ? startListd(socket: socketPath, storage: ["--ephemeral", "--config", benchConfig]) : 0
let mode = CommandLine.arguments.dropFirst().first ?? "all"
if mode == "in-process" {
    // Needs no listd process (started anyway for uniformity); repeat to see the spread.
    for _ in 0..<3 { inProcessAppendBenchmark(views: 0) }
    for _ in 0..<3 { inProcessAppendBenchmark(views: 1) }
    for _ in 0..<3 { inProcessWindowBenchmark() }
}
if mode == "in-process-append" {
    for _ in 0..<3 { inProcessAppendBenchmark(views: 0) }
}
if mode == "in-process-durable" {
    for _ in 0..<3 { inProcessAppendBenchmark(views: 0, durable: true) }
}
if mode == "in-process-window" {
    for _ in 0..<3 { inProcessWindowBenchmark() }
}
if mode == "append-profile" {
    // A fixed load for profiling: 50 connections, 16 in flight, 2,000 appends each.
    appendThroughput(socket: socketPath, connections: 50, pipeline: 16, perConnection: 2_000, tag: "p", listdPID: pid)
}
if mode == "append-profile-single" {
    // One connection, one in flight: what a request costs when nothing is batched.
    appendThroughput(socket: socketPath, connections: 1, pipeline: 1, perConnection: 20_000, tag: "ps", listdPID: pid)
}
if mode == "append-profile-1" {
    // The same, one in flight per connection.
    appendThroughput(socket: socketPath, connections: 50, pipeline: 1, perConnection: 2_000, tag: "p1", listdPID: pid)
}
if mode == "all" || mode == "throughput" {
    appendThroughput(socket: socketPath, connections: 1, pipeline: 1, perConnection: 100_000, tag: "t1", listdPID: pid)
    appendThroughput(socket: socketPath, connections: 1, pipeline: 16, perConnection: 300_000, tag: "t2", listdPID: pid)
    appendThroughput(socket: socketPath, connections: 50, pipeline: 1, perConnection: 6_000, tag: "t3", listdPID: pid)
    appendThroughput(socket: socketPath, connections: 50, pipeline: 16, perConnection: 12_000, tag: "t4", listdPID: pid)
}
if mode == "all" || mode == "apply" { applyBenchmark(socket: socketPath, listdPID: pid) }
if mode == "stall" { stallBenchmark(socket: socketPath) }
if mode == "stall-durable" {
    // The same with the SQLite store (--sync always) in a fresh state directory.
    let directory = "/tmp/listd-bench-stall-\(getpid())"
    let durableSocket = "/tmp/listd-bench-stall-\(getpid()).sock"
    let durablePID = startListd(socket: durableSocket, storage: ["--state-directory", directory, "--sync", "always"])
    stallBenchmark(socket: durableSocket)
    kill(durablePID, SIGTERM)
    var status: Int32 = 0
    waitpid(durablePID, &status, 0)
    _ = system("rm -rf '\(directory)'")
}
if mode == "all" || mode == "readback" { readBackBenchmark(socket: socketPath) }
if mode == "all" || mode == "fanout" {
    fanOutBenchmark(socket: socketPath, views: 1_000)
    fanOutBenchmark(socket: socketPath, views: 10_000)
}
if mode == "all" || mode == "scroll" { scrollBenchmark(socket: socketPath, listdPID: pid) }
if mode == "all" || mode == "dequeue" {
    dequeueBenchmark(socket: socketPath, batch: 50, rounds: 2_000, listdPID: pid)
    dequeueBenchmark(socket: socketPath, batch: 1, rounds: 20_000, listdPID: pid)
}
if mode == "all" || mode == "window" { windowBenchmark(socket: socketPath, listdPID: pid) }
if mode == "all" || mode == "redis" { redisComparison(listdSocket: socketPath, listdPID: pid) }
if mode == "durability" { durabilityBenchmark(ephemeralSocket: socketPath) }
if mode == "goals" { goalTable(ephemeralSocket: socketPath, ephemeralPID: pid) }
if mode == "postgres" { postgresBenchmark() }
if mode == "durable-appends" { durabilityBenchmark(ephemeralSocket: socketPath, appendsOnly: true) }
if mode == "all" || mode == "plugin" { pluginBenchmark(socket: socketPath, batch: 50, rounds: 2_000, listdPID: pid) }
if let stats = try? LineConnection(path: socketPath).request(["cmd": "stats"]) {
    print("listd resident memory at the end: \((stats["result"]?["memory"]?["residentBytes"].flatMap { if case .int(let v) = $0 { v } else { nil } } ?? 0) >> 20) MiB")
}
if pid != 0 {
    kill(pid, SIGTERM)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
}

extension LineConnection {
    /// A request's reply, or nil when the request fails.
    func requestOrNil(_ value: JSONValue) -> JSONValue? { try? request(value) }
}
