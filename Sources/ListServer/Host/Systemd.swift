import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// The parts of libsystemd listd uses: readiness and status notifications, the watchdog, socket
/// activation and the journal. Every call is harmless outside systemd (they do nothing).
public enum Systemd {
    /// Sends `state` (newline-separated `KEY=value` assignments) to `$NOTIFY_SOCKET`, if set.
    @discardableResult
    public static func notify(_ state: String) -> Bool {
        sd_notify(0, state) > 0
    }

    public static func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }

    public static func status(_ status: String) { notify("STATUS=\(status)") }

    public static func stopping(status: String) { notify("STOPPING=1\nSTATUS=\(status)") }

    /// `RELOADING=1` with the monotonic time systemd 253+ asks for.
    public static func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        notify("RELOADING=1\nMONOTONIC_USEC=\(microseconds)")
    }

    public static func watchdogPing() { notify("WATCHDOG=1") }

    /// The watchdog interval when the service manager expects pings (`WATCHDOG_USEC`), in microseconds.
    public static func watchdogInterval() -> UInt64? {
        var microseconds: UInt64 = 0
        return sd_watchdog_enabled(0, &microseconds) > 0 && microseconds > 0 ? microseconds : nil
    }

    /// The first listening socket passed by socket activation (`LISTEN_FDS`), if any.
    public static func activatedListener() -> Int32? {
        let count = sd_listen_fds(0)
        guard count >= 1 else { return nil }
        let descriptor = SD_LISTEN_FDS_START
        guard sd_is_socket(descriptor, AF_UNIX, Int32(SOCK_STREAM.rawValue), 1) > 0 else { return nil }
        return descriptor
    }

    /// Whether stderr is connected to the journal (`JOURNAL_STREAM` matches stderr).
    public static var stderrIsJournal: Bool {
        guard let stream = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// Sends one structured entry to the journal. `fields` are `KEY=value` strings; `MESSAGE=` and
    /// `PRIORITY=` should be among them.
    @discardableResult
    public static func journal(_ fields: [String]) -> Bool {
        var storage = fields.map { Array($0.utf8) }
        let count = storage.count
        return storage.withUnsafeMutableBufferPointer { buffers -> Bool in
            var vectors: [iovec] = []
            vectors.reserveCapacity(count)
            for index in 0..<count {
                buffers[index].withUnsafeMutableBytes { raw in
                    vectors.append(iovec(iov_base: raw.baseAddress, iov_len: raw.count))
                }
            }
            return sd_journal_sendv(&vectors, Int32(count)) == 0
        }
    }
}
