#if canImport(Glibc)
    import Glibc
#endif

/// Received bytes split into lines, in time linear in the bytes received.
///
/// Bytes are appended as they arrive, in chunks of any size; `nextLine()` hands out each complete line
/// once. The search for a newline never looks at a byte twice: it remembers how far it got, so a line of
/// n bytes that arrives in k chunks costs O(n), not O(n·k).
///
/// ```
/// append("{\"ok\":tr")   →  nextLine() == nil       (8 bytes scanned)
/// append("ue}\n{\"")     →  nextLine() == {"ok":true}  (only the 6 new bytes scanned)
///                           nextLine() == nil       (the 2 bytes after the newline scanned once)
/// ```
///
/// Lines already handed out are dropped from the front once they make up at least half of the
/// storage, so compaction moves each byte a bounded number of times (amortised O(1) per byte).
public struct LineBuffer {
    private var storage: [UInt8] = []
    /// Where the next line starts.
    private var lineStart = 0
    /// Bytes in `lineStart..<scannedUpTo` are known not to be a newline.
    private var scannedUpTo = 0
    /// The newline ending the pending line, once found.
    private var newline: Int?

    /// Every byte the newline search has looked at since this buffer was made (for tests of linearity).
    public private(set) var scannedByteCount = 0

    public init() {}

    /// The bytes received and not yet handed out as a line.
    public var pendingByteCount: Int { storage.count - lineStart }

    /// The bytes held, handed-out lines not yet dropped included.
    var storedByteCount: Int { storage.count }

    /// Whether a complete line is waiting.
    ///
    /// - Complexity: O(new bytes since the last search); O(1) when nothing new arrived.
    public mutating func hasLine() -> Bool {
        findNewline() != nil
    }

    /// Adds received bytes.
    ///
    /// - Complexity: amortised O(`bytes.count`).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthwhile()
        storage.append(contentsOf: bytes.bindMemory(to: UInt8.self))
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete line without its newline, or `nil` when no whole line has arrived yet.
    ///
    /// - Complexity: O(new bytes since the last search + the line's length, for the copy handed out).
    public mutating func nextLine() -> [UInt8]? {
        guard let end = findNewline() else { return nil }
        let line = Array(storage[lineStart..<end])
        lineStart = end + 1
        scannedUpTo = lineStart
        newline = nil
        return line
    }

    private mutating func findNewline() -> Int? {
        if let newline { return newline }
        guard scannedUpTo < storage.count else { return nil }
        let from = scannedUpTo
        let found: Int? = storage.withUnsafeBytes { raw in
            let base = raw.baseAddress! + from
            guard let hit = memchr(base, 0x0A, raw.count - from) else { return nil }
            return from + (UnsafeRawPointer(hit) - UnsafeRawPointer(base))
        }
        if let found {
            scannedByteCount += found - from + 1
            scannedUpTo = found + 1
            newline = found
        } else {
            scannedByteCount += storage.count - from
            scannedUpTo = storage.count
        }
        return found
    }

    /// Drops the handed-out prefix when it is at least half of the storage (and worth a move).
    private mutating func compactIfWorthwhile() {
        guard lineStart > 0 else { return }
        if lineStart == storage.count {
            storage.removeAll(keepingCapacity: true)
        } else if lineStart >= 65_536 && lineStart * 2 >= storage.count {
            storage.removeSubrange(0..<lineStart)
        } else {
            return
        }
        scannedUpTo -= lineStart
        if let found = newline { newline = found - lineStart }
        lineStart = 0
    }
}
