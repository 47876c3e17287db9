import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs listd with `arguments` where it must refuse to start: returns its exit status and log, or
/// records an issue and stops it when it is still running after 20 seconds (it started after all).
private func listdRefusing(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> (status: Int32, log: String) {
    let process = Process()
    process.executableURL = binaryDirectory.appendingPathComponent("listd")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment.removeValue(forKey: "NOTIFY_SOCKET")
    environment["SWIFT_BACKTRACE"] = "enable=no"
    process.environment = environment
    let log = makePipe()
    process.standardError = log
    process.standardOutput = FileHandle.nullDevice
    try process.start()
    let deadline = ContinuousClock.now + .seconds(20)
    while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
    if process.isRunning {
        Issue.record("listd started with \(arguments)", sourceLocation: sourceLocation)
        process.terminate()
    }
    process.waitUntilExit(within: .seconds(60))
    return (process.terminationStatus, String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
}

/// A temporary directory others may enter (0755), removed when released, in which a test makes the
/// directories another user controls.
private final class Scratch {
    let path: String
    init() throws {
        path = try makeTemporaryDirectory()
        chmod(path, 0o755)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A directory in it with exactly `mode` (no umask), owned by `owner` when given.
    func directory(_ name: String, mode: mode_t, owner: UInt32? = nil) -> String {
        let made = path + "/" + name
        mkdir(made, 0o700)
        chmod(made, mode)
        if let owner { chown(made, owner, owner) }
        return made
    }
}

/// A file only root may read or write, which nothing listd or a client does may change.
private func victimFile(in directory: String) throws -> String {
    let path = directory + "/victim"
    try "root's secret\n".write(toFile: path, atomically: false, encoding: .utf8)
    chmod(path, 0o600)
    return path
}

private func modeAndContents(_ path: String) -> (mode_t, String?) {
    var status = stat()
    lstat(path, &status)
    return (status.st_mode & 0o7777, try? String(contentsOfFile: path, encoding: .utf8))
}

/// Paths another local user controls (`nobody` here, the tests running as root, as CI's do): a directory
/// of theirs, a world-writable one, planted symbolic links. listd and its clients refuse them by name
/// and change no file through them.
@Suite("Planted paths: sockets, state directories and clients", .serialized, .enabled(if: getuid() == 0, "gives files to another user"))
struct PlantedPathTests {
    @Test func aSocketDirectoryOfAnotherUserIsRefused() throws {
        let scratch = try Scratch()
        let victim = try victimFile(in: scratch.path)
        let theirs = scratch.directory("theirs", mode: 0o777, owner: otherUID)
        // What they could plant: a link where listd's socket goes, pointing at root's file.
        symlink(victim, theirs + "/listd.sock")
        let refused = try listdRefusing(["--ephemeral", "--socket", theirs + "/listd.sock", "--socket-mode", "0666"])
        #expect(refused.status != 0)
        #expect(refused.log.contains("refusing the socket \(theirs)/listd.sock: \(theirs) belongs to nobody (uid 65534)"), "\(refused.log)")
        #expect(modeAndContents(victim) == (0o600, "root's secret\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs) == ["listd.sock"], "nothing made there")
    }

    @Test func aWorldWritableSocketDirectoryIsRefusedUnlessSticky() throws {
        let scratch = try Scratch()
        let shared = scratch.directory("shared", mode: 0o777)
        let refused = try listdRefusing(["--ephemeral", "--socket", shared + "/listd.sock"])
        #expect(refused.log.contains("\(shared) can be written by other users (mode 0777, not sticky)"), "\(refused.log)")
        // As /tmp is: others may add names there but not move listd's, so the socket is made safely.
        chmod(shared, 0o1777)
        let daemon = try Daemon(arguments: ["--socket-mode", "0666"], directory: shared)
        var status = stat()
        #expect(lstat(shared + "/listd.sock", &status) == 0 && status.st_mode & 0o777 == 0o666 && status.st_uid == 0)
        #expect(try daemon.request(["cmd": "ping"])["ok"] == true)
        let names = try FileManager.default.contentsOfDirectory(atPath: shared).filter { !$0.hasPrefix("notify-") }
        #expect(names == ["listd.sock"], "no private directory left behind: \(names)")
        // A planted socket of another user's at the name is not taken over.
        try daemon.stop()
        let planted = try LineConnectionServer(path: shared + "/listd.sock")
        chown(shared + "/listd.sock", otherUID, otherGID)
        let taken = try listdRefusing(["--ephemeral", "--socket", shared + "/listd.sock"])
        #expect(taken.log.contains("\(shared)/listd.sock belongs to nobody (uid 65534)"), "\(taken.log)")
        _ = planted
    }

    @Test func aStateDirectoryOfAnotherUserIsRefused() throws {
        let scratch = try Scratch()
        let state = scratch.directory("state", mode: 0o700, owner: otherUID)
        let refused = try listdRefusing(["--state-directory", state, "--socket", scratch.path + "/listd.sock"])
        #expect(refused.status != 0)
        #expect(refused.log.contains("Refusing the state directory \(state): \(state) belongs to nobody (uid 65534)"), "\(refused.log)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).isEmpty)
    }

    @Test(arguments: ["listd.lock", "listd.sqlite3", "listd.sqlite3-wal"])
    func aLinkPlantedInTheStateDirectoryChangesNothing(name: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let victim = try victimFile(in: directory)
        let state = directory + "/state"
        mkdir(state, 0o700)
        symlink(victim, state + "/" + name)
        let refused = try listdRefusing(["--state-directory", state, "--socket", directory + "/listd.sock"])
        #expect(refused.status != 0)
        #expect(refused.log.contains("\(state)/\(name)") && refused.log.contains("symbolic link"), "\(refused.log)")
        #expect(modeAndContents(victim) == (0o600, "root's secret\n"))
    }

    @Test func clientsRefuseASocketOfAnotherUser() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        #expect(try listctl(daemon, ["ping"]).status == 0)
        chown(daemon.socketPath, otherUID, otherGID)
        let refused = try listctl(daemon, ["apply", "tasks", "-"], input: #"{"sections":[{"id":"s","items":["secret"]}]}"#)
        #expect(refused.status != 0)
        #expect(refused.err.contains("refusing to connect to \(daemon.socketPath): \(daemon.socketPath) belongs to nobody (uid 65534)"), "\(refused.err)")
        #expect(refused.err.contains("LISTD_SOCKET_OWNER"), "says how to trust it")
        let viewer = try runExecutable("listview", ["home", "--once"], daemon: daemon)
        #expect(viewer.status != 0 && viewer.err.contains("refusing to connect"), "\(viewer.err)")
        // Named, that user's listd is trusted.
        let trusted = try runProgram(
            binaryDirectory.appendingPathComponent("listctl"), ["ping"], daemon: daemon, extraEnvironment: ["LISTD_SOCKET_OWNER": "nobody"])
        #expect(trusted.status == 0, "\(trusted.err)")
        let unchecked = try LineConnection(path: daemon.socketPath, trustedOwners: nil)
        #expect(try unchecked.request(["cmd": "snapshot", "dataSource": "tasks"]).errorCode == "data-source-not-found", "the apply never reached it")
    }

    @Test func aBackupOrExportNeverWritesThroughAPlantedLink() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let victim = try victimFile(in: directory)
        let daemon = try Daemon(arguments: ["--demo", "--state-directory", directory + "/state"])
        for (command, file) in [(["backup"], "backup.sqlite3"), (["export", "--output"], "export.json")] {
            symlink(victim, directory + "/" + file)
            let written = try listctl(daemon, command + [directory + "/" + file])
            #expect(written.status == 0, "\(written.err)")
            var status = stat()
            #expect(lstat(directory + "/" + file, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG, "the link was replaced")
            #expect(modeAndContents(victim) == (0o600, "root's secret\n"))
        }
    }
}

/// A listening socket bound by the test (standing in for another user's fake listd).
private final class LineConnectionServer {
    let descriptor: Int32
    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (index, byte) in path.utf8.enumerated() { raw[index] = byte } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard bound == 0, listen(descriptor, 4) == 0 else { throw ClientError("cannot bind \(path): \(String(cString: strerror(errno)))") }
    }
    deinit { close(descriptor) }
}
