import FileSafety
import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// listd's state directory, locked for one process: created with mode 0700 when missing; `listd.lock`
/// in it is held with `flock` for the life of the process and names the PID that holds it.
///
/// Nothing in it is opened through a name another user could plant: the directory and those above it
/// must belong to root or listd's user, writable by no one else (`TrustedPath`), and the lock and the
/// database's files must be regular files of listd's user, never symbolic links.
public final class StateDirectory: @unchecked Sendable {
    /// The directory, resolved (no symbolic links).
    public let path: String
    private var lockDescriptor: Int32

    /// The database file in the directory.
    public var databasePath: String { path + "/listd.sqlite3" }

    /// Creates the directory if needed, checks it and takes its lock; throws `locked` naming the holder's
    /// PID when another process has it, and `io` naming the path when another user could change it.
    public init(path: String) throws(StorageError) {
        try Self.makeDirectories(path)
        do {
            self.path = try TrustedPath.checkDirectory(path, owners: [geteuid()], leaf: .privateOnly)
        } catch {
            throw StorageError(.io, "Refusing the state directory \(path): \(error).")
        }
        let lockPath = self.path + "/listd.lock"
        do {
            lockDescriptor = try TrustedPath.openFile(lockPath, flags: O_RDWR | O_CREAT)
        } catch {
            throw StorageError(.io, "\(error).")
        }
        if flock(lockDescriptor, LOCK_EX | LOCK_NB) != 0 {
            let reason = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(lockDescriptor, &buffer, buffer.count, 0)
            let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingWhitespace
            close(lockDescriptor)
            lockDescriptor = -1
            if reason == EWOULDBLOCK {
                throw StorageError(
                    .locked, "The state directory \(path) is in use by another listd (PID \(holder.isEmpty ? "unknown" : holder)).")
            }
            throw StorageError(.io, "Cannot lock \(lockPath): \(String(cString: strerror(reason))).")
        }
        // The database and SQLite's files beside it (opened by name by SQLite) are checked once the
        // directory is known to be listd's alone.
        for suffix in ["", "-wal", "-shm", "-journal"] {
            do {
                try TrustedPath.checkExisting(databasePath + suffix, kind: S_IFREG, owners: [geteuid()])
            } catch {
                close(lockDescriptor)
                lockDescriptor = -1
                throw StorageError(.io, "\(error).")
            }
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(lockDescriptor, 0)
        _ = pwrite(lockDescriptor, pid, pid.count, 0)
    }

    deinit { unlock() }

    /// Lets the lock go (the process exiting does the same).
    public func unlock() {
        guard lockDescriptor >= 0 else { return }
        close(lockDescriptor)
        lockDescriptor = -1
    }

    /// `mkdir -p` with mode 0700 for what it creates.
    private static func makeDirectories(_ path: String) throws(StorageError) {
        var status = stat()
        if stat(path, &status) == 0 {
            if (status.st_mode & S_IFMT) != S_IFDIR { throw StorageError(.io, "\(path) is not a directory.") }
            return
        }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try makeDirectories(String(path[..<slash]))
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw StorageError(.io, "Cannot create the state directory \(path): \(String(cString: strerror(errno))).")
        }
    }

    /// The default state directory: `$STATE_DIRECTORY` (set by systemd's `StateDirectory=`, the first
    /// of a colon-separated list), else `$XDG_STATE_HOME/listd`, else `~/.local/state/listd`.
    public static func defaultPath(environment: (String) -> String?) -> String? {
        if let systemd = environment("STATE_DIRECTORY"), let first = systemd.split(separator: ":").first, !first.isEmpty {
            return String(first)
        }
        if let xdg = environment("XDG_STATE_HOME"), xdg.hasPrefix("/") { return xdg + "/listd" }
        if let home = environment("HOME"), !home.isEmpty { return home + "/.local/state/listd" }
        return nil
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(self.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
