import DiffableCore
import ListAccess
import ListDurability
import ListServer
import ListServerTestKit
import ListWire
import Testing

/// Behaviours a mutation check found covered only by slow or root-only suites (issue 45, point 7):
/// each test here fails, in well under a second and as any user, when the small bug named in its
/// comment is put in.
@Suite("Server behaviours a mutation check found untested by fast suites")
struct MutationGapUnitTests {
    /// A change read from the store is applied only when it is the very next version: a gap of one
    /// version (or more) is read again, never taken as contiguous (caught: `step` comparing with
    /// `served.version + 2`).
    @Test func aFollowerTakesNoGapAsContiguous() {
        for held in [0, 1, 4, 41] {
            let served = (version: held, incarnation: "i")
            for version in max(0, held - 2)...(held + 5) {
                let expected: FollowerStateMachine.Step = version <= held ? .skip : version == held + 1 ? .apply : .readAgain
                let step = FollowerStateMachine.step(version: version, incarnation: "i", served: served, inFlight: false)
                #expect(step == expected, "version \(version) over \(held)")
            }
        }
    }

    /// A user who may only read a data source changes none of its outlines: not by expanding or
    /// collapsing, applying a section snapshot or editing one (caught: outline changes needing only
    /// read access). In process, as a made-up user: no root, no daemon.
    @Test func aReaderChangesNoOutline() throws {
        let server = InProcessServer(configuration: ServerConfiguration(listener: .path("/unused")))
        let owner = try server.connect()
        let reader = try server.connect(as: PeerIdentity(uid: 65_534, gid: 65_534, pid: 7, groups: [65_534], user: "nobody"))
        func send(_ connection: InProcessConnection, _ request: JSONValue) throws -> JSONValue {
            let lines = try connection.send(request.jsonBytes + [0x0A]).map { try JSONParser.parse($0) }
            return try #require(lines.first { $0["ok"] != nil }, "\(request) got no reply")
        }
        let tree: JSONValue = ["items": [["id": "p", "children": ["c1", "c2"]], ["id": "q", "children": ["q1"]], "r"]]
        #expect(try send(owner, ["cmd": "applySectionSnapshot", "dataSource": "d", "section": "S", "snapshot": tree])["ok"] == true)
        #expect(try send(owner, ["cmd": "expand", "dataSource": "d", "section": "S", "items": ["q"]])["ok"] == true)
        let before = try send(owner, ["cmd": "sectionSnapshot", "dataSource": "d", "section": "S"])
        let snapshotBefore = try send(owner, ["cmd": "snapshot", "dataSource": "d"])
        #expect(before["ok"] == true && snapshotBefore["ok"] == true)
        // Reading is allowed.
        #expect(try send(reader, ["cmd": "sectionSnapshot", "dataSource": "d", "section": "S"]) == before)

        let outlineEdits: [JSONValue] = [
            ["cmd": "expand", "dataSource": "d", "section": "S", "items": ["p"]],
            ["cmd": "collapse", "dataSource": "d", "section": "S", "items": ["q"]],
            ["cmd": "applySectionSnapshot", "dataSource": "d", "section": "S", "snapshot": ["items": ["x"]]],
            ["cmd": "applySectionSnapshot", "dataSource": "d", "section": "New", "snapshot": ["items": ["x"]]],
            ["cmd": "editSectionSnapshot", "dataSource": "d", "section": "S", "operations": [["op": "expand", "items": ["p"]]]],
            ["cmd": "editSectionSnapshot", "dataSource": "d", "section": "S", "operations": [["op": "append", "items": ["c3"], "parent": "p"]]],
            ["cmd": "editSectionSnapshot", "dataSource": "d", "section": "S", "operations": [["op": "delete", "items": ["q"]]]],
        ]
        for edit in outlineEdits {
            let reply = try send(reader, edit)
            #expect(reply["error"]?["code"] == "permission-denied", "\(edit): \(reply)")
            #expect(reply["error"]?["required"] == "write", "\(edit): \(reply)")
        }
        #expect(try send(owner, ["cmd": "sectionSnapshot", "dataSource": "d", "section": "S"]) == before, "the outline is as it was")
        #expect(try send(owner, ["cmd": "snapshot", "dataSource": "d"]) == snapshotBefore, "the snapshot is as it was")
        // The owner still may.
        #expect(try send(owner, ["cmd": "expand", "dataSource": "d", "section": "S", "items": ["p"]])["ok"] == true)
    }
}
