import DiffableCore
import ListEngine
import ListWire
import NIOCore

/// The mutations handed to the writer and not yet durable, oldest first (the writer writes them in this
/// order, so a report of `n` mutations is about the first `n`), counted per data source, and what waits
/// for one of them to be durable. Mutations are numbered in the order they were added.
package struct InFlightMutations {
    /// One mutation in flight.
    package struct Pending {
        /// The data source it changed (`nil`: none, a change of the registrations).
        package var dataSource: String?
        /// The version of the data source before the mutation (`nil`: it did not exist, or none).
        package var previousVersion: Int?
        /// Whether it changes the registrations.
        package var registrations: Bool
        /// The mutation's number, in the order of `add`.
        package var sequence: Int
        package var added: ContinuousClock.Instant
        /// Resolves once the mutation is durable (`nil`), or with the error that undid it; `nil` for a
        /// numbered mutation, which is reported by its number with the others of its group
        /// (`CommitPipeline.numberedDurable`).
        package var done: Deferred<WireError?>?
        /// What undoes the mutation in memory should its write fail.
        package var undo: ChangeUndo?
    }

    /// Oldest first (a written group leaves from the front without moving the rest).
    private var queue = FrontQueue<Pending>(keptCapacity: 1_024)
    private var perDataSource: [String: Int] = [:]
    private var registrationMutations = 0
    private var nextSequence = 0
    /// The number of the newest durable mutation (-1: none yet).
    package private(set) var durableSequence = -1
    private var awaitingDurable: [(sequence: Int, promise: EventLoopPromise<Void>)] = []

    package init() {}

    package var isEmpty: Bool { queue.isEmpty }
    package var count: Int { queue.count }
    /// The number of the newest mutation in flight.
    package var newestSequence: Int? { queue.last?.sequence }
    /// The mutations in flight, oldest first.
    package var pending: [Pending] { queue.elements }

    /// Whether a mutation of the data source is in flight.
    package func contains(dataSource name: String) -> Bool { perDataSource[name] != nil }

    /// Whether a mutation of the registrations is in flight.
    package var hasRegistrations: Bool { registrationMutations > 0 }

    /// Adds a mutation handed to the writer; returns its number.
    @discardableResult
    package mutating func append(
        dataSource: String?, previousVersion: Int?, registrations: Bool, done: Deferred<WireError?>?, undo: ChangeUndo?,
        at now: ContinuousClock.Instant = .now
    ) -> Int {
        let pending = Pending(
            dataSource: dataSource, previousVersion: previousVersion, registrations: registrations, sequence: nextSequence, added: now,
            done: done, undo: undo)
        nextSequence += 1
        track(pending, by: 1)
        queue.append(pending)
        return pending.sequence
    }

    /// The oldest `count` mutations are durable: removes them, oldest first, giving each to `each`;
    /// returns the promises of `whenDurable` now due (to succeed).
    package mutating func removeDurable(_ count: Int, each: (consuming Pending) -> Void) -> [EventLoopPromise<Void>] {
        for _ in 0..<count {
            let pending = queue.popFirst()!
            track(pending, by: -1)
            durableSequence = pending.sequence
            each(pending)
        }
        guard !awaitingDurable.isEmpty else { return [] }
        let due = awaitingDurable.filter { $0.sequence <= durableSequence }.map(\.promise)
        awaitingDurable.removeAll { $0.sequence <= durableSequence }
        return due
    }

    /// A write failed: removes and returns every mutation in flight (to undo), with the promises of
    /// `whenDurable` that will never be due (to fail).
    package mutating func removeAll() -> (undone: [Pending], waiting: [EventLoopPromise<Void>]) {
        let undone = pending
        queue.removeAll()
        perDataSource = [:]
        registrationMutations = 0
        let waiting = awaitingDurable.map(\.promise)
        awaitingDurable = []
        return (undone, waiting)
    }

    /// Succeeds once the mutation numbered `sequence` is durable (at once for `nil` or one durable
    /// already); fails (`removeAll`'s caller fails it) when a write fails first.
    package mutating func whenDurable(_ sequence: Int?, on loop: EventLoop) -> EventLoopFuture<Void> {
        guard let sequence, sequence > durableSequence else { return loop.makeSucceededVoidFuture() }
        let promise = loop.makePromise(of: Void.self)
        awaitingDurable.append((sequence, promise))
        return promise.futureResult
    }

    private mutating func track(_ pending: borrowing Pending, by step: Int) {
        if let name = pending.dataSource {
            let count = perDataSource[name, default: 0] + step
            perDataSource[name] = count > 0 ? count : nil
        }
        if pending.registrations { registrationMutations += step }
    }
}
