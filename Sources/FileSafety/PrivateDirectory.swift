#if canImport(Glibc)
    import Glibc
#endif

extension TrustedPath {
    /// Opens a directory of this process's user that no one else may write, creating it (and the
    /// directories missing above it) with mode 0700 when missing: it and every directory above it are
    /// checked as `checkDirectory` does (leaf `.privateOnly`), and what was opened (never through a
    /// symbolic link at its last name) must belong to this process's user and be writable by neither its
    /// group nor others. Returns the descriptor (close-on-exec) and the resolved path; files in it are then
    /// opened through the descriptor (`openFile(in:named:…)`).
    public static func openPrivateDirectory(_ path: String) throws(Refusal) -> (descriptor: Int32, path: String) {
        guard !path.isEmpty else { throw Refusal("no directory given") }
        try makeDirectories(path)
        let resolved = try checkDirectory(path, owners: [geteuid()], leaf: .privateOnly)
        let descriptor = open(resolved, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = errno == ELOOP || errno == ENOTDIR ? "it is not a directory (a symbolic link?)" : String(cString: strerror(errno))
            throw Refusal("cannot open \(path): \(reason)")
        }
        var status = stat()
        let problem: String? =
            fstat(descriptor, &status) != 0 ? "cannot read it: \(String(cString: strerror(errno)))"
            : (status.st_mode & S_IFMT) != S_IFDIR ? "it is not a directory"
            : status.st_uid != geteuid() ? "it belongs to \(userDescription(status.st_uid)), not to this process's user"
            : status.st_mode & 0o022 != 0 ? "its group or other users may write in it (mode \(String(status.st_mode & 0o7777, radix: 8)); chmod 700 it)"
            : nil
        if let problem {
            close(descriptor)
            throw Refusal("refusing the directory \(path): \(problem)")
        }
        return (descriptor, resolved)
    }

    /// Opens `name` in the directory open as `directory` without following a symbolic link (`openat`
    /// with `O_NOFOLLOW`), and checks what was opened: a regular file of this process's user with one
    /// name and, when `ownerOnly`, no permission for its group or others. `shownAs` names it in messages.
    ///
    /// Returns `nil` when nothing is there (without `O_CREAT`), or when something already is (with
    /// `O_CREAT | O_EXCL`: another process made it first). A file created here gets `mode`.
    public static func openFile(in directory: Int32, named name: String, shownAs path: String, flags: Int32, mode: mode_t = 0o600, ownerOnly: Bool = true)
        throws(Refusal) -> Int32?
    {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { throw Refusal("\(path): not a file name") }
        let descriptor = openat(directory, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT where flags & O_CREAT == 0: return nil
            case EEXIST where flags & O_CREAT != 0 && flags & O_EXCL != 0: return nil
            case ELOOP: throw Refusal("refusing \(path): it is a symbolic link (remove it: the file must be a regular file of its own)")
            default: throw Refusal("cannot open \(path): \(String(cString: strerror(errno)))")
            }
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            throw Refusal("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let problem: String? =
            (status.st_mode & S_IFMT) != S_IFREG ? "it is not a regular file"
            : status.st_uid != geteuid() ? "it belongs to \(userDescription(status.st_uid)), not to this process's user"
            : status.st_nlink > 1 ? "it has \(status.st_nlink) names (hard links)"
            : ownerOnly && status.st_mode & 0o077 != 0
                ? "other users may read or write it (mode \(String(status.st_mode & 0o777, radix: 8)); chmod 600 it)" : nil
        if let problem {
            close(descriptor)
            throw Refusal("refusing \(path): \(problem)")
        }
        return descriptor
    }

    /// `mkdir -p` with mode 0700 for what it creates, and only under a directory checked first: the
    /// deepest one that exists must pass `checkDirectory` (it and every directory above it, through any
    /// symbolic link, this user's or root's and writable by no one else unless sticky), so nothing is
    /// created where another user could redirect it.
    private static func makeDirectories(_ path: String) throws(Refusal) {
        var existing = path
        var missing: [String] = []
        var status = stat()
        while stat(existing, &status) != 0 {
            guard errno == ENOENT else { throw Refusal("cannot read \(existing): \(String(cString: strerror(errno)))") }
            guard let slash = existing.lastIndex(of: "/") else {
                missing.append(existing)
                existing = "."
                continue
            }
            missing.append(String(existing[existing.index(after: slash)...]))
            existing = slash == existing.startIndex ? "/" : String(existing[..<slash])
        }
        guard (status.st_mode & S_IFMT) == S_IFDIR else { throw Refusal("\(existing) is not a directory") }
        guard !missing.isEmpty else { return }
        var made = try checkDirectory(existing, owners: [geteuid()], leaf: .stickyAllowed)
        for name in missing.reversed() where !name.isEmpty && name != "." {
            guard name != ".." else { throw Refusal("\(path): \"..\" names a directory that is not there yet") }
            made = made == "/" ? "/" + name : made + "/" + name
            if mkdir(made, 0o700) != 0 && errno != EEXIST {
                throw Refusal("cannot create the directory \(made): \(String(cString: strerror(errno)))")
            }
        }
    }
}
