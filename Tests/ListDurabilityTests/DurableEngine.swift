import DiffableCore
import Dispatch
import ListDurability
import ListEngine
import ListStore
import ListWire
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import StoreTestKit
import TestSupport

/// The engine with a commit pipeline over a store (a `FaultInjectingStore` unless given), wired by
/// `CommitPipeline(engine:…)`,
/// on an event loop of its own: no server, no sockets. A change takes the server's commit path for
/// durability: `StateEngine.commit` recording its undo, then `CommitPipeline.add(_:of:)`; a change is
/// refused at once while the store is unavailable (as the server refuses it).
final class DurableEngine: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop: EventLoop
    let store: Store
    /// The store, when it is the `FaultInjectingStore` made by default.
    var faults: FaultInjectingStore { store as! FaultInjectingStore }
    // Confined to `loop`.
    private var engineValue: StateEngine<NoViews>!
    private var pipelineValue: CommitPipeline!
    private var undoneValue: [UndoneChanges<NoViews>] = []
    /// Numbered changes waiting to be durable, by number (`numbered` only).
    private var waitingByNumber: [Int: (WireError?) -> Void] = [:]
    /// Changes are numbered (`CommitPipeline.add(_:of:numbered: true)`, the server's path without other
    /// instances) instead of each waiting with a `Deferred` of its own.
    let numbered: Bool

    /// The limits of a live change (the server's defaults, roughly).
    static let limits = ChangeLimits(maximumDataSources: 1_000, maximumItemsPerDataSource: 1_000_000, maximumIdentifierBytes: 1_024, maximumRegistrations: 1_000)

    init(store: Store? = nil, numbered: Bool = false) throws {
        self.numbered = numbered
        loop = group.next()
        let store = try store ?? FaultInjectingStore()
        self.store = store
        try loop.submit { [self] in
            let engine = StateEngine(retention: (100, 1 << 20))
            let loaded = try store.load()
            try engine.load(loaded)
            let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            let pipeline = CommitPipeline(engine: engine, store: store, loop: loop, logger: logger) { [unowned self] undone in
                undoneValue.append(undone)
            }
            pipeline.loaded(loaded)
            if numbered {
                pipeline.numberedDurable = { [unowned self] number in
                    for key in waitingByNumber.keys.sorted() where key <= number { waitingByNumber.removeValue(forKey: key)!(nil) }
                }
                pipeline.numberedUndone = { [unowned self] numbers, error in
                    for key in waitingByNumber.keys.sorted() where numbers.contains(key) { waitingByNumber.removeValue(forKey: key)!(error) }
                }
            }
            engineValue = engine
            pipelineValue = pipeline
        }.wait()
    }

    /// Runs `body` on the loop with the engine and the pipeline.
    func onLoop<Value: Sendable>(_ body: @escaping @Sendable (StateEngine<NoViews>, CommitPipeline) throws -> Value) throws -> Value {
        try loop.submit { [self] in try body(engineValue, pipelineValue) }.wait()
    }

    /// What each failed write's undo reported to the server's side, as short strings: the data sources
    /// touched, those no longer served, and the registrations with what undoing did to them.
    func undone() throws -> [String] {
        try loop.submit { [self] in
            undoneValue.map { undone in
                let registrations = undone.registrations.map { "\($0.key) \($0.change.rawValue)" }
                return "touched \(undone.dataSources.sorted()) gone \(undone.gone.map(\.name).sorted()) registrations \(registrations)"
            }
        }.wait()
    }

    /// Commits `change`: `nil` once it is durable, or the error it was refused or undone with. A dropped
    /// data source stops being served once the drop is durable (the server does it after the reply).
    func commit(_ change: StateChange) -> EventLoopFuture<WireError?> {
        loop.flatSubmit { [self] in
            let engine = engineValue!
            do throws(WireError) {
                if let reason = pipelineValue.unavailableReason { throw WireError(.storageFailed, reason) }
                let applied = try engine.commit(change, limits: Self.limits, recordingUndo: true)
                let durability = pipelineValue.add(applied, of: change, numbered: numbered)
                if case .now = durability { return loop.makeSucceededFuture(nil) }
                let promise = loop.makePromise(of: WireError?.self)
                let finish = { (error: WireError?) in
                    if error == nil, case .dropDataSource = change, let dropped = applied.dataSource { engine.retire(dropped) }
                    promise.succeed(error)
                }
                switch durability {
                case .now: break
                case .deferred(let durable): durable.whenResolved(finish)
                case .numbered(let number): waitingByNumber[number] = finish
                }
                return promise.futureResult
            } catch {
                return loop.makeSucceededFuture(error)
            }
        }
    }

    /// The state in memory (`StateModel.stateEncoding`).
    func memory() throws -> String {
        try onLoop { engine, _ in String(decoding: engine.model.stateEncoding, as: UTF8.self) }
    }

    /// The state the store holds, read back through the writer (between two groups), encoded alike.
    func stored() throws -> String {
        let store = self.store
        let encoded = try onLoop { _, pipeline in pipeline.writer.perform { try StateModel(loading: store.load()).stateEncoding } }.wait()
        return String(decoding: encoded, as: UTF8.self)
    }

    /// Syncs and closes the store as a stopping server does (`CommitPipeline.close`, without awaiting:
    /// a test blocks no task), then ends the loop.
    func close() throws {
        let (writer, background) = try onLoop { _, pipeline in (pipeline.writer!, pipeline.background) }
        try background?.syncShutdownGracefully()
        try writer.perform { [store] in try store.sync() }.wait()
        let ended = DispatchSemaphore(value: 0)
        writer.shutdown { ended.signal() }
        ended.wait()
        store.close()
        try group.syncShutdownGracefully()
    }
}

/// Appends items (each with data `n`) to section "s" of a data source, or creates it with that section.
func append(_ items: [String], to name: String = "d", create: Bool = false) -> StateChange {
    .dataSource(
        name: name, ifVersion: nil, createAs: create ? DataSourceCreation(incarnation: "\(name)-1", owner: 0) : nil,
        .edit(create ? .appendSections([Section("s")]) : .appendItems(items.map { Item($0, data: ["n": .int($0.count)]) }, toSection: "s")))
}

extension EventLoopFuture where Value: Sendable {
    /// `wait()` for at most 20 s (`WaitTimedOut` then): a pipeline that never answers fails its test
    /// instead of hanging the run.
    func waitBounded() throws -> Value {
        let result = NIOLockedValueBox<Result<Value, any Error>?>(nil)
        whenComplete { completed in result.withLockedValue { $0 = completed } }
        try waitUntil("an answer") { result.withLockedValue { $0 } != nil }
        return try result.withLockedValue { $0 }!.get()
    }
}
