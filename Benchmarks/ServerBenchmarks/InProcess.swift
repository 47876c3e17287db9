// listd's command path without sockets or threads: the same handlers a connection runs (framer,
// connection handler, router, commit, reply) in an in-process server. No kernel and no scheduling in
// the figure, so it moves little from run to run on this noisy machine: the number to optimize against.

import ListServer
import ListServerTestKit
import ListStoreSQLite
import AllocationCounter
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// Single-item appends, 16 lines per read burst, through `InProcessServer`; optionally with `views`
/// views attached (on another connection) that receive every change. Prints the time, the CPU and the
/// heap allocations per request, beside the same for `ping` (the floor: reading a line, the router, a
/// reply). The harness counts the reply lines without copying them, and hands each burst over in one
/// buffer (one allocation per 16 requests): the allocations are listd's own.
///
/// `durable`: the server writes every change to a SQLite store (`--sync always`) in a temporary
/// directory, on the loop itself (`InlineWriter`: a burst's changes in one transaction, written before
/// they are answered), so the figures are what durability adds to a request, the disk's wait included.
func inProcessAppendBenchmark(views: Int, durable: Bool = false) {
    let configuration = ServerConfiguration(listener: .path("/unused"))
    var directory: String?
    let server: InProcessServer
    if durable {
        var template = Array("/tmp/listd-in-process-XXXXXX".utf8CString)
        directory = String(cString: mkdtemp(&template)!)
        server = try! InProcessServer(configuration: configuration, store: SQLiteStore(path: directory! + "/listd.sqlite3", sync: .always))
    } else {
        server = InProcessServer(configuration: configuration)
    }
    defer {
        if let directory {
            server.closeStore()
            _ = system("rm -rf \(directory)")
        }
    }
    let writer = try! server.connect()
    _ = try! writer.send(Array(#"{"cmd":"apply","dataSource":"p","snapshot":{"sections":[{"id":"S","items":[]}]}}"#.utf8) + [0x0A])
    let watcher = try! server.connect()
    for index in 0..<views {
        _ = try! watcher.send(Array(#"{"cmd":"attach","dataSource":"p","view":"v\#(index)"}"#.utf8) + [0x0A])
    }
    // LISTD_BENCH_REQUESTS: fewer requests (e.g. to record every allocation's stack with perf probes).
    let count = BenchmarkEnvironment.integer("LISTD_BENCH_REQUESTS").map { max(16, $0 / 16 * 16) } ?? 160_000
    func bursts(_ line: (Int) -> [UInt8]) -> [[UInt8]] {
        stride(from: 0, to: count, by: 16).map { start in (start..<start + 16).reduce(into: [UInt8]()) { $0 += line($1) } }
    }
    func run(_ bursts: [[UInt8]]) -> (elapsed: Double, cpu: Double, allocations: Double) {
        let before = cpuSeconds(getpid())
        let allocationsBefore = allocation_counter_allocations()
        let start = nanoseconds()
        var replies = 0
        for (index, burst) in bursts.enumerated() {
            replies += try! writer.sendCountingLines(burst)
            // The views' events are read, as a view reads them (every 64 bursts).
            if views > 0, index % 64 == 63 { _ = try! watcher.send([]) }
        }
        let elapsed = Double(nanoseconds() - start) / 1e3 / Double(count)
        let allocations = Double(allocation_counter_allocations() - allocationsBefore) / Double(count)
        let cpu = (cpuSeconds(getpid()) - before) * 1e6 / Double(count)
        precondition(replies == count, "every request was answered")
        return (elapsed, cpu, allocations)
    }
    let ping = run(bursts { Array(#"{"id":\#($0),"cmd":"ping"}"#.utf8) + [0x0A] })
    let plain = run(bursts { appendLine(dataSource: "p", item: "item-\($0)") })
    let full = run(bursts { Array(#"{"id":\#($0),"cmd":"appendItems","dataSource":"p","items":["x-\#($0)"],"toSection":"S"}"#.utf8) + [0x0A] })
    func describe(_ run: (elapsed: Double, cpu: Double, allocations: Double)) -> String {
        "\(fixed(run.elapsed, 2)) µs (CPU \(fixed(run.cpu, 2)) µs), \(fixed(run.allocations, 1)) allocations"
    }
    print("in-process (the command path without sockets)\(durable ? ", durable (SQLite, sync always)" : ""), \(views) view\(views == 1 ? "" : "s") attached, per request: "
        + "appendItems \(describe(plain)); with id and toSection \(describe(full)); ping (the floor) \(describe(ping))")
}

/// The window scroll of `windowBenchmark` (40 rows, 20 a step, built-in `subtitleCell` with a two-field
/// template) through `InProcessServer`: the cells' path without sockets, steady enough to compare builds.
func inProcessWindowBenchmark() {
    let server = InProcessServer(configuration: ServerConfiguration(listener: .path("/unused")))
    let connection = try! server.connect()
    func send(_ line: String) -> [[UInt8]] { try! connection.send(Array(line.utf8) + [0x0A]) }
    let count = 100_000
    _ = send(#"{"cmd":"register","registration":"sub","contentConfiguration":{"type":"subtitleCell","text":"{{title}}","secondaryText":"{{subtitle}}"}}"#)
    let items = (0..<count).map { #"{"id":"i\#($0)","data":{"title":"Item \#($0)","subtitle":"Subtitle \#($0)","text":"😀"}}"# }
    _ = send(#"{"cmd":"apply","dataSource":"w","snapshot":{"sections":[{"id":"S","items":[\#(items.joined(separator: ","))]}]}}"#)
    _ = send(#"{"cmd":"setCellProvider","dataSource":"w","rules":[],"default":"sub"}"#)
    _ = send(#"{"cmd":"attach","dataSource":"w","view":"w"}"#)
    func dequeueLine(_ rows: Range<Int>) -> String {
        #"{"cmd":"dequeue","view":"w","indexPaths":[\#(rows.map { "[0,\($0 % count)]" }.joined(separator: ","))]}"#
    }
    func cells(_ reply: [UInt8]) -> [String] {
        let found = cellIdentifiers(in: reply)
        precondition(found.count >= 20, "dequeue failed: \(String(decoding: reply.prefix(600), as: UTF8.self))")
        return found
    }
    func scroll(steps: Int) -> (elapsed: Double, cpu: Double, cells: Int) {
        var shown = cells(send(dequeueLine(0..<40)).last!)
        var dequeued = 0
        var top = 0
        let cpuBefore = cpuSeconds(getpid())
        let start = nanoseconds()
        for _ in 0..<steps {
            let leaving = shown.prefix(20).map { "\"\($0)\"" }.joined(separator: ",")
            let replies = send(#"{"cmd":"endDisplaying","view":"w","cells":[\#(leaving)]}"# + "\n" + dequeueLine((top + 40)..<(top + 60)))
            let added = cells(replies.last!)
            shown.removeFirst(20)
            shown += added
            dequeued += added.count
            top += 20
        }
        let elapsed = Double(nanoseconds() - start) / 1e3 / Double(dequeued)
        let cpu = (cpuSeconds(getpid()) - cpuBefore) * 1e6 / Double(dequeued)
        // Every cell leaves again, so the next scroll starts from empty pools' worth of displayed cells.
        _ = send(#"{"cmd":"endDisplaying","view":"w","cells":[\#(shown.map { "\"\($0)\"" }.joined(separator: ","))]}"#)
        return (elapsed, cpu, dequeued)
    }
    _ = scroll(steps: 500)  // warm-up
    let run = scroll(steps: 5_000)
    print("window scroll in-process (40 rows, 20 a step, endDisplaying + dequeue): "
        + "\(fixed(run.elapsed, 2)) µs per cell (CPU \(fixed(run.cpu, 2)) µs) for \(run.cells) cells")
}

/// The cell identifiers in a dequeue reply, found by a scan for `"cell":"` (the client must not be
/// the bottleneck).
func cellIdentifiers(in reply: [UInt8]) -> [String] {
    let marker = Array(#""cell":""#.utf8)
    var ids: [String] = []
    var index = 0
    while index + marker.count < reply.count {
        if reply[index] == marker[0] && reply[index..<index + marker.count].elementsEqual(marker) {
            let start = index + marker.count
            var end = start
            while reply[end] != UInt8(ascii: "\"") { end += 1 }
            ids.append(String(decoding: reply[start..<end], as: UTF8.self))
            index = end
        }
        index += 1
    }
    return ids
}

/// Integer settings of the benchmark from the environment.
enum BenchmarkEnvironment {
    static func integer(_ name: String) -> Int? { getenv(name).flatMap { Int(String(cString: $0)) } }
}
