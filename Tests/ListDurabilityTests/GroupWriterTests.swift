import Dispatch
import ListDurability
import ListStore
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import StoreTestKit
import TestSupport
import Testing

/// One mutation's records: a data source of its own (so that any group of them can be written).
private func mutation(_ name: String) -> [StoreRecord] {
    [.createDataSource(name: name, incarnation: "\(name)-1", version: 0, content: StateCoding.encode(DataSourceContent()))]
}

/// A writer thread over a store that fails on demand, its reports collected (no pipeline, no engine).
private final class WriterUnderTest: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let store: FaultInjectingStore
    let writer: GroupWriter
    private let reports = NIOLockedValueBox<[GroupWriter.Report]>([])

    init(sizing: GroupSizing = GroupSizing()) throws {
        store = try FaultInjectingStore()
        let reports = self.reports
        writer = GroupWriter(store: store, loop: group.next(), sizing: sizing) { report in reports.withLockedValue { $0.append(report) } }
    }

    /// Each report as "mutations/records ok" or "mutations/records failed".
    var written: [String] {
        reports.withLockedValue { reports in
            reports.map { report in
                let outcome: String
                switch report.result {
                case .success: outcome = "ok"
                case .failure: outcome = "failed"
                }
                return "\(report.mutations)/\(report.records) \(outcome)"
            }
        }
    }

    /// Writes "a" alone, with "b" and "c" added meanwhile (the next group), and waits for both reports.
    func writeAGroupOfOneThenOfTwo() throws {
        store.holdWrites()
        writer.add(mutation("a"))
        try waitUntil("the first write") { store.calls(.write) == 1 }
        writer.add(mutation("b"))
        writer.add(mutation("c"))
        store.releaseWrites()
        try waitUntil("two reports") { written.count == 2 }
    }

    /// The names of the data sources the store holds.
    func stored() throws -> [String] { try store.inner.load().dataSources.map(\.name).sorted() }

    func stop() throws {
        let ended = DispatchSemaphore(value: 0)
        writer.shutdown { ended.signal() }
        ended.wait()
        store.close()
        try group.syncShutdownGracefully()
    }
}

@Suite("Group writer: group commit on a thread of its own, and the inline writer")
struct GroupWriterTests {
    /// What is added while a write runs is taken as one group the moment the writer is free.
    @Test func mutationsAddedDuringAWriteMakeTheNextGroup() throws {
        let subject = try WriterUnderTest()
        subject.store.holdWrites()
        subject.writer.add(mutation("a"))
        try waitUntil("the first write") { subject.store.calls(.write) == 1 }
        for name in ["b", "c", "d"] { subject.writer.add(mutation(name) + mutation(name + "2")) }
        subject.store.releaseWrites()
        try waitUntil("two reports") { subject.written.count == 2 }
        #expect(subject.written == ["1/1 ok", "3/6 ok"])
        #expect(subject.store.groups == [1, 6])
        try subject.stop()
    }

    /// After a group of several, the next waits for as many to come back (here without a deadline in
    /// sight), but never for more than can: a group of one is written at once.
    @Test func theNextGroupWaitsToGrow() throws {
        let subject = try WriterUnderTest(sizing: GroupSizing(shortestWait: 600_000_000_000, longestWait: 600_000_000_000))
        try subject.writeAGroupOfOneThenOfTwo()
        #expect(subject.written == ["1/1 ok", "2/2 ok"], "two were open: the group of one could grow to two at most")
        subject.writer.add(mutation("d"))
        let job = subject.writer.perform { [store = subject.store] in store.groups.count }
        #expect(try job.waitBounded() == 2, "a job runs while the group grows")
        subject.writer.add(mutation("e"))
        try waitUntil("the third report") { subject.written.count == 3 }
        #expect(subject.written == ["1/1 ok", "2/2 ok", "2/2 ok"])
        try subject.stop()
    }

    /// A group that cannot grow in time is written at the deadline.
    @Test func aGroupIsWrittenAtTheDeadline() throws {
        let subject = try WriterUnderTest(sizing: GroupSizing(shortestWait: 20_000_000, longestWait: 20_000_000))
        try subject.writeAGroupOfOneThenOfTwo()
        subject.writer.add(mutation("d"))
        try waitUntil("the third report") { subject.written.count == 3 }
        #expect(subject.written == ["1/1 ok", "2/2 ok", "1/1 ok"])
        try subject.stop()
    }

    /// After a failed write the writer takes no group until `resume()`; jobs still run; what was open
    /// can be discarded (its undo covers it).
    @Test func afterAFailedWriteNoGroupIsTakenUntilResumed() throws {
        let subject = try WriterUnderTest()
        subject.store.fail(.write)
        subject.writer.add(mutation("lost"))
        try waitUntil("the failure") { subject.written == ["1/1 failed"] }
        subject.writer.add(mutation("open"))
        let stored = subject.writer.perform { [store = subject.store] in try store.inner.load().dataSources.count }
        #expect(try stored.waitBounded() == 0, "a job runs while paused")
        #expect(subject.store.calls(.write) == 1, "no group taken while paused")
        #expect(subject.writer.discardOpen() == 1)
        subject.writer.add(mutation("kept"))
        subject.writer.resume()
        try waitUntil("the next group") { subject.written.count == 2 }
        #expect(subject.written == ["1/1 failed", "1/1 ok"])
        #expect(try subject.stored() == ["kept"])
        try subject.stop()
    }

    /// Jobs run between two groups: while both wait they alternate, so neither starves; a job in steps
    /// lets groups through between its steps.
    @Test func jobsRunBetweenGroups() throws {
        // No group waits to grow here (a growing group lets jobs go first).
        let subject = try WriterUnderTest(sizing: GroupSizing(shortestWait: 0, longestWait: 0))
        subject.store.holdWrites()
        subject.writer.add(mutation("a"))
        try waitUntil("the first write") { subject.store.calls(.write) == 1 }
        let groupsBeforeJob = subject.writer.perform { [store = subject.store] in store.groups.count }
        subject.writer.add(mutation("b"))
        // Each step notes the groups written so far; the first adds a mutation.
        let steps = NIOLockedValueBox<[Int]>([])
        let stepped = subject.writer.performInSteps { [store = subject.store, writer = subject.writer] () -> Int? in
            let count = steps.withLockedValue { steps in
                steps.append(store.groups.count)
                return steps.count
            }
            if count == 1 { writer.add(mutation("c")) }
            return count == 3 ? count : nil
        }
        subject.store.releaseWrites()
        #expect(try groupsBeforeJob.waitBounded() == 1, "the job ran after the first group, before the second waiting")
        #expect(try stepped.waitBounded() == 3)
        #expect(steps.withLockedValue { $0 } == [2, 3, 3], "the group added by the first step was written before the second")
        try subject.stop()
    }

    /// Stopping writes what is open and runs the queued jobs first.
    @Test func shutdownWritesWhatIsOpen() throws {
        let subject = try WriterUnderTest()
        subject.store.holdWrites()
        subject.writer.add(mutation("a"))
        try waitUntil("the first write") { subject.store.calls(.write) == 1 }
        subject.writer.add(mutation("b"))
        let job = subject.writer.perform { 42 }
        let ended = DispatchSemaphore(value: 0)
        subject.writer.shutdown { ended.signal() }
        subject.store.releaseWrites()
        ended.wait()
        #expect(try job.waitBounded() == 42)
        #expect(subject.store.groups == [1, 1])
        #expect(try subject.stored() == ["a", "b"])
        subject.store.close()
        try subject.group.syncShutdownGracefully()
    }

    /// The inline writer (an in-process server's): the mutations of one turn of the loop are one group,
    /// written in a task of the loop; a failed write pauses it until `resume()`.
    @Test func theInlineWriterWritesEachTurnAsOneGroup() throws {
        let store = try FaultInjectingStore()
        let loop = EmbeddedEventLoop()
        var reports: [String] = []
        let writer = InlineWriter(store: store, loop: loop) { report in
            reports.append("\(report.mutations)/\(report.records) \((try? report.result.get()) == nil ? "failed" : "ok")")
        }
        writer.add(mutation("a"))
        writer.add(mutation("b"))
        #expect(reports.isEmpty, "written in a task of the loop")
        loop.run()
        #expect(reports == ["2/2 ok"])
        store.fail(.write)
        writer.add(mutation("c"))
        loop.run()
        writer.add(mutation("d"))
        loop.run()
        #expect(reports == ["2/2 ok", "1/1 failed"], "paused after the failure")
        #expect(writer.discardOpen() == 1)
        writer.add(mutation("e"))
        writer.resume()
        loop.run()
        #expect(reports == ["2/2 ok", "1/1 failed", "1/1 ok"])
        #expect(try store.inner.load().dataSources.map(\.name).sorted() == ["a", "b", "e"])
        writer.shutdown {}
        store.close()
        try loop.syncShutdownGracefully()
    }
}
