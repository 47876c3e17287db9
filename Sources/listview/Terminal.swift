#if canImport(Glibc)
    import Glibc
#endif

/// The terminal as a full-screen view uses it: raw input, the alternate screen, a hidden cursor, and
/// the original state restored on every way out (normal exit, a fatal signal, a lost daemon).
enum Terminal {
    /// Whether frames use colours: not when `NO_COLOR` is set to anything (no-color.org); bold, dim,
    /// italic, underline and reverse video stay.
    static let colors: Bool = {
        guard let value = getenv("NO_COLOR") else { return true }
        return value.pointee == 0
    }()

    nonisolated(unsafe) private static var original = termios()
    nonisolated(unsafe) private static var active: Int32 = 0
    /// Set by SIGWINCH; the main loop clears it.
    nonisolated(unsafe) static var resized: Int32 = 0

    private static let enterSequence = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J"
    private static let leaveSequence = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"

    /// The window size in columns and rows (80×24 when it cannot be read).
    static var size: (width: Int, height: Int) {
        var window = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0 && window.ws_col > 0 && window.ws_row > 0 {
            return (Int(window.ws_col), Int(window.ws_row))
        }
        return (80, 24)
    }

    /// Raw mode (no echo, no line editing, no flow control; ^C still signals) and the alternate screen.
    static func enter() throws {
        guard isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 else {
            throw ListviewError("listview needs a terminal (or --once for plain output)")
        }
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { throw ListviewError("cannot read the terminal's settings") }
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        withUnsafeMutableBytes(of: &raw.c_cc) { characters in
            characters[Int(VMIN)] = 1
            characters[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        active = 1
        write(enterSequence)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT] {
            Glibc.signal(signal) { received in
                Terminal.restore()
                Glibc.signal(received, SIG_DFL)
                raise(received)
            }
        }
        Glibc.signal(SIGWINCH) { _ in Terminal.resized = 1 }
        // A parent may have left these blocked (the mask is inherited): they must reach the handlers.
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGWINCH] { sigaddset(&handled, signal) }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
    }

    /// Puts the terminal back as it was. Safe to call more than once and from a signal handler (only
    /// `write` and `tcsetattr`).
    static func restore() {
        guard active == 1 else { return }
        active = 0
        write(leaveSequence)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
    }

    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// A key press, decoded from the terminal's bytes.
enum Key: Equatable {
    case character(Character)
    case up, down, left, right, pageUp, pageDown, home, end, enter, escape

    /// Decodes the keys in `bytes`; an incomplete escape sequence at the end is left in `bytes`.
    static func decode(_ bytes: inout [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B {
                guard index + 1 < bytes.count else {
                    keys.append(.escape)
                    index += 1
                    continue
                }
                if bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O") {
                    var end = index + 2
                    while end < bytes.count && !(0x40...0x7E).contains(bytes[end]) { end += 1 }
                    guard end < bytes.count else { break }
                    let body = String(decoding: bytes[(index + 2)...end], as: UTF8.self)
                    switch body {
                    case "A": keys.append(.up)
                    case "B": keys.append(.down)
                    case "C": keys.append(.right)
                    case "D": keys.append(.left)
                    case "H", "1~", "7~": keys.append(.home)
                    case "F", "4~", "8~": keys.append(.end)
                    case "5~": keys.append(.pageUp)
                    case "6~": keys.append(.pageDown)
                    default: break
                    }
                    index = end + 1
                    continue
                }
                keys.append(.escape)
                index += 1
                continue
            }
            if byte == 0x0D || byte == 0x0A {
                keys.append(.enter)
                index += 1
                continue
            }
            // One UTF-8 character.
            let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
            guard index + length <= bytes.count else { break }
            if let character = String(decoding: bytes[index..<(index + length)], as: UTF8.self).first { keys.append(.character(character)) }
            index += length
        }
        bytes.removeFirst(min(index, bytes.count))
        return keys
    }
}

struct ListviewError: Error, CustomStringConvertible {
    let description: String
    /// listd's error code when the error is listd's refusal (`data-source-not-found`, …).
    let code: String?
    init(_ description: String, code: String? = nil) {
        self.description = description
        self.code = code
    }
}
