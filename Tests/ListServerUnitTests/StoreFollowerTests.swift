import CellCore
import DiffableCore
import Foundation
import ListDurability
import ListEngine
import ListStore
import ListWire
import Logging
import NIOCore
import NIOPosix
import StoreTestKit
import TestSupport
import Testing

@testable import ListServer

/// A server's state following a `MemorySharedStore` (another instance simulated in the test), with
/// its commit pipeline, on an event loop of its own.
private final class FollowingState: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop: EventLoop
    let store = MemorySharedStore()
    private var stateValue: ServerState!

    init() throws {
        loop = group.next()
        try loop.submit { [self] in
            let state = ServerState(
                configuration: ServerConfiguration(listener: .path("/unused")),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            try state.engine.load(store.load())
            let pipeline = CommitPipeline(engine: state.engine, store: store, loop: loop, logger: state.logger) { [unowned state] undone in
                state.react(to: undone)
            }
            state.adopt(pipeline)
            state.follow(store, pipeline: pipeline, loop: loop)
            stateValue = state
        }.wait()
    }

    func onLoop<Value: Sendable>(_ body: @escaping @Sendable (ServerState) throws -> Value) throws -> Value {
        try loop.submit { [self] in try body(stateValue) }.wait()
    }

    /// Commits a local change: `nil` once durable, or the error.
    func commit(_ change: StateChange) throws -> WireError? {
        try loop.flatSubmit { [self] in
            do throws(WireError) {
                let result = try stateValue.commit(change, connection: nil)
                let promise = loop.makePromise(of: WireError?.self)
                if result.awaited != nil {
                    // Held by number until its group is durable (`DurableReplies`).
                    stateValue.holdUntilDurable(result, holder: HeldReply(promise), slot: nil)
                } else if let later = result.deferred {
                    later.whenResolved { promise.succeed($0.failure) }
                } else {
                    promise.succeed(result.failure)
                }
                return promise.futureResult
            } catch {
                return loop.makeSucceededFuture(error)
            }
        }.wait()
    }

    /// The items of data source `name` as served, with its version (`nil`: not served).
    func served(_ name: String) throws -> (version: Int, items: [String])? {
        try onLoop { state in state.dataSources[name].map { ($0.version, $0.snapshot.itemIdentifiers) } }
    }

    func close() throws {
        try onLoop { state in state.storage.follower?.store.stopFollowing() }
        let (writer, background, reader) = try onLoop { state in (state.storage.pipeline!.writer!, state.storage.pipeline!.background, state.storage.follower!.reader) }
        try reader.syncShutdownGracefully()
        try background?.syncShutdownGracefully()
        let ended = DispatchSemaphore(value: 0)
        writer.shutdown { ended.signal() }
        ended.wait()
        try group.syncShutdownGracefully()
    }
}

/// A reply held until its change is durable: passes on the error it became (its encoded error line,
/// read back), or `nil` once the change is durable.
private final class HeldReply: DurableReplyHolder {
    let promise: EventLoopPromise<WireError?>

    init(_ promise: EventLoopPromise<WireError?>) { self.promise = promise }

    func heldReplyResolved(_ slot: Int?, _ reply: CommandResult) {
        let line = reply.encodedReply
        guard !line.isEmpty, case .object(let members)? = try? JSONParser.parse(line), members["ok"] == false,
            case .object(var error)? = members["error"], let code = error.removeValue(forKey: "code")?.stringValue.flatMap(ErrorCode.init(rawValue:))
        else { return promise.succeed(reply.failure) }
        let message = error.removeValue(forKey: "message")?.stringValue ?? ""
        promise.succeed(WireError(code, message, details: error))
    }
}

private func append(_ id: String) -> DataSourceOperation { .edit(.appendItems([Item(id)], toSection: "s")) }

@Suite("Store follower: what other instances commit, against a shared store in memory that fails on demand")
struct StoreFollowerTests {
    /// Changes another instance commits are applied in version order.
    @Test func changesCommittedElsewhereAreFollowedInOrder() throws {
        let following = try FollowingState()
        #expect(try following.commit(.dataSource(name: "d", ifVersion: nil, createAs: .fresh, .edit(.appendSections([Section("s")])))) == nil)
        for index in 0..<5 { following.store.commitAsOther("d", append("o\(index)")) }
        try waitUntil("the five changes") { try following.served("d")?.version == 6 }
        #expect(try following.served("d")?.items == ["o0", "o1", "o2", "o3", "o4"])
        #expect(try following.onLoop { $0.storage.follower!.changesFollowed } == 5)
        try following.close()
    }

    /// A read that fails (the store's reading connection broke) is tried again by itself: the change
    /// whose notice came meanwhile is not left until the next notice.
    @Test func aFailedReadIsTriedAgainWithoutANotice() throws {
        let following = try FollowingState()
        #expect(try following.commit(.dataSource(name: "d", ifVersion: nil, createAs: .fresh, .edit(.appendSections([Section("s")])))) == nil)
        following.store.failReads()
        following.store.commitAsOther("d", append("late"))
        try waitUntil("the read to fail") { following.store.readsFailed >= 1 }
        following.store.healReads()
        try waitUntil("the change, with no other notice") { try following.served("d")?.items == ["late"] }
        #expect(try following.onLoop { $0.storage.follower!.readFailures } >= 1)
        try following.close()
    }

    /// A local change whose write loses against another instance's (the same version) fails as a
    /// conflict, is undone in memory, and the data source catches up with the other instance's change.
    @Test func aLocalWriteThatLosesIsUndoneAndTheOtherChangeFollowed() throws {
        let following = try FollowingState()
        #expect(try following.commit(.dataSource(name: "d", ifVersion: nil, createAs: .fresh, .edit(.appendSections([Section("s")])))) == nil)
        // The other instance takes version 2 before this one's write reaches the store; its notice is late.
        following.store.commitAsOther("d", append("theirs"), notify: false)
        let error = try #require(try following.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, append("mine"))))
        #expect(error.code == .storageFailed && error.details["conflict"] == true, "\(error)")
        // Undone in memory, then caught up before the failure was answered (the router runs it again then).
        #expect(try following.served("d")?.items == ["theirs"])
        #expect(try following.onLoop { state in state.model.dataSources["d"]!.version } == 2)
        #expect(try following.onLoop { state in state.storage.pipeline!.conflicts } == 1)
        try following.close()
    }

    /// Data sources created and dropped elsewhere, and registrations made elsewhere, reach this one.
    @Test func dataSourcesAndRegistrationsMadeElsewhereAreServed() throws {
        let following = try FollowingState()
        following.store.createAsOther("e", incarnation: "other-1")
        try waitUntil("the new data source") { try following.served("e") != nil }
        following.store.commitAsOther("e", .edit(.appendSections([Section("s")])))
        following.store.commitAsOther("e", append("x"))
        try waitUntil("its changes") { try following.served("e")?.items == ["x"] }
        following.store.registerAsOther(try Registration(name: "r", definition: ["contentConfiguration": ["type": "cell", "text": "{{n}}"]]))
        try waitUntil("the registration") { try following.onLoop { $0.model.registration(named: "r", owner: 0) != nil } }
        following.store.dropAsOther("e")
        try waitUntil("the drop") { try following.served("e") == nil }
        try following.close()
    }

    /// A local write that fails for another reason (an I/O error) is undone in memory without reading
    /// the data source back, and what the other instance committed meanwhile is followed afterwards.
    @Test func aFailedLocalWriteIsUndoneAndFollowingGoesOn() throws {
        let following = try FollowingState()
        #expect(try following.commit(.dataSource(name: "d", ifVersion: nil, createAs: .fresh, .edit(.appendSections([Section("s")])))) == nil)
        following.store.failWrite()
        #expect(try following.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, append("lost")))?.code == .storageFailed)
        #expect(try following.served("d")?.items == [])
        following.store.commitAsOther("d", append("theirs"))
        try waitUntil("the other instance's change") { try following.served("d")?.items == ["theirs"] }
        #expect(try following.commit(.dataSource(name: "d", ifVersion: nil, createAs: nil, append("mine"))) == nil)
        #expect(try following.served("d")?.items == ["theirs", "mine"])
        try following.close()
    }
}
