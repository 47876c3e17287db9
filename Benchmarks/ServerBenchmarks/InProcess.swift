// listd's command path without sockets or threads: the same handlers a connection runs (framer,
// connection handler, router, commit, reply) in an in-process server. No kernel and no scheduling in
// the figure, so it moves little from run to run on this noisy machine: the number to optimize against.

import ListServer

#if canImport(Glibc)
    import Glibc
#endif

/// Single-item appends, 16 lines per read burst, through `InProcessServer`; optionally with `views`
/// views attached (on another connection) that receive every change.
func inProcessAppendBenchmark(views: Int) {
    let server = InProcessServer(configuration: ServerConfiguration(listener: .path("/unused")))
    let writer = try! server.connect()
    _ = try! writer.send(Array(#"{"cmd":"apply","dataSource":"p","snapshot":{"sections":[{"id":"S","items":[]}]}}"#.utf8) + [0x0A])
    let watcher = try! server.connect()
    for index in 0..<views {
        _ = try! watcher.send(Array(#"{"cmd":"attach","dataSource":"p","view":"v\#(index)"}"#.utf8) + [0x0A])
    }
    let count = 160_000
    let bursts: [[UInt8]] = stride(from: 0, to: count, by: 16).map { start in
        var burst: [UInt8] = []
        for number in start..<start + 16 {
            burst += appendLine(dataSource: "p", item: "item-\(number)")
        }
        return burst
    }
    let before = cpuSeconds(getpid())
    let start = nanoseconds()
    var replies = 0
    for (index, burst) in bursts.enumerated() {
        replies += try! writer.send(burst).count
        // The views' events are read, as a view reads them (every 64 bursts).
        if views > 0, index % 64 == 63 { _ = try! watcher.send([]) }
    }
    let elapsed = Double(nanoseconds() - start) / 1e3 / Double(count)
    let cpu = (cpuSeconds(getpid()) - before) * 1e6 / Double(count)
    precondition(replies == count, "every request was answered")
    print("appendItems in-process (the command path without sockets), \(views) view\(views == 1 ? "" : "s") attached: "
        + "\(fixed(elapsed, 2)) µs per request (CPU \(fixed(cpu, 2)) µs)")
}
