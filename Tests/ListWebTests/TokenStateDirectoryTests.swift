import Foundation
import ListWeb
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("listweb: the token kept in its state directory, and its port")
struct TokenStateDirectoryTests {
    func temporaryDirectory() throws -> String {
        var template = Array("/tmp/listweb-state.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return String(cString: made)
    }

    func mode(_ path: String) -> mode_t {
        var status = stat()
        lstat(path, &status)
        return status.st_mode & 0o7777
    }

    @Test func theDefaultDirectory() {
        #expect(TokenStateDirectory.defaultPath(environment: ["STATE_DIRECTORY": "/var/lib/listweb:/other", "HOME": "/home/a"]) == "/var/lib/listweb")
        #expect(TokenStateDirectory.defaultPath(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/a"]) == "/x/state/listweb")
        #expect(TokenStateDirectory.defaultPath(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/a"]) == "/home/a/.local/state/listweb")
        #expect(TokenStateDirectory.defaultPath(environment: [:]) == nil)
    }

    /// Made on the first call (the directory 0700, the file 0600), read on the next ones.
    @Test func theTokenIsMadeOnceAndReadAfter() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/a/b"
        let first = try TokenStateDirectory.token(in: directory)
        #expect(first.created && first.file == directory + "/token" && first.token.value.count == 64)
        #expect(mode(root + "/a") == 0o700 && mode(directory) == 0o700 && mode(directory + "/token") == 0o600)
        let second = try TokenStateDirectory.token(in: directory)
        #expect(!second.created && second.token == first.token)
        // Written by hand (a token of one's choosing) is fine too.
        try "hand-made-token-0123456789\n".write(toFile: directory + "/token", atomically: false, encoding: .utf8)
        #expect(try TokenStateDirectory.token(in: directory).token.value == "hand-made-token-0123456789")
    }

    /// Several starts at once with the same directory agree on one token.
    @Test func concurrentStartsAgree() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try TokenStateDirectory.token(in: root + "/state").token.value } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
    }

    @Test func unsafeFilesAndDirectoriesAreRefused() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/state"
        _ = try TokenStateDirectory.token(in: directory)
        let file = directory + "/token"
        func refusal() -> String? {
            do {
                _ = try TokenStateDirectory.token(in: directory)
                return nil
            } catch {
                return "\(error)"
            }
        }
        chmod(file, 0o640)
        #expect(refusal()?.contains("refusing \(file): other users may read or write it (mode 640; chmod 600 it)") == true, "\(refusal() ?? "accepted")")
        chmod(file, 0o600)
        // A symbolic link, even to a good file, is not followed.
        try FileManager.default.moveItem(atPath: file, toPath: root + "/moved")
        symlink(root + "/moved", file)
        #expect(refusal()?.contains("refusing \(file): it is a symbolic link") == true, "\(refusal() ?? "accepted")")
        unlink(file)
        // A second name (a hard link) is refused.
        link(root + "/moved", file)
        #expect(refusal()?.contains("hard links") == true, "\(refusal() ?? "accepted")")
        unlink(file)
        // A directory others may write in.
        chmod(directory, 0o777)
        #expect(refusal()?.contains("can be written by other users") == true, "\(refusal() ?? "accepted")")
        chmod(directory, 0o700)
        // Another user's file, or directory.
        if geteuid() == 0 {
            try "another-users-token-0123456789\n".write(toFile: file, atomically: false, encoding: .utf8)
            chmod(file, 0o600)
            chown(file, 65534, 65534)
            #expect(refusal()?.contains("it belongs to") == true, "\(refusal() ?? "accepted")")
            unlink(file)
            chown(directory, 65534, 65534)
            #expect(refusal()?.contains("\(directory) belongs to") == true, "\(refusal() ?? "accepted")")
        }
        // An empty file (a start that stopped while making it) says what to do.
        chown(directory, geteuid(), getegid())
        let empty = open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        close(empty)
        #expect(refusal()?.contains("is empty") == true, "\(refusal() ?? "accepted")")
    }

    /// Nothing is created under a directory another user may write in, nor through another user's
    /// symbolic link; a link of this user's to a private directory of its own is fine.
    @Test func missingDirectoriesAreMadeOnlyWhereNoOneElseWrites() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let open = root + "/open"
        mkdir(open, 0o700)
        chmod(open, 0o777)
        #expect(throws: TokenFileError.self) { try TokenStateDirectory.token(in: open + "/deeper/state") }
        #expect(!FileManager.default.fileExists(atPath: open + "/deeper"), "made a directory under one others may write in")
        // Relative to a link of this user's to its own private directory.
        mkdir(root + "/private", 0o700)
        symlink(root + "/private", root + "/link")
        let made = try TokenStateDirectory.token(in: root + "/link/listweb")
        #expect(made.created && made.file == root + "/private/listweb/token")
        #expect(mode(root + "/private/listweb") == 0o700)
        if geteuid() == 0 {
            // Another user's directory on the way.
            mkdir(root + "/theirs", 0o755)
            chown(root + "/theirs", 65534, 65534)
            #expect(throws: TokenFileError.self) { try TokenStateDirectory.token(in: root + "/theirs/listweb") }
            #expect(!FileManager.default.fileExists(atPath: root + "/theirs/listweb"))
        }
    }

    /// A taken port gives way to the next free one; a free one is kept; 0 stays 0.
    @Test func aTakenPortGivesWay() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        #expect(listen(descriptor, 1) == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        #expect(!PortChoice.isFree(host: "127.0.0.1", port: port))
        let chosen = PortChoice.choose(host: "127.0.0.1", preferred: port)
        #expect(chosen != port)
        #expect(chosen == 0 || (port + 1...port + PortChoice.nextPortsTried).contains(chosen))
        #expect(PortChoice.choose(host: "127.0.0.1", preferred: 0) == 0)
    }
}
