import ListWire
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Logs to the journal with structured fields (`LISTD_*` for the metadata) when stderr is the journal,
/// else readable lines on stderr: a UTC timestamp, the level, the message and the metadata, with control
/// characters shown escaped (a name from a client cannot forge a line).
public struct ListdLogHandler: LogHandler {
    /// The level of every handler not given one of its own: set at start, changed by a reload (SIGHUP)
    /// that reads a new `logLevel`. An atomic: it is read before every log call.
    private static let sharedLevelIndex = Atomic<Int>(Logger.Level.allCases.firstIndex(of: .info)!)

    /// Sets the shared level; returns the one it replaces.
    @discardableResult
    public static func setSharedLevel(_ level: Logger.Level) -> Logger.Level {
        Logger.Level.allCases[sharedLevelIndex.exchange(Logger.Level.allCases.firstIndex(of: level)!, ordering: .relaxed)]
    }

    private var ownLevel: Logger.Level?
    public var logLevel: Logger.Level {
        get { ownLevel ?? Logger.Level.allCases[Self.sharedLevelIndex.load(ordering: .relaxed)] }
        set { ownLevel = newValue }
    }
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let useJournal: Bool

    public init(label: String, useJournal: Bool) {
        self.label = label
        self.useJournal = useJournal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if useJournal {
            var fields = ["MESSAGE=\(event.message)", "PRIORITY=\(Self.priority(event.level))", "SYSLOG_IDENTIFIER=listd"]
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
                let name = key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }
                fields.append("LISTD_\(String(name))=\(value)")
            }
            if Systemd.journal(fields) { return }
        }
        var line = "\(Self.timestamp()) listd[\(getpid())]: \(event.level): \(ControlCharacters.escaped(event.message.description))"
        if !merged.isEmpty {
            line += " " + merged.sorted(by: { $0.key < $1.key }).map { "\($0.key)=\(ControlCharacters.escaped("\($0.value)"))" }.joined(separator: " ")
        }
        line += "\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// The time now, in UTC, to the millisecond: `2026-11-23T20:58:01.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let fraction = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }

    private static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }
}
