import ListAccess
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import ListServer

/// The parts `ServerState` is split into: the connection registry, the counters, the plugin registry.
@Suite struct ServerRegistriesTests {
    private static func state() -> ServerState {
        ServerState(configuration: ServerConfiguration(listener: .path("/unused")), logger: Logger(label: "test"))
    }

    /// Opens a connection of `uid` on `state` (the real handlers, on an embedded channel).
    private static func connect(_ state: ServerState, uid: UInt32) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let identity = PeerIdentity(uid: uid, gid: uid, pid: 1)
        try channel.pipeline.syncOperations.addHandlers(ConnectionHandler.handlers(state: state, identity: identity, router: CommandRouter.shared))
        channel.pipeline.fireChannelActive()
        return channel
    }

    @Test func connectionsAreCountedByUserAndForgottenOnce() throws {
        let state = Self.state()
        let first = try Self.connect(state, uid: 1000)
        let second = try Self.connect(state, uid: 1000)
        let other = try Self.connect(state, uid: 1001)
        #expect(state.connections.count == 3)
        #expect(state.connections.count(of: 1000) == 2)
        #expect(state.connections.count(of: 1001) == 1)
        #expect(state.stats.connectionsAccepted == 3)
        #expect(Set(state.connections.keys).count == 3)
        _ = try first.finish(acceptAlreadyClosed: true)
        #expect(state.connections.count == 2)
        #expect(state.connections.count(of: 1000) == 1)
        _ = try second.finish(acceptAlreadyClosed: true)
        #expect(state.connections.count(of: 1000) == 0)
        #expect(state.connections.byUser[1000] == nil, "a user without connections leaves no entry behind")
        _ = try other.finish(acceptAlreadyClosed: true)
        #expect(state.connections.isEmpty)
        #expect(state.stats.connectionsAccepted == 3, "accepted connections stay counted")
    }

    @Test func commandCountsAreNamedInCounterOrder() {
        var stats = ServerStats()
        stats.countCommand(2)
        stats.countCommand(2)
        stats.countCommand(0)
        #expect(stats.commandCounts(names: ["hello", "ping", "snapshot"]) == ["hello": 1, "snapshot": 2])
        #expect(stats.commandCounts(names: ["hello"]) == ["hello": 1], "a counter without a name is left out")
    }

    @Test func supervisedTypesAreHeldUnlessAPluginHasThem() {
        let plugins = PluginRegistry(logger: Logger(label: "test"), stopGrace: .seconds(3))
        plugins.reserve([SupervisedPluginSpec(name: "emoji", executable: "/bin/true", provides: ["emoji", "flag"])])
        #expect(plugins.reservations == ["emoji": "emoji", "flag": "emoji"])
    }
}
