import DiffableCore
import ListAccess
import ListDurability
import ListEngine
import ListStore
import ListWire
import Logging
import NIOCore
import ListServer
import NIOEmbedded
import StoreTestKit

/// A listd server without a socket or threads, for fuzzers and tests outside this module.
///
/// Its connections run the same pipeline a socket connection runs (the line framer, then
/// `ConnectionHandler` with `CommandRouter.shared`) in `EmbeddedChannel`s on one embedded event loop,
/// so every request takes the real command path down to the state layer; everything happens
/// synchronously on the caller's thread. Ephemeral, or over a `Store` (the commit pipeline then writes
/// on the loop itself, `InlineWriter`: a mutation's reply comes once its group is written, as in
/// listd, and a failed write is undone as in listd).
///
/// ```swift
/// let server = InProcessServer(configuration: ServerConfiguration(listener: .path("/unused")))
/// let connection = try server.connect()
/// let lines = try connection.send(Array(#"{"cmd":"ping"}"#.utf8) + [0x0A])   // [#"{"ok":true,"result":{}}"#]
/// ```
///
/// Not thread-safe: use a server and its connections from one thread.
public final class InProcessServer {
    let state: ServerState
    let loop = EmbeddedEventLoop()

    /// An ephemeral server with `configuration`'s limits (its storage is ignored: nothing is written);
    /// the listener, `demo` and plugins are ignored. Logging goes nowhere unless `logger` is given.
    public init(configuration: ServerConfiguration, logger: Logger? = nil) {
        let logger = logger ?? Logger(label: "listd.in-process", factory: { _ in SwiftLogNoOpLogHandler() })
        state = ServerState(configuration: configuration, logger: logger)
    }

    /// A durable server: serves what `store` holds and writes every change to it.
    public convenience init(configuration: ServerConfiguration, store: Store, logger: Logger? = nil) throws {
        self.init(configuration: configuration, logger: logger)
        let state = self.state
        try state.engine.load(store.load())
        state.adopt(
            CommitPipeline(engine: state.engine, store: store, loop: loop, logger: state.logger, inline: true) {
                [unowned state] undone in state.react(to: undone)
            })
    }

    /// Writes what is open, syncs and closes the store (a durable server); the server is not used after.
    public func closeStore() {
        guard let pipeline = state.storage.pipeline else { return }
        loop.run()
        pipeline.writer.shutdown {}
        try? pipeline.store.sync()
        pipeline.store.close()
    }

    /// Whether every change is written (or undone): no mutation is in flight.
    public var isIdle: Bool { state.storage.pipeline?.isIdle ?? true }

    /// A new client connection, connected and active, as `identity` (default: the process's own, which
    /// the access policy treats as an administrator).
    public func connect(as identity: PeerIdentity? = nil) throws -> InProcessConnection {
        try InProcessConnection(state: state, loop: loop, identity: identity)
    }

    /// Every data source's incarnation and version, by name.
    public var versions: [String: DataSourceVersion] {
        state.engine.dataSources.mapValues { DataSourceVersion(incarnation: $0.incarnation, version: $0.version) }
    }

    /// A deterministic encoding of the whole state that lasts: every data source (sorted by name: its
    /// name, incarnation and checkpoint content) and every registration in creation order. Two states
    /// with the same encoding are the same state.
    public var stateEncoding: [UInt8] { Self.encoding(of: state.model) }

    /// `stateEncoding` of any model (e.g. one loaded from a store, to compare with the state served).
    public static func encoding(of model: StateModel) -> [UInt8] { model.stateEncoding }

    /// What is wrong with the served state, empty when nothing is: the served data sources and the
    /// model's must be the same objects, and each snapshot must keep its internal invariants.
    public var consistencyProblems: [String] {
        var problems: [String] = []
        if Set(state.dataSources.keys) != Set(state.model.dataSources.keys) {
            problems.append("served data sources \(state.dataSources.keys.sorted()) ≠ stored \(state.model.dataSources.keys.sorted())")
        }
        for (name, dataSource) in state.engine.dataSources {
            if let model = state.model.dataSources[name], model !== dataSource.model {
                problems.append("data source \"\(name)\" serves another model than the state holds")
            }
            problems += dataSource.snapshot.invariantViolations().map { "\(name): \($0)" }
            problems += Self.outlineProblems(of: dataSource.model).map { "\(name): \($0)" }
        }
        return problems
    }
}

extension InProcessServer {
    /// Outlines that disagree with the rows: a section's outline shows exactly its rows, and an item is
    /// in one place only (one outline, or the rows of a section without one).
    static func outlineProblems(of model: DataSourceModel) -> [String] {
        var problems: [String] = []
        var holder: [String: String] = [:]
        for (section, outline) in model.outlines.sorted(by: { $0.key < $1.key }) {
            let rows = (try? model.snapshot.itemIdentifiers(inSection: section)) ?? []
            if outline.visibleItems.map(\.id) != rows {
                problems.append("section \"\(section)\" shows \(rows.prefix(8)) but its outline \(outline.visibleItems.prefix(8).map(\.id))")
            }
            for item in outline.items {
                if let other = holder.updateValue(section, forKey: item.id) {
                    problems.append("item \"\(item.id)\" is in the outlines of sections \"\(other)\" and \"\(section)\"")
                } else if let row = model.snapshot.sectionIdentifier(containingItem: item.id), row != section {
                    problems.append("item \"\(item.id)\" of section \"\(section)\"'s outline is a row of section \"\(row)\"")
                }
            }
        }
        return problems
    }
}

/// Where a data source is in its history: versions only grow within one incarnation (a data source
/// dropped and created again under the same name starts another).
public struct DataSourceVersion: Equatable, Sendable {
    public let incarnation: String
    public let version: Int
}

/// One client connection of an `InProcessServer`.
public final class InProcessConnection {
    private let channel: EmbeddedChannel
    /// Written bytes after the last newline (none while every write is whole lines).
    private var partial: [UInt8] = []

    init(state: ServerState, loop: EmbeddedEventLoop, identity: PeerIdentity?) throws {
        channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers(state.connectionHandlers(identity: identity))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/unused")).wait()
    }

    /// Whether the connection is still open (listd closes it after `line-too-long`, for example).
    public var isOpen: Bool { channel.isActive }

    /// Delivers `bytes` as one read burst, runs whatever the event loop has due, and returns the complete
    /// lines written since the last call (replies and events, without their newlines). Nothing when
    /// the connection is closed.
    public func send(_ bytes: [UInt8]) throws -> [[UInt8]] {
        guard channel.isActive else { return [] }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try channel.writeInbound(buffer)
        channel.embeddedEventLoop.run()
        return try output()
    }

    /// `send(_:)` for benchmarks: how many complete lines were written, counted without copying them
    /// (so a benchmark's allocation count is listd's own).
    public func sendCountingLines(_ bytes: [UInt8]) throws -> Int {
        guard channel.isActive else { return 0 }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try channel.writeInbound(buffer)
        channel.embeddedEventLoop.run()
        try channel.throwIfErrorCaught()
        var lines = 0
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            precondition(partial.isEmpty, "sendCountingLines is for connections that get whole lines")
            buffer.withUnsafeReadableBytes { bytes in
                for byte in bytes where byte == 0x0A { lines += 1 }
            }
        }
        return lines
    }

    /// The peer closes its sending side (half-closure, as a socket client's `shutdown(SHUT_WR)`).
    public func closeInput() throws -> [[UInt8]] {
        guard channel.isActive else { return [] }
        channel.pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        channel.embeddedEventLoop.run()
        return try output()
    }

    /// Moves this connection's event loop clock forward and runs what falls due (plugin deadlines,
    /// partial-line timeouts), returning the lines written meanwhile.
    public func advanceTime(milliseconds: Int64) throws -> [[UInt8]] {
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(milliseconds))
        return try output()
    }

    /// How many bytes were written after the last newline: a reply split across writes, or unterminated.
    public var unterminatedOutputBytes: Int { partial.count }

    /// Closes the connection (the server forgets its views).
    public func close() {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    private func output() throws -> [[UInt8]] {
        try channel.throwIfErrorCaught()
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { partial += buffer.readableBytesView }
        guard let last = partial.lastIndex(of: 0x0A) else { return [] }
        let lines = partial[..<last].split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        partial.removeSubrange(...last)
        return lines
    }
}
