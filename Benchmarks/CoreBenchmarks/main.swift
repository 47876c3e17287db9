// Benchmarks for DiffableCore. Run with: swift run -c release core-benchmarks [memory|diff|edits]
//
// Prints one line per figure. Identifiers are 36-character UUID strings made from a fixed seed, so runs
// are comparable. Times are medians over repeated runs.

import CellCore
import DiffableCore
import ListLayout
import ListViewCore
import ListWire
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Helpers

/// A UUID-shaped identifier: 36 characters, upper-case hex in 8-4-4-4-12 groups.
func uuidString(_ random: inout SeededGenerator) -> String {
    let digits = Array("0123456789ABCDEF".utf8)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(36)
    var bits = random.next()
    var remaining = 16
    for index in 0..<36 {
        if [8, 13, 18, 23].contains(index) {
            bytes.append(UInt8(ascii: "-"))
            continue
        }
        if remaining == 0 {
            bits = random.next()
            remaining = 16
        }
        bytes.append(digits[Int(bits & 0xF)])
        bits >>= 4
        remaining -= 1
    }
    return String(decoding: bytes, as: UTF8.self)
}

func uuids(_ count: Int, seed: UInt64) -> [String] {
    var random = SeededGenerator(seed: seed)
    return (0..<count).map { _ in uuidString(&random) }
}

/// Median wall time of `body` over `runs` runs, in seconds.
func median(runs: Int, _ body: () -> Void) -> Double {
    let clock = ContinuousClock()
    var times: [Double] = []
    for _ in 0..<runs {
        let elapsed = clock.measure(body)
        times.append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
    }
    times.sort()
    return times[times.count / 2]
}

/// `value` with `decimals` digits after the point (no Foundation needed).
func fixed(_ value: Double, _ decimals: Int) -> String {
    let scale = pow(10, Double(decimals))
    let scaled = Int((value * scale).rounded())
    let whole = scaled / Int(scale)
    let fraction = String(abs(scaled) % Int(scale))
    return "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
}

func format(_ seconds: Double) -> String {
    seconds < 1e-3 ? fixed(seconds * 1e6, 2) + " µs" : fixed(seconds * 1e3, 2) + " ms"
}

/// Resident set size of this process, in bytes (from /proc/self/statm).
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    _ = withUnsafeMutablePointer(to: &size) { sizePointer in
        withUnsafeMutablePointer(to: &resident) { residentPointer in
            withVaList([sizePointer, residentPointer]) { vfscanf(file, "%ld %ld", $0) }
        }
    }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func snapshot(of ids: [String]) -> Snapshot {
    var snapshot = Snapshot()
    try! snapshot.appendSections(["S"])
    try! snapshot.appendItems(ids.map { Item($0) })
    return snapshot
}

// MARK: Benchmarks

/// The DifferenceKit workload: delete `deleteCount` at `deleteRange`, insert as many new ids at
/// `insertStart`, shuffle the first `shuffleCount`.
func diffBenchmark(count: Int, deleteRange: Range<Int>, insertStart: Int, shuffleCount: Int, runs: Int) {
    let source = uuids(count, seed: 1)
    var target = source
    target.removeSubrange(deleteRange)
    target.insert(contentsOf: uuids(deleteRange.count, seed: 2), at: insertStart)
    var random = SeededGenerator(seed: 3)
    target[0..<shuffleCount].shuffle(using: &random)
    // The target's identifiers as separate strings, as a client's request delivers them: a kept item
    // whose string is shared with `old`, at the same slot, is paired without hashing (the case of a
    // snapshot built on the old one, below), which would not measure the general diff.
    target = target.map { String(decoding: Array($0.utf8), as: UTF8.self) }

    let old = snapshot(of: source)
    let new = snapshot(of: target)
    var changes = StagedChanges()
    let diff = median(runs: runs) { changes = new.difference(from: old) }
    let reused = try! Snapshot([(Section("S"), target.map { Item($0) })], reusing: old)
    let diffReused = median(runs: runs) { changes = reused.difference(from: old) }
    let buildReusingAndDiff = median(runs: runs) {
        let rebuilt = try! Snapshot([(Section("S"), target.map { Item($0) })], reusing: old)
        changes = rebuilt.difference(from: old)
    }
    let buildAndDiff = median(runs: runs) {
        let rebuilt = snapshot(of: target)
        changes = rebuilt.difference(from: old)
    }
    let floor = median(runs: runs) {
        var index = [String: Int]()
        index.reserveCapacity(target.count)
        for (position, id) in target.enumerated() { index[id] = position }
        precondition(index.count == target.count)
    }
    let floorUnreserved = median(runs: runs) {
        var index = [String: Int]()
        for (position, id) in target.enumerated() { index[id] = position }
        precondition(index.count == target.count)
    }
    let stages = changes.stages
    let label = count >= 1000 ? "\(count / 1000)k" : "\(count)"
    print("diff \(label): \(format(diff))  (hashing floor \(format(floor)), unreserved \(format(floorUnreserved)); "
        + "diff/floor \(fixed(diff / floor, 2))×)")
    print("diff \(label) including building the new snapshot: \(format(buildAndDiff)) "
        + "(\(fixed(buildAndDiff / floor, 2))× floor)")
    print("diff \(label) of a snapshot built on the old one (Snapshot(_:reusing:), as apply does): \(format(diffReused)) "
        + "(\(fixed(diffReused / floor, 2))× floor); including building it: \(format(buildReusingAndDiff)) (\(fixed(buildReusingAndDiff / floor, 2))× floor)")
    print("  stages \(stages.count): deletes \(stages.flatMap(\.itemDeletes).count), "
        + "inserts \(stages.flatMap(\.itemInserts).count), moves \(stages.flatMap(\.itemMoves).count)")
    precondition((try? old.applying(changes)) == new, "the staged changes do not reproduce the target")
}

/// Single-item edits into snapshots of growing size: the time must not grow with the size.
func editBenchmark(size: Int) {
    var snapshot = snapshot(of: uuids(size, seed: 10))
    let extra = uuids(10_000, seed: 11)
    let middle = snapshot.itemIdentifier(at: IndexPath(section: 0, item: size / 2))!
    let clock = ContinuousClock()
    func perOperation(_ body: (String) -> Void) -> Double {
        let elapsed = clock.measure { for id in extra { body(id) } }
        return (Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)) / Double(extra.count)
    }
    let append = perOperation { _ = try! snapshot.appendItems([Item($0)]) }
    let delete = perOperation { snapshot.deleteItems([$0]) }
    let insert = perOperation { _ = try! snapshot.insertItems([Item($0)], beforeItem: middle) }
    let lookup = perOperation { precondition(snapshot.indexPath(ofItem: $0) != nil) }
    let move = perOperation { try! snapshot.moveItem($0, afterItem: middle) }
    let label = size >= 1_000_000 ? "\(size / 1_000_000)M" : "\(size / 1000)k"
    print("edits at \(label): append \(format(append)), delete \(format(delete)), insert in the middle \(format(insert)), "
        + "move \(format(move)), indexPath look-up \(format(lookup))")
}

/// Resident memory of a 1M-item snapshot with 36-character identifiers.
func memoryBenchmark() {
    let count = 1_000_000
    let before = residentBytes()
    var random = SeededGenerator(seed: 20)
    var snapshot = Snapshot()
    try! snapshot.appendSections(["S"])
    for _ in 0..<count { try! snapshot.appendItems([Item(uuidString(&random))]) }
    let after = residentBytes()
    precondition(snapshot.numberOfItems == count)
    print("memory at 1M items (36-character ids): \((after - before) / count) bytes per item "
        + "(\((after - before) >> 20) MiB resident)")
}

/// Memory at 1M items with short identifiers (`item-N`, inline in Swift's small strings), bare and with
/// the two-field payload of issue 16's goal (`{"title": "Item N", "n": N}`), each in a fresh snapshot.
func payloadMemoryBenchmark() {
    let count = 1_000_000
    // `payload-memory bare` or `payload-memory payload` measures one of them in a fresh process.
    let only = CommandLine.arguments.dropFirst(2).first
    for withPayload in [false, true] where only == nil || (only == "payload") == withPayload {
        let before = residentBytes()
        var snapshot = Snapshot()
        try! snapshot.appendSections(["S"])
        var batch: [Item] = []
        batch.reserveCapacity(1_000)
        for index in 0..<count {
            batch.append(Item("item-\(index)", data: withPayload ? ["title": .string("Item \(index)"), "n": .int(index)] : .null))
            if batch.count == 1_000 {
                try! snapshot.appendItems(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        let after = residentBytes()
        precondition(snapshot.numberOfItems == count)
        print("memory at 1M items with short ids, \(withPayload ? "a two-field payload" : "no payload"): \((after - before) / count) bytes per item")
        withExtendedLifetime(snapshot) {}
    }
}

/// Memory of cells: 100,000 displayed cells configured from a two-field subtitle registration, then
/// the same cells pooled (their configuration dropped), in a fresh process.
func cellMemoryBenchmark() {
    let count = 100_000
    let registration = try! Registration(
        name: "r", definition: ["contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{subtitle}}"]])
    let before = residentBytes()
    var cells = ViewCells(poolLimit: count)
    for index in 0..<count {
        let item = "item-\(index)"
        let (id, _, _) = cells.obtain(registration: "r", for: item)
        let context = TemplateContext(
            item: item, data: ["title": .string("Title \(index)"), "subtitle": .string("Subtitle \(index)")], section: "S",
            indexPath: IndexPath(section: 0, item: index), state: CellState())
        _ = cells.configured(id, with: try! registration.configure(context))
    }
    let displayed = residentBytes()
    for index in 0..<count { cells.release(cells.displayedCell(for: "item-\(index)")!.id) }
    let pooled = residentBytes()
    precondition(cells.pooledCount("r") == count)
    print("memory per displayed cell (configured, two-field subtitle): \((displayed - before) / count) bytes; "
        + "after returning them all to the pool: \((pooled - before) / count) bytes per pooled cell (resident memory is not all given back)")
}

/// Where one single-item `appendItems` request spends its time in-process (no sockets): parsing the
/// line, reading the request and its arguments, performing the edit, and writing the reply.
func requestCostBenchmark() {
    let count = 200_000
    let lines = (0..<count).map { Array(#"{"cmd":"appendItems","dataSource":"bench","items":["c\#($0)"],"toSection":"S"}"#.utf8) }
    var snapshot = Snapshot()
    try! snapshot.appendSections(["S"])
    let clock = ContinuousClock()
    var values: [JSONValue] = []
    values.reserveCapacity(count)
    let parse = clock.measure { for line in lines { values.append(try! JSONParser.parse(line)) } }
    var edits: [SnapshotEdit] = []
    edits.reserveCapacity(count)
    let decode = clock.measure {
        for value in values {
            var request = try! Request(value)
            let items = try! WireDecoding.items(request.arguments.array("items"), field: "items")
            let section = try! request.arguments.optionalString("toSection")
            _ = try! request.arguments.string("dataSource")
            try! request.arguments.finish()
            edits.append(.appendItems(items, toSection: section))
        }
    }
    // The same lines through the one-pass decoder (what listd does): the request with its items, no tree.
    var decodedEdits: [SnapshotEdit] = []
    decodedEdits.reserveCapacity(count)
    let onePass = clock.measure {
        for line in lines {
            var request = line.withUnsafeBytes { Request.decode(line: $0)! }
            let items = try! request.arguments.items("items")
            let section = try! request.arguments.optionalString("toSection")
            _ = try! request.arguments.string("dataSource")
            try! request.arguments.finish()
            decodedEdits.append(.appendItems(items, toSection: section))
        }
    }
    var outcomes: [EditOutcome] = []
    outcomes.reserveCapacity(count)
    let perform = clock.measure { for edit in edits { outcomes.append(try! snapshot.perform(edit)) } }
    var bytes = 0
    let encode = clock.measure {
        for (version, outcome) in outcomes.enumerated() {
            var writer = JSONWriter(capacity: 128)
            writer.beginObject()
            writer.key("ok"); writer.bool(true)
            writer.key("result"); writer.beginObject()
            writer.key("version"); writer.int(version)
            writer.key("changes"); writer.changes(outcome.changes)
            writer.endObject(); writer.endObject()
            bytes += writer.bytes.count
        }
    }
    func perRequest(_ duration: Duration) -> String {
        fixed((Double(duration.components.attoseconds) / 1e18 + Double(duration.components.seconds)) / Double(count) * 1e6, 2) + " µs"
    }
    print("one appendItems request in-process: parse \(perRequest(parse)), request and arguments \(perRequest(decode)) "
        + "(one-pass decoding of both: \(perRequest(onePass))), "
        + "perform \(perRequest(perform)), reply \(perRequest(encode)) (\(bytes / count) bytes)")
}

/// listview's work per key press on a plain list of `count` items (80×40 terminal, cells on hand): the
/// layout, moving the cursor a row and revealing it, what is visible, the dequeue plan and the frame.
func viewBenchmark(count: Int) {
    let ids = uuids(count, seed: 7)
    var model = ViewModel(snapshot: snapshot(of: ids), version: 0, layout: LayoutDescription(), width: 80, height: 40)
    model.cursor = ids[0]
    let clock = ContinuousClock()
    let first = clock.measure { _ = model.layout() }
    func onScreen() {
        let layout = model.layout()
        let plan = model.plan(model.visibleElements(in: layout))
        model.forget(cellIdentifiers: Set(plan.released))
        for path in plan.items {
            let id = model.snapshot.item(at: path)!.id
            model.store(["cell": .string("c-" + id), "item": .string(id), "content": ["type": "cell", "text": .string(id)], "state": [:]])
        }
    }
    onScreen()
    let keyPress = median(runs: 101) {
        model.moveCursorRow(1, in: model.layout())
        model.revealCursor(model.layout())
        onScreen()
        var canvas = Canvas(width: 80, height: 41)
        let layout = model.layout()
        model.draw(layout, visible: model.visibleElements(in: layout), on: &canvas, showCursor: true)
    }
    print("listview, \(count) items: first layout \(format(Double(first.components.attoseconds) / 1e18 + Double(first.components.seconds))), "
        + "one key press (move, reveal, plan, draw) \(format(keyPress))")
}

let mode = CommandLine.arguments.dropFirst().first ?? "all"
#if DEBUG
    print("warning: a debug build; run `swift run -c release core-benchmarks` for real figures")
#endif
if mode == "memory" || mode == "all" { memoryBenchmark() }
if mode == "cells" { cellMemoryBenchmark() }
if mode == "view" || mode == "all" {
    for count in [10_000, 100_000, 1_000_000] { viewBenchmark(count: count) }
}
if mode == "request" { requestCostBenchmark() }
if mode == "payload-memory" { payloadMemoryBenchmark() }
if mode == "diff" || mode == "all" {
    diffBenchmark(count: 5_000, deleteRange: 2_000..<3_000, insertStart: 3_000, shuffleCount: 200, runs: 200)
    diffBenchmark(count: 100_000, deleteRange: 20_000..<30_000, insertStart: 30_000, shuffleCount: 2_000, runs: 21)
}
if mode == "edits" || mode == "all" {
    for size in [10_000, 100_000, 1_000_000] { editBenchmark(size: size) }
}
if mode == "outline-edits" || mode == "all" {
    for recordingUndo in [false, true] { outlineEditBenchmark(flat: 100_000, parents: 100, children: 100, recordingUndo: recordingUndo) }
}
