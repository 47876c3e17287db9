import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// bob: a second non-root user besides `nobody` (uid 1, `daemon` in the user database).
private let bobUID: UInt32 = 1
private let bobGID: UInt32 = 1

/// issue 46, finding 5: registrations cannot be squatted. Each user has a namespace of registrations;
/// a cell provider names its data source owner's, and another user's only with its owner.
@Suite("Registrations in their owners' namespaces (squatting)", .serialized)
struct RegistrationSquattingTests {
    /// `listctl` run as bob (the build directory is readable by everyone here, as CI's is).
    private func listctlAsBob(_ daemon: Daemon, _ arguments: [String], input: String? = nil) throws -> (status: Int32, out: String, err: String) {
        try runProgram(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=\(bobUID)", "--regid=\(bobGID)", "--clear-groups", binaryDirectory.appendingPathComponent("listctl").path, "--socket", daemon.socketPath]
                + arguments, input: input)
    }

    /// The attack replayed: nobody registers the README's `row` first; bob follows the README (his own
    /// `row` is made, not "unchanged"), sets his provider, and nobody's replacement of nobody's `row`
    /// changes nothing in bob's cells, before and after a restart; nobody cannot touch bob's.
    @Test func anotherUsersRegistrationOfTheSameNameIsNeverBobs() throws {
        let directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        let arguments = ["--socket-mode", "0666", "--state-directory", directory + "/state"]
        // The first daemon lives to the end: a Daemon's deinit removes its directory.
        let first = try Daemon(arguments: arguments, directory: directory)
        var daemon = first
        let readme = #"{"contentConfiguration":{"type":"valueCell","text":"{{title}}","secondaryText":"{{subtitle}}"}}"#
        let nobody = try connect(daemon)
        let made = try nobody.request([
            "cmd": "register", "registration": "row", "contentConfiguration": ["type": "valueCell", "text": "{{title}}", "secondaryText": "{{subtitle}}"],
        ]).result()
        #expect(made["created"] == true && made["owner"] == .int(Int(otherUID)))

        // bob follows the README.
        let registered = try listctlAsBob(daemon, ["register", "row", "-"], input: readme)
        #expect(registered.status == 0 && registered.out == "created row (cell, valueCell)\n", "\(registered)")
        let snapshot = #"{"sections":[{"id":"S","items":[{"id":"a","data":{"title":"Apples","subtitle":"6, green","secret":"bob-secret-42"}}]}]}"#
        #expect(try listctlAsBob(daemon, ["apply", "groceries", "-"], input: snapshot).status == 0)
        let provider = try listctlAsBob(daemon, ["cell-provider", "groceries", "-"], input: #"{"default":"row"}"#)
        #expect(provider.status == 0, "\(provider)")

        // nobody replaces nobody's row with a template that would leak bob's payload.
        let replaced = try nobody.request([
            "cmd": "register", "registration": "row", "replace": true,
            "contentConfiguration": ["type": "valueCell", "text": "HACKED {{title}}", "secondaryText": "{{secret}}"],
        ]).result()
        #expect(replaced["replaced"] == true && replaced["owner"] == .int(Int(otherUID)))
        // and cannot replace or delete bob's.
        let bobs: JSONValue = ["type": "cell", "text": "HACKED"]
        #expect(try nobody.request(["cmd": "register", "registration": "row", "replace": true, "owner": "daemon", "contentConfiguration": bobs]).errorCode == "permission-denied")
        #expect(try nobody.request(["cmd": "unregister", "registration": "row", "owner": .int(Int(bobUID))]).errorCode == "permission-denied")
        #expect(try nobody.request(["cmd": "register", "registration": "row", "owner": "daemon", "contentConfiguration": bobs]).errorCode == "invalid-argument")

        func bobsCell() throws -> String {
            let shown = try listctlAsBob(daemon, ["dequeue", "v", "0:0", "--attach", "groceries"])
            #expect(shown.status == 0, "\(shown)")
            return shown.out
        }
        for round in 0..<2 {
            let cell = try bobsCell()
            #expect(cell.contains("Apples") && cell.contains("6, green"), "round \(round): \(cell)")
            #expect(!cell.contains("HACKED") && !cell.contains("bob-secret-42"), "round \(round): \(cell)")
            let bob = try connect(daemon, uid: bobUID, gid: bobGID)
            let own = try bob.request(["cmd": "registration", "registration": "row"]).result()
            #expect(own["owner"] == .int(Int(bobUID)) && own["ownerName"] == "daemon", "reads resolve bob's namespace first: \(own)")
            let theirs = try bob.request(["cmd": "registration", "registration": "row", "owner": "nobody"]).result()
            #expect(theirs["definition"]?["contentConfiguration"]?["text"] == "HACKED {{title}}")
            let listed = try bob.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue ?? []
            #expect(Set(listed.compactMap { $0["owner"]?.intValue }) == [Int(otherUID), Int(bobUID)] && listed.allSatisfy { $0["registration"] == "row" })
            guard round == 0 else { break }
            // Stored under their keys: a restart serves the same.
            try first.stop()
            daemon = try Daemon(arguments: arguments, directory: directory)
        }
        // bob may name nobody's registration, but only explicitly (and then he gets nobody's).
        let bob = try connect(daemon, uid: bobUID, gid: bobGID)
        _ = try bob.request(["cmd": "setCellProvider", "dataSource": "groceries", "rules": [], "default": ["name": "row", "owner": "nobody"]]).result()
        #expect(try bob.request(["cmd": "cellProvider", "dataSource": "groceries"]).result()["default"] == ["name": "row", "owner": .int(Int(otherUID))])
        #expect(try bobsCell().contains("HACKED Apples"))
    }

    /// A provider's name is looked up in the data source owner's namespace only: a name only another
    /// user has is `registration-not-found` when the provider is set, and when that user takes it later
    /// the owner's cells do not change.
    @Test func aNameOnlyAnotherUserHasIsNotFound() throws {
        let daemon = try sharedDaemon()
        let nobody = try connect(daemon)
        let bob = try connect(daemon, uid: bobUID, gid: bobGID)
        _ = try nobody.request(["cmd": "register", "registration": "card", "contentConfiguration": ["type": "cell", "text": "HACKED"]]).result()
        _ = try bob.request(["cmd": "apply", "dataSource": "b", "snapshot": ["sections": [["id": "S", "items": [["id": "x", "data": ["title": "mine"]]]]]]]).result()
        let refused = try bob.request(["cmd": "setCellProvider", "dataSource": "b", "rules": [], "default": "card"])
        #expect(refused.errorCode == "registration-not-found", "\(refused)")
        // bob's own, made afterwards, is the one used; nobody unregistering nobody's changes nothing for bob.
        _ = try bob.request(["cmd": "register", "registration": "card", "contentConfiguration": ["type": "cell", "text": "{{title}}"]]).result()
        _ = try bob.request(["cmd": "setCellProvider", "dataSource": "b", "rules": [["section": "S", "registration": "card"]]]).result()
        _ = try bob.request(["cmd": "attach", "dataSource": "b", "view": "v"]).result()
        _ = try nobody.request(["cmd": "unregister", "registration": "card"]).result()
        _ = try nobody.request(["cmd": "register", "registration": "card", "contentConfiguration": ["type": "cell", "text": "HACKED again"]]).result()
        let cells = try bob.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]?.arrayValue ?? []
        #expect(cells.first?["content"]?["text"] == "mine" && cells.first?["registration"] == "card", "\(cells)")
        // No registrationChanged reached bob's view for nobody's registrations.
        try bob.send(line: #"{"cmd":"ping","id":"end"}"#)
        #expect(try bob.readJSON() == ["id": "end", "ok": true, "result": [:]])
    }
}
