import FileSafety
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The user that stands for another local user here (the tests that give it files run as root).
private let nobody: UInt32 = 65534
private let isRoot = getuid() == 0

/// A fresh directory of this process's user under /tmp (mode 0700), removed by the caller.
private func temporaryDirectory() throws -> String {
    var template = Array("/tmp/listd-safety.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TrustedPath.Refusal("mkdtemp failed") }
    return String(cString: made)
}

private func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

private func mode(_ path: String) -> mode_t {
    var status = stat()
    lstat(path, &status)
    return status.st_mode & 0o7777
}

@Suite("Trusted paths: directories, files and sockets no other user can change")
struct TrustedPathTests {
    let me: Set<UInt32> = [geteuid()]

    @Test func aPrivateDirectoryUnderTmpIsTrustedAndResolved() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        mkdir(directory + "/inner", 0o755)
        symlink(directory + "/inner", directory + "/link")
        #expect(try TrustedPath.checkDirectory(directory + "/link", owners: me, leaf: .privateOnly) == directory + "/inner")
        #expect(try TrustedPath.checkDirectory(directory + "/inner/../inner", owners: me, leaf: .stickyAllowed) == directory + "/inner")
    }

    @Test func aDirectoryOthersCanWriteIsRefusedUnlessSticky() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let open = directory + "/open"
        mkdir(open, 0o700)
        chmod(open, 0o777)
        #expect(throws: TrustedPath.Refusal("\(open) can be written by other users (mode 0777, not sticky): another user could replace what listd creates there; use a directory only its owner can write")) {
            try TrustedPath.checkDirectory(open, owners: me, leaf: .stickyAllowed)
        }
        // Below it too: whoever can write a directory can swap what is under it.
        mkdir(open + "/mine", 0o700)
        #expect(throws: TrustedPath.Refusal.self) { try TrustedPath.checkDirectory(open + "/mine", owners: me, leaf: .stickyAllowed) }
        chmod(open, 0o1777)
        #expect(try TrustedPath.checkDirectory(open, owners: me, leaf: .stickyAllowed) == open)
        #expect(try TrustedPath.checkDirectory(open + "/mine", owners: me, leaf: .privateOnly) == open + "/mine")
        #expect(throws: TrustedPath.Refusal.self) { try TrustedPath.checkDirectory(open, owners: me, leaf: .privateOnly) }
        chmod(open, 0o770)
        if isRoot {
            // Group write by another group is write by others; by the owner's private group it is not.
            chown(open, 0, nobody)
            #expect(throws: TrustedPath.Refusal.self) { try TrustedPath.checkDirectory(open, owners: me, leaf: .stickyAllowed) }
            chown(open, 0, 0)
            if TrustedPath.isPrivateGroup(0, of: 0) {
                #expect(try TrustedPath.checkDirectory(open, owners: me, leaf: .privateOnly) == open)
            }
        }
    }

    @Test(.enabled(if: isRoot, "gives files to another user")) func aDirectoryOfAnotherUserIsRefusedWithItsOwner() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let theirs = directory + "/theirs"
        mkdir(theirs, 0o755)
        chown(theirs, nobody, nobody)
        #expect(throws: TrustedPath.Refusal("\(theirs) belongs to nobody (uid 65534), not to root: another user could replace it")) {
            try TrustedPath.checkDirectory(theirs, owners: [0], leaf: .stickyAllowed)
        }
        #expect(try TrustedPath.checkDirectory(theirs, owners: [nobody], leaf: .stickyAllowed) == theirs, "unless that user is trusted")
    }

    @Test func aPlantedLinkIsNeverOpenedOrWrittenThrough() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let victim = directory + "/victim"
        try "precious\n".write(toFile: victim, atomically: false, encoding: .utf8)
        chmod(victim, 0o600)
        symlink(victim, directory + "/listd.lock")
        #expect(throws: TrustedPath.Refusal("cannot open \(directory)/listd.lock: it is a symbolic link")) {
            try TrustedPath.openFile(directory + "/listd.lock", flags: O_RDWR | O_CREAT | O_TRUNC)
        }
        #expect(throws: TrustedPath.Refusal("\(directory)/listd.lock is a symbolic link, not a regular file: refusing to use it")) {
            try TrustedPath.checkExisting(directory + "/listd.lock", kind: S_IFREG, owners: me)
        }
        link(victim, directory + "/hard")
        #expect(throws: TrustedPath.Refusal("refusing to use \(directory)/hard: it has 2 names (hard links)")) {
            try TrustedPath.openFile(directory + "/hard", flags: O_RDWR)
        }
        // A write replaces the link itself; the file it pointed at is as it was.
        symlink(victim, directory + "/export.json")
        try TrustedPath.replaceFile(directory + "/export.json", with: Array("new\n".utf8))
        #expect(contents(directory + "/export.json") == "new\n")
        #expect(contents(victim) == "precious\n" && mode(victim) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["export.json", "hard", "listd.lock", "victim"])
    }

    @Test func aFileOpenedIsCreatedOrCheckedAsThisUsers() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let descriptor = try TrustedPath.openFile(directory + "/listd.lock", flags: O_RDWR | O_CREAT)
        close(descriptor)
        #expect(mode(directory + "/listd.lock") == 0o600)
        #expect(try TrustedPath.checkExisting(directory + "/listd.lock", kind: S_IFREG, owners: me))
        #expect(try !TrustedPath.checkExisting(directory + "/absent", kind: S_IFREG, owners: me))
    }

    @Test(.enabled(if: isRoot, "gives files to another user")) func aSocketOfAnotherUserIsRefused() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/listd.sock"
        #expect(try TrustedPath.checkSocket(path, owners: me) == nil, "nothing there")
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (index, byte) in path.utf8.enumerated() { raw[index] = byte } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        try #require(bound == 0)
        symlink(path, directory + "/link.sock")
        #expect(try TrustedPath.checkSocket(directory + "/link.sock", owners: me) == path, "a link is followed to the socket it names, which is checked")
        chown(path, nobody, nobody)
        #expect(throws: TrustedPath.Refusal("\(path) belongs to nobody (uid 65534), not to root: another user could replace it")) {
            try TrustedPath.checkSocket(directory + "/link.sock", owners: me)
        }
        #expect(try TrustedPath.checkSocket(path, owners: [nobody]) == path)
    }
}
