#if canImport(Glibc)
    import Glibc
#endif

/// Whether another user could change what a path names: the checks listd makes before it creates its
/// socket or opens its state, and that clients make before they trust a socket.
///
/// A directory is *trusted* when it and every directory above it belong to root or to one of the trusted
/// owners and none of them can be written by anyone else, except through the sticky bit (as `/tmp`): in a
/// sticky directory another user may add names but never rename or remove ours, so a trusted entry in it
/// stays put. Under a trusted directory no other user can plant a symbolic link or swap a name between
/// a check and its use.
public enum TrustedPath {
    /// Why a path is refused: names the path and what is wrong with it.
    public struct Refusal: Error, CustomStringConvertible, Equatable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// What the last directory of a path may be.
    public enum Leaf: Sendable {
        /// Writable by others only with the sticky bit (a socket's directory may be `/tmp` itself).
        case stickyAllowed
        /// Writable by no one else at all (a state directory: its files are opened by name).
        case privateOnly
    }

    /// Resolves `directory` (symbolic links, `.` and `..`) and checks it and every directory above it;
    /// returns the resolved path.
    ///
    /// - Parameter owners: the users trusted besides root.
    public static func checkDirectory(_ directory: String, owners: Set<UInt32>, leaf: Leaf) throws(Refusal) -> String {
        guard let resolvedPointer = realpath(directory.isEmpty ? "." : directory, nil) else {
            throw Refusal("cannot resolve \(directory): \(String(cString: strerror(errno)))")
        }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        let components = resolved.split(separator: "/")
        var prefixes = ["/"]
        for index in components.indices { prefixes.append("/" + components[...index].joined(separator: "/")) }
        for (position, path) in prefixes.enumerated() {
            var status = stat()
            guard lstat(path, &status) == 0 else { throw Refusal("cannot read \(path): \(String(cString: strerror(errno)))") }
            guard (status.st_mode & S_IFMT) == S_IFDIR else { throw Refusal("\(path) is not a directory") }
            try checkOwner(of: path, status, owners: owners)
            // Group write is no one else's when the group is the owner's own private group (umask 002).
            let groupWritable = status.st_mode & S_IWGRP != 0 && !isPrivateGroup(status.st_gid, of: status.st_uid)
            let writableByOthers = groupWritable || status.st_mode & S_IWOTH != 0
            guard writableByOthers else { continue }
            let sticky = status.st_mode & S_ISVTX != 0
            let isLeaf = position == prefixes.count - 1
            if !sticky || (isLeaf && leaf == .privateOnly) {
                throw Refusal(
                    "\(path) can be written by other users (mode \(octal(status.st_mode & 0o7777))\(sticky ? "" : ", not sticky")): "
                        + "another user could replace what listd creates there; use a directory only its owner can write")
            }
        }
        return resolved
    }

    /// Checks an existing entry (not following a symbolic link): a file of `kind` belonging to root or
    /// one of `owners`, with one name. Returns false when nothing is there.
    @discardableResult
    public static func checkExisting(_ path: String, kind: mode_t, owners: Set<UInt32>) throws(Refusal) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return false }
            throw Refusal("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (status.st_mode & S_IFMT) == kind else {
            throw Refusal("\(path) is \(describe(status.st_mode)), not \(describe(kind)): refusing to use it")
        }
        try checkOwner(of: path, status, owners: owners)
        if kind == S_IFREG && status.st_nlink > 1 {
            throw Refusal("\(path) has \(status.st_nlink) names (hard links): refusing to use it")
        }
        return true
    }

    /// Resolves a socket's path (symbolic links included) and checks the directories that hold it and the
    /// socket itself as a client does; returns the resolved path, which is the one to connect to (a link
    /// swapped after the check then changes nothing), or `nil` when nothing is there.
    public static func checkSocket(_ path: String, owners: Set<UInt32>) throws(Refusal) -> String? {
        guard let resolvedPointer = realpath(path, nil) else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Refusal("cannot resolve \(path): \(String(cString: strerror(errno)))")
        }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        _ = try checkDirectory(split(resolved).directory, owners: owners, leaf: .stickyAllowed)
        guard try checkExisting(resolved, kind: S_IFSOCK, owners: owners) else { return nil }
        return resolved
    }

    /// Opens (creating it when missing, mode `mode`) a regular file in a trusted directory without
    /// following a symbolic link, and checks what was opened: a regular file of this process's user with
    /// one name. Returns the descriptor (close-on-exec).
    public static func openFile(_ path: String, flags: Int32, mode: mode_t = 0o600) throws(Refusal) -> Int32 {
        let descriptor = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
            throw Refusal("cannot open \(path): \(reason)")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            throw Refusal("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let problem: String? =
            (status.st_mode & S_IFMT) != S_IFREG ? "it is \(describe(status.st_mode)), not a regular file"
            : status.st_uid != geteuid() ? "it belongs to \(userDescription(status.st_uid)), not to this process's user"
            : status.st_nlink > 1 ? "it has \(status.st_nlink) names (hard links)" : nil
        if let problem {
            close(descriptor)
            throw Refusal("refusing to use \(path): \(problem)")
        }
        return descriptor
    }

    /// Writes `bytes` to `path` whole or not at all: into a new file of its own next to it (created
    /// exclusively, so never through a planted name), synced, then renamed over `path` (a rename replaces
    /// a symbolic link there; it never writes through one).
    public static func replaceFile(_ path: String, with bytes: [UInt8], mode: mode_t = 0o600) throws(Refusal) {
        var template = Array((path + ".partial-XXXXXX").utf8CString)
        // mkstemp creates the file exclusively (O_EXCL), mode 0600, under a name no one else chose.
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw Refusal("cannot create a file next to \(path): \(String(cString: strerror(errno)))") }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let partial = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var offset = 0
        var failure: String?
        while offset < bytes.count, failure == nil {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno != EINTR { failure = "cannot write \(partial): \(String(cString: strerror(errno)))" }
            } else {
                offset += written
            }
        }
        if failure == nil && fchmod(descriptor, mode) != 0 { failure = "cannot set the mode of \(partial): \(String(cString: strerror(errno)))" }
        if failure == nil && fsync(descriptor) != 0 { failure = "cannot write \(partial): \(String(cString: strerror(errno)))" }
        close(descriptor)
        if failure == nil && rename(partial, path) != 0 { failure = "cannot write \(path): \(String(cString: strerror(errno)))" }
        if let failure {
            unlink(partial)
            throw Refusal(failure)
        }
    }

    /// The directory part and the name of `path` (`.` for a bare name).
    public static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    /// A user's name and uid for messages ("alice (uid 1000)").
    public static func userDescription(_ uid: UInt32) -> String {
        UserDirectory.userName(of: uid).map { "\($0) (uid \(uid))" } ?? "uid \(uid)"
    }

    /// Whether `gid` is `uid`'s user private group: its primary group, named as the user, with no other
    /// members listed (the scheme under which a umask of 002 is the default).
    public static func isPrivateGroup(_ gid: UInt32, of uid: UInt32) -> Bool {
        guard let name = UserDirectory.userName(of: uid), UserDirectory.user(named: name)?.gid == gid,
            let group = UserDirectory.group(id: gid)
        else { return false }
        return group.name == name && !group.hasMembers
    }

    private static func checkOwner(of path: String, _ status: stat, owners: Set<UInt32>) throws(Refusal) {
        guard status.st_uid != 0 && !owners.contains(status.st_uid) else { return }
        let trusted = (["root"] + owners.sorted().filter { $0 != 0 }.map(userDescription)).joined(separator: " or ")
        throw Refusal("\(path) belongs to \(userDescription(status.st_uid)), not to \(trusted): another user could replace it")
    }

    private static func describe(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFSOCK: "a socket"
        case S_IFIFO: "a FIFO"
        default: "a special file"
        }
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
