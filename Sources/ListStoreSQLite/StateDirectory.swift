import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// listd's state directory, locked for one process: created with mode 0700 when missing; `listd.lock`
/// in it is held with `flock` for the life of the process and names the PID that holds it.
public final class StateDirectory: @unchecked Sendable {
    public let path: String
    private var lockDescriptor: Int32

    /// The database file in the directory.
    public var databasePath: String { path + "/listd.sqlite3" }

    /// Creates the directory if needed and takes its lock; throws `locked` naming the holder's PID when
    /// another process has it.
    public init(path: String) throws(StorageError) {
        self.path = path
        try Self.makeDirectories(path)
        let lockPath = path + "/listd.lock"
        lockDescriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if lockDescriptor < 0 { throw StorageError(.io, "Cannot open \(lockPath): \(String(cString: strerror(errno))).") }
        if flock(lockDescriptor, LOCK_EX | LOCK_NB) != 0 {
            let reason = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(lockDescriptor, &buffer, buffer.count, 0)
            let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingWhitespace
            close(lockDescriptor)
            if reason == EWOULDBLOCK {
                throw StorageError(
                    .locked, "The state directory \(path) is in use by another listd (PID \(holder.isEmpty ? "unknown" : holder)).")
            }
            throw StorageError(.io, "Cannot lock \(lockPath): \(String(cString: strerror(reason))).")
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
