import ListClient
import Testing

@Suite("One socket path for every program")
struct SocketPathTests {
    func environment(_ values: [String: String]) -> (String) -> String? { { values[$0] } }

    @Test func theServerAndTheClientsAgree() {
        let user = environment(["XDG_RUNTIME_DIR": "/run/user/1000", "USER": "alice"])
        #expect(SocketPath.forServer(environment: user, uid: 1000) == "/run/user/1000/listd.sock")
        #expect(SocketPath.forClient(environment: user, uid: 1000, isSocket: { _ in false }) == "/run/user/1000/listd.sock")
        let bare = environment(["USER": "alice"])
        #expect(SocketPath.forServer(environment: bare, uid: 1000) == "/tmp/listd-alice/listd.sock")
        #expect(SocketPath.forClient(environment: bare, uid: 1000, isSocket: { $0 == "/tmp/listd-alice/listd.sock" }) == "/tmp/listd-alice/listd.sock")
        #expect(SocketPath.forServer(environment: user, uid: 0) == "/run/listd.sock")
        #expect(SocketPath.forClient(environment: user, uid: 0) == "/run/listd.sock")
        let explicit = environment(["LISTD_SOCKET": "/srv/l.sock", "XDG_RUNTIME_DIR": "/run/user/1000"])
        #expect(SocketPath.forServer(environment: explicit, uid: 1000) == "/srv/l.sock")
        #expect(SocketPath.forClient(environment: explicit, uid: 0) == "/srv/l.sock")
    }

    @Test func aUserWithoutItsOwnListdFindsTheSystemOne() {
        let user = environment(["XDG_RUNTIME_DIR": "/run/user/1000"])
        #expect(SocketPath.forClient(environment: user, uid: 1000, isSocket: { $0 == SocketPath.system }) == "/run/listd.sock")
        // Its own, when both exist.
        #expect(SocketPath.forClient(environment: user, uid: 1000, isSocket: { _ in true }) == "/run/user/1000/listd.sock")
    }
}
