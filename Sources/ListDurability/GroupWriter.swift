import ListEngine
import ListStore
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The writer thread of a durable listd: group commit without the event loop in the way.
///
/// The event loop adds each committed mutation's records to the *open group*; the writer thread takes
/// the whole open group the moment it is free, writes it as one transaction and reports to the loop.
/// So the writer never waits for the loop to hand a group over (a loop busy with a burst of requests
/// does not leave the disk idle), and the loop never waits for the disk.
///
/// After a write the next group may wait a little to grow (`GroupSizing`): at most one write's time,
/// and only while more mutations than the open ones can still come back.
///
/// Other work for the store (checkpoints, backups, syncs, reloading after a failure) runs between two
/// groups: while both groups and jobs wait, they alternate, so neither starves; jobs are expected to be
/// short (a large checkpoint is written in several jobs).
///
/// After a failed write the writer takes no group until `resume()`: the loop undoes the failed group
/// and what was added after it (`discardOpen()`), using jobs, which still run.
package final class GroupWriter: @unchecked Sendable {
    /// What one group's write came to, delivered on the event loop in the order groups were written.
    package struct Report: Sendable {
        /// The mutations (calls of `add`) the group held, oldest first, and their records.
        package let mutations: Int
        package let records: Int
        /// The time the store took, or why it failed.
        package let result: Result<Duration, Error>
        /// The store asked for `maintain()` after this write.
        package let needsMaintenance: Bool
    }

    private let store: Store
    private let loop: EventLoop
    private let report: @Sendable (Report) -> Void
    private let thread = NIOThreadPool(numberOfThreads: 1)
    private let condition = WriterCondition()

    // Guarded by `condition`.
    private var open: [StoreRecord] = []
    private var openMutations = 0
    private var jobs: [() -> Void] = []
    private var paused = false
    private var stopping = false
    private var sleeping = false
    private var sizing = GroupSizing()

    /// `report` runs on `loop` after every group; `sizing` says how long a group may wait to grow.
    package init(store: Store, loop: EventLoop, sizing: GroupSizing = GroupSizing(), report: @escaping @Sendable (Report) -> Void) {
        self.sizing = sizing
        self.store = store
        self.loop = loop
        self.report = report
        thread.start()
        thread.submit { [self] _ in run() }
    }

    /// Adds one mutation's records to the open group (from the event loop). A busy writer takes them
    /// as soon as it is done; a sleeping one wakes at once, unless it waits for the group to grow
    /// (`GroupSizing`) and this mutation does not complete it.
    package func add(_ records: [StoreRecord]) {
        condition.lock()
        open.append(contentsOf: records)
        openMutations += 1
        let wake = sleeping && sizing.completes(open: openMutations)
        condition.unlock()
        if wake { condition.signal() }
    }

    /// Runs `body` on the writer thread between two groups; the future completes on the event loop.
    package func perform<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) -> EventLoopFuture<Value> {
        let promise = loop.makePromise(of: Value.self)
        enqueue { promise.completeWith(Result { try body() }) }
        return promise.futureResult
    }

    /// Runs `step` on the writer thread until it returns a value, one step between two groups (a long
    /// job in short steps, e.g. a large checkpoint written in parts); the future completes on the loop.
    package func performInSteps<Value: Sendable>(_ step: @escaping @Sendable () throws -> Value?) -> EventLoopFuture<Value> {
        let promise = loop.makePromise(of: Value.self)
        @Sendable func next() {
            do {
                if let value = try step() { promise.succeed(value) } else { enqueue(next) }
            } catch {
                promise.fail(error)
            }
        }
        enqueue(next)
        return promise.futureResult
    }

    /// Forgets the open group (after a failed write, whose undo covers it); returns how many mutations
    /// it held.
    @discardableResult
    package func discardOpen() -> Int {
        condition.lock()
        defer { condition.unlock() }
        let discarded = openMutations
        open = []
        openMutations = 0
        return discarded
    }

    /// Takes groups again after a failed write was undone.
    package func resume() {
        condition.lock()
        paused = false
        condition.unlock()
        condition.signal()
    }

    /// Writes what is open, runs the queued jobs, then ends the thread.
    package func shutdown() async {
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in shutdown { finished.resume() } }
    }

    /// `shutdown()` without waiting: `done` runs (on another thread) once the thread ended.
    package func shutdown(then done: @escaping @Sendable () -> Void) {
        condition.lock()
        stopping = true
        condition.unlock()
        condition.signal()
        thread.shutdownGracefully { _ in done() }
    }

    private func enqueue(_ job: @escaping () -> Void) {
        condition.lock()
        jobs.append(job)
        let wake = sleeping
        condition.unlock()
        if wake { condition.signal() }
    }

    /// The writer thread.
    private func run() {
        var jobTurn = false
        var idleDone = true
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping {
                if !paused {
                    let now = monotonicNanoseconds()
                    if !sizing.waits(open: openMutations, now: now) {
                        if !open.isEmpty { break }  // a group to write
                    } else {
                        // The group may still grow: wait for it (an `add` that completes it wakes us).
                        sleeping = true
                        condition.wait(until: sizing.deadline)
                        sleeping = false
                        continue
                    }
                }
                if !idleDone {
                    // Nothing waits: the store's own upkeep, once per idle spell.
                    idleDone = true
                    condition.unlock()
                    store.idle()
                    condition.lock()
                    continue
                }
                sizing.stopWaiting()
                sleeping = true
                condition.wait()
                sleeping = false
            }
            // A group still growing lets a waiting job go first (stopping, it is written as it is).
            let groupWaits = !paused && !open.isEmpty && (stopping || !sizing.waits(open: openMutations, now: monotonicNanoseconds()))
            if groupWaits && (!jobTurn || jobs.isEmpty) {
                let records = open
                let mutations = openMutations
                open = []
                openMutations = 0
                condition.unlock()
                let start = monotonicNanoseconds()
                let result: Result<Duration, Error>
                do {
                    try store.write(records)
                    let end = monotonicNanoseconds()
                    // Sized before the report: what comes back once it is out is not open yet.
                    condition.lock()
                    sizing.written(mutations, took: end - start, open: openMutations, now: end)
                    condition.unlock()
                    result = .success(.nanoseconds(Int64(end - start)))
                } catch {
                    result = .failure(error)
                    condition.lock()
                    paused = true
                    condition.unlock()
                }
                let report = Report(mutations: mutations, records: records.count, result: result, needsMaintenance: store.needsMaintenance)
                idleDone = false
                let deliver = self.report
                loop.execute { deliver(report) }
                jobTurn = true
            } else if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job()
                jobTurn = false
            } else {
                condition.unlock()
                return  // stopping, and nothing is left that may be written
            }
        }
    }
}

/// The monotonic clock (`CLOCK_MONOTONIC`, the clock of `WriterCondition`'s timed wait), in nanoseconds.
private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// A mutex with one condition variable.
private final class WriterCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let variable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(variable, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(variable)
        pthread_mutex_destroy(mutex)
        variable.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
    /// Waits for a signal; the mutex must be held (and is held again on return).
    package func wait() { pthread_cond_wait(variable, mutex) }
    package func signal() { pthread_cond_signal(variable) }
    /// Waits for a signal or until `deadline` (monotonic nanoseconds); the mutex must be held.
    package func wait(until deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(variable, mutex, &time)
    }
}
