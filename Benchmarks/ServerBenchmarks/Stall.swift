// `server-benchmarks stall`: does one client's large work stall the others? One thread applies
// 1M-item snapshots back to back (two orders of the same items, so every apply is a real diff); another
// connection sends `ping` every 2 ms and records each round trip. The goal (issue 31): ping p99 under
// 50 ms.

import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

func stallBenchmark(socket: String, items: Int = 1_000_000, seconds: Int = 20) {
    let ids = uuids(items, seed: 3)
    var shifted = ids
    shifted.append(contentsOf: shifted[..<(items / 10)])
    shifted.removeFirst(items / 10)
    let lines = [applyLine(ids, dataSource: "stall"), applyLine(shifted, dataSource: "stall")]
    let flag = StallFlag()
    var thread = pthread_t()
    let box = Unmanaged.passRetained(StallJob(socket: socket, lines: lines, flag: flag))
    pthread_create(&thread, nil, { raw in
        let job = Unmanaged<StallJob>.fromOpaque(raw!).takeRetainedValue()
        let connection = try! LineConnection(path: job.socket)
        var index = 0
        while !job.flag.stop {
            let start = nanoseconds()
            try! connection.send(bytes: job.lines[index % 2])
            _ = try! connection.readLine(timeout: .seconds(120))
            job.flag.applyNanoseconds.append(nanoseconds() - start)
            job.flag.applies += 1
            index += 1
        }
        return nil
    }, box.toOpaque())
    let pinger = try! LineConnection(path: socket)
    let ping = Array(#"{"cmd":"ping"}"#.utf8) + [0x0A]
    var latencies: [UInt64] = []
    let end = nanoseconds() + UInt64(seconds) * 1_000_000_000
    while nanoseconds() < end {
        let start = nanoseconds()
        try! pinger.send(bytes: ping)
        _ = try! pinger.readLine(timeout: .seconds(120))
        latencies.append(nanoseconds() - start)
        usleep(2_000)
    }
    flag.stop = true
    pthread_join(thread, nil)
    latencies.sort()
    let applies = flag.applyNanoseconds.sorted()
    print(
        "stall: \(items) items applied back to back, \(flag.applies) applies (median \(fixed(applies.isEmpty ? 0 : Double(applies[applies.count / 2]) / 1e6, 0)) ms); ping on another connection: p50 \(fixed(percentile(latencies, 0.5) / 1_000, 2)) ms, p99 \(fixed(percentile(latencies, 0.99) / 1_000, 2)) ms, max \(fixed(Double(latencies.last ?? 0) / 1e6, 1)) ms over \(latencies.count) pings"
    )
}

/// What the applying thread and the pinging one share (the pinger reads it only after joining).
final class StallFlag: @unchecked Sendable {
    var stop = false
    var applies = 0
    var applyNanoseconds: [UInt64] = []
}

final class StallJob {
    let socket: String
    let lines: [[UInt8]]
    let flag: StallFlag
    init(socket: String, lines: [[UInt8]], flag: StallFlag) {
        self.socket = socket
        self.lines = lines
        self.flag = flag
    }
}
