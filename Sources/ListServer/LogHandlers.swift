import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Logs to the journal with structured fields (`LISTD_*` for the metadata) when stderr is the journal,
/// else readable lines on stderr.
public struct ListdLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
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
        var line = "listd[\(getpid())]: \(event.level): \(event.message)"
        if !merged.isEmpty {
            line += " " + merged.sorted(by: { $0.key < $1.key }).map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += "\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
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
