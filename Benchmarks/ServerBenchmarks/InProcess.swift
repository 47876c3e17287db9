// listd's command path without sockets or threads: the same handlers a connection runs (framer,
// connection handler, router, commit, reply) in an in-process server. No kernel and no scheduling in
// the figure, so it moves little from run to run on this noisy machine: the number to optimize against.

import ListServer
import ListServerTestKit
import ListWire

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
