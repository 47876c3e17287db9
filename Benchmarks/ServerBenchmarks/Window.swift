// Scrolling as a view scrolls: a 40-row window moved 20 rows a step. Each step is one write that ends
// displaying the 20 rows that left the window and dequeues the 20 that entered it; the figure is
// listd's CPU per dequeued cell (the issue's goal: ≥ 200k cells per CPU-second built in, ≥ 80k through a
// plugin).

import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// What one window scroll measured.
struct WindowRun {
    var cellsPerSecond: Double
    var listdMicrosecondsPerCell: Double
    var pluginMicrosecondsPerCell: Double?
    var p99Milliseconds: Double
    var dequeued: Int
}

/// Scrolls view `view` (prepared by `prepareDequeue`, 100,000 rows) down by `steps` steps of `step` rows
/// with a window of `window` rows, wrapping around at the end.
func scrollWindow(_ connection: LineConnection, view: String, window: Int, step: Int, steps: Int, listdPID: pid_t, pluginPID: pid_t? = nil)
    -> WindowRun
{
    let count = 100_000
    /// The cell shown at each row of the window, top first.
    var shown: [String] = []
    func dequeueLine(_ rows: Range<Int>) -> String {
        #"{"cmd":"dequeue","view":"\#(view)","indexPaths":[\#(rows.map { "[0,\($0 % count)]" }.joined(separator: ","))]}"# + "\n"
    }
    func cells(in reply: [UInt8]) -> [String] {
        guard case .array(let cells)? = (try? JSONParser.parse(reply))?["result"]?["cells"] else {
            fatalError("dequeue failed: \(String(decoding: reply.prefix(600), as: UTF8.self))")
        }
        return cells.map { cell in
            if cell["error"] != nil { fatalError("a cell failed: \(cell)") }
            return cell["cell"]!.stringValue!
        }
    }
    try! connection.send(bytes: Array(dequeueLine(0..<window).utf8))
    shown = cells(in: try! connection.readLine(timeout: .seconds(30))!)

    var latencies: [UInt64] = []
    latencies.reserveCapacity(steps)
    var dequeued = 0
    let listdBefore = cpuSeconds(listdPID)
    let pluginBefore = pluginPID.map(cpuSeconds) ?? 0
    let start = nanoseconds()
    var top = 0
    for _ in 0..<steps {
        let leaving = shown.prefix(step).map { "\"\($0)\"" }.joined(separator: ",")
        let entering = (top + window)..<(top + window + step)
        let line = #"{"cmd":"endDisplaying","view":"\#(view)","cells":[\#(leaving)]}"# + "\n" + dequeueLine(entering)
        let sent = nanoseconds()
        try! connection.send(bytes: Array(line.utf8))
        _ = try! connection.readLine(timeout: .seconds(30))
        let reply = try! connection.readLine(timeout: .seconds(30))!
        latencies.append(nanoseconds() - sent)
        let added = cells(in: reply)
        shown.removeFirst(step)
        shown += added
        dequeued += added.count
        top += step
    }
    let elapsed = Double(nanoseconds() - start) / 1e9
    let listdCPU = cpuSeconds(listdPID) - listdBefore
    let pluginCPU = pluginPID.map { cpuSeconds($0) - pluginBefore }
    latencies.sort()
    return WindowRun(
        cellsPerSecond: Double(dequeued) / elapsed, listdMicrosecondsPerCell: listdCPU / Double(dequeued) * 1e6,
        pluginMicrosecondsPerCell: pluginCPU.map { $0 / Double(dequeued) * 1e6 }, p99Milliseconds: percentile(latencies, 0.99) / 1e3,
        dequeued: dequeued)
}

/// The issue's scroll: built-in `subtitleCell` with a two-field template, then the emoji plugin.
func windowBenchmark(socket: String, listdPID: pid_t) {
    let connection = try! LineConnection(path: socket)
    prepareDequeue(connection, dataSource: "window", registration: "windowSubtitle", contentConfiguration: [
        "type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{subtitle}}",
    ])
    _ = scrollWindow(connection, view: "window", window: 40, step: 20, steps: 500, listdPID: listdPID)  // warm-up
    let builtIn = scrollWindow(connection, view: "window", window: 40, step: 20, steps: 5_000, listdPID: listdPID)
    print("scrolling a 40-row window 20 rows a step (endDisplaying + dequeue in one write), built-in subtitleCell with a two-field template: "
        + "\(Int(builtIn.cellsPerSecond)) cells/s end to end, p99 \(fixed(builtIn.p99Milliseconds, 3)) ms per step; listd "
        + "\(fixed(builtIn.listdMicrosecondsPerCell, 2)) µs of CPU per cell (\(Int(1e6 / builtIn.listdMicrosecondsPerCell)) cells per CPU-second)")

    let pluginPID = startEmojiPlugin(socket: socket, connection: connection)
    defer { stopProcess(pluginPID) }
    prepareDequeue(connection, dataSource: "windowPlugin", registration: "windowEmoji", contentConfiguration: ["type": "plugin:emoji"])
    _ = scrollWindow(connection, view: "windowPlugin", window: 40, step: 20, steps: 200, listdPID: listdPID, pluginPID: pluginPID)
    let plugin = scrollWindow(connection, view: "windowPlugin", window: 40, step: 20, steps: 2_500, listdPID: listdPID, pluginPID: pluginPID)
    print("the same scroll through the emoji plugin: \(Int(plugin.cellsPerSecond)) cells/s end to end, p99 \(fixed(plugin.p99Milliseconds, 3)) ms per step; "
        + "listd \(fixed(plugin.listdMicrosecondsPerCell, 2)) µs of CPU per cell (\(Int(1e6 / plugin.listdMicrosecondsPerCell)) cells per CPU-second), "
        + "the plugin \(fixed(plugin.pluginMicrosecondsPerCell ?? 0, 2)) µs")
}
