import ListEngine
import ListStore
import NIOCore

/// What the commit pipeline hands records and store jobs to: `GroupWriter` (a thread of its own, for
/// listd) or `InlineWriter` (on the event loop itself, for an in-process server on an embedded loop,
/// where the fuzzer drives the durable path). Both write the open group as one transaction, report
/// each group on the loop in order, take no group after a failed write until `resume()`, and run jobs
/// between groups.
package protocol StoreWriting: AnyObject, Sendable {
    /// Adds one mutation's records to the open group.
    func add(_ records: [StoreRecord])
    /// Runs `body` between two groups; the future completes on the event loop.
    func perform<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) -> EventLoopFuture<Value>
    /// Runs `step` between groups until it returns a value.
    func performInSteps<Value: Sendable>(_ step: @escaping @Sendable () throws -> Value?) -> EventLoopFuture<Value>
    /// Forgets the open group (after a failed write); returns how many mutations it held.
    @discardableResult func discardOpen() -> Int
    /// Takes groups again after a failed write was undone.
    func resume()
    /// Writes what is open, runs the queued jobs, then stops; `done` runs once stopped.
    func shutdown(then done: @escaping @Sendable () -> Void)
}

extension GroupWriter: StoreWriting {}

/// A `StoreWriting` that writes on the event loop: the open group is written in a task of the loop
/// queued by the first `add` after the last write (so the mutations of one read burst share a
/// transaction), jobs are tasks of the loop. For an in-process server, whose embedded loop runs
/// everything on the caller's thread; never for listd (the loop would wait for the disk).
package final class InlineWriter: StoreWriting, @unchecked Sendable {
    private let store: Store
    private let loop: EventLoop
    private let report: (GroupWriter.Report) -> Void
    // Confined to `loop`.
    private var open: [StoreRecord] = []
    private var openMutations = 0
    private var paused = false
    private var writeQueued = false

    package init(store: Store, loop: EventLoop, report: @escaping (GroupWriter.Report) -> Void) {
        self.store = store
        self.loop = loop
        self.report = report
    }

    package func add(_ records: [StoreRecord]) {
        open.append(contentsOf: records)
        openMutations += 1
        queueWrite()
    }

    private func queueWrite() {
        guard !writeQueued else { return }
        writeQueued = true
        loop.execute { [self] in
            writeQueued = false
            writeOpen()
        }
    }

    private func writeOpen() {
        guard !paused, !open.isEmpty else { return }
        let records = open
        let mutations = openMutations
        open = []
        openMutations = 0
        let start = ContinuousClock.now
        let result: Result<Duration, Error>
        do {
            try store.write(records)
            result = .success(ContinuousClock.now - start)
        } catch {
            paused = true
            result = .failure(error)
        }
        report(GroupWriter.Report(mutations: mutations, records: records.count, result: result, needsMaintenance: false))
    }

    package func perform<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) -> EventLoopFuture<Value> {
        loop.submit(body)
    }

    package func performInSteps<Value: Sendable>(_ step: @escaping @Sendable () throws -> Value?) -> EventLoopFuture<Value> {
        loop.submit(step).flatMap { [self] value in
            if let value { return loop.makeSucceededFuture(value) }
            return performInSteps(step)
        }
    }

    package func discardOpen() -> Int {
        defer {
            open = []
            openMutations = 0
        }
        return openMutations
    }

    package func resume() {
        paused = false
        if !open.isEmpty { queueWrite() }
    }

    package func shutdown(then done: @escaping @Sendable () -> Void) {
        writeOpen()
        done()
    }
}
