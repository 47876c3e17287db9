import CSystemd
import ListAccess
import Testing

@testable import ListServer

@Suite("SO_PEERGROUPS buffers")
struct PeerGroupsTests {
    func buffer(_ groups: [UInt32]) -> listd_peergroups {
        var buffer = listd_peergroups()
        withUnsafeMutableBytes(of: &buffer.groups) { raw in
            let gids = raw.bindMemory(to: gid_t.self)
            for (index, group) in groups.enumerated() { gids[index] = group }
        }
        return buffer
    }

    @Test func groupsAreReadUpToTheZeros() {
        #expect(PeerIdentity.supplementaryGroups(buffer([])) == [])
        #expect(PeerIdentity.supplementaryGroups(buffer([27, 100, 4242])) == [27, 100, 4242])
        // Sorted ascending, so group 0 can only lead: it counts when groups follow it.
        #expect(PeerIdentity.supplementaryGroups(buffer([0, 27])) == [0, 27])
        // A lone 0 cannot be told from no groups: left out (rules on group 0 fail closed).
        #expect(PeerIdentity.supplementaryGroups(buffer([0])) == [])
        #expect(PeerIdentity.supplementaryGroups(buffer(Array(1...1024))).count == 1024)
    }
}
