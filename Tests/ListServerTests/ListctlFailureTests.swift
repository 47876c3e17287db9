import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// What listctl says when a request cannot go through: too big for listd's line limit, or listd
/// closing the connection while it is being sent.
@Suite("listctl failures a newcomer meets", .serialized)
struct ListctlFailureTests {
    /// A snapshot file of `count` items with a payload each.
    func snapshotFile(items count: Int, in daemon: Daemon) throws -> String {
        let items: [JSONValue] = (0..<count).map { ["id": .string("item-\($0)"), "data": ["title": .string("Item number \($0)")]] }
        let path = daemon.directory + "/snapshot.json"
        try Data((["sections": [["id": "all", "items": .array(items)]]] as JSONValue).jsonBytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The exit statuses of the man page's EXIT STATUS section, one case each: 0 done, 1 refused or not
    /// sent, 2 listd unreachable, 64 a wrong command line.
    @Test func exitStatusesAreTheManPages() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        #expect(try listctl(daemon, ["ping"]).status == 0)
        let refused = try listctl(daemon, ["show", "nothere"])
        #expect(refused.status == 1 && refused.err.contains("data-source-not-found"), "\(refused.err)")
        let missing = try listctl(daemon, ["apply", "x", daemon.directory + "/nothere.json"])
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.err == "listctl: cannot read \(daemon.directory)/nothere.json: No such file or directory\n", "no usage block: \(missing.err)")
        let badJSON = try listctl(daemon, ["apply", "x", "-"], input: "{bad")
        #expect(badJSON.status == 1 && badJSON.err.hasPrefix("listctl: standard input: not valid JSON"), "\(badJSON)")
        let absent = try listctl(daemon, ["--socket", daemon.directory + "/absent.sock", "ping"])
        #expect(absent.status == 2, "\(absent)")
        // (watch giving up on a listd that went away is 2 as well: ListctlTests.watchGivesUpWithoutListd.)
        let typo = try listctl(daemon, ["shwo", "home"])
        #expect(typo.status == 64 && typo.err == "listctl: no command \"shwo\"; did you mean \"show\"?\n", "\(typo.err)")
        #expect(try listctl(daemon, ["show"]).status == 64, "a missing argument")
        let manual = try String(contentsOf: InstallTests.repository.appendingPathComponent("man/listctl.1.mdoc"), encoding: .utf8)
        for statement in ["0 on success", "1 when listd refused", "2 when listd cannot be", "64 for a wrong command line"] {
            #expect(manual.contains(statement), "the man page says \(statement)")
        }
    }

    /// Typos get a suggestion: a data source listd has.
    @Test func aDataSourceTypoIsAnswered() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let typo = try listctl(daemon, ["show", "hmoe"])
        #expect(typo.status == 1 && typo.err.hasSuffix(" Did you mean \"home\"?\n"), "\(typo.err)")
        let far = try listctl(daemon, ["show", "zzzzzz"])
        #expect(far.status == 1 && !far.err.contains("Did you mean"), "\(far.err)")
    }

    @Test func aRequestOverTheLineLimitIsRefusedBeforeSending() throws {
        let daemon = try Daemon(configuration: ["maxLineBytes": 20_000])
        let path = try snapshotFile(items: 1_000, in: daemon)
        let result = try listctl(daemon, ["apply", "big", path])
        #expect(result.status == 1)
        #expect(result.err.contains("the request is "), "\(result.err)")
        #expect(result.err.contains("listd accepts lines of at most 20000 bytes (19.5 KiB) (maxLineBytes); nothing was sent"), "\(result.err)")
        #expect(try daemon.request(["cmd": "listDataSources"]).result()["dataSources"] == [], "nothing was sent")
        #expect(try daemon.request(["cmd": "stats"]).result()["errors"]?["line-too-long"] == nil, "listd never saw the line")

        // Under the limit, the same command goes through.
        let small = try listctl(daemon, ["apply", "big", try snapshotFile(items: 100, in: daemon)])
        #expect(small.status == 0, "\(small.err)")
    }

    /// A client that sends an over-long line anyway (no check first) gets listd's `line-too-long`
    /// reply, not a bare broken pipe, and never dies of SIGPIPE.
    @Test func listdClosingWhileSendingGivesItsReply() throws {
        let daemon = try Daemon(configuration: ["maxLineBytes": 20_000])
        let connection = try daemon.connect()
        let huge = Array(#"{"cmd":"ping","pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 8 << 20) + Array(#""}"#.utf8)
        let received = try connection.requestLine(encoded: huge)
        #expect(received.reply.errorCode == "line-too-long", "\(received.reply)")
    }

    @Test func aBrokenPipeIsReportedAsSuch() throws {
        // A peer that reads nothing and closes: the write fails with EPIPE (or ECONNRESET), as an error.
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/closing.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0 && listen(listener, 1) == 0)
        defer { close(listener) }
        let connection = try LineConnection(path: path)
        close(accept(listener, nil, nil))
        let request = [UInt8](repeating: UInt8(ascii: " "), count: 4 << 20)
        do {
            _ = try connection.requestLine(encoded: request)
            Issue.record("the write should fail")
        } catch let error as ClientError {
            #expect(error.brokenPipe)
            #expect(error.description.contains("listd closed the connection while the request was being sent"), "\(error)")
        }
    }
}
