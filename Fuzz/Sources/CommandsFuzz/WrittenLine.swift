/// What a line listd wrote is, found by checking it as JSON in one pass without building a tree (no
/// allocation: cheap enough for every reply): a success reply (`"ok":true`), an error reply
/// (`"ok":false` with `"error":{"code":"…",…}`), an event (`"event":"…"` and no `ok`), or malformed,
/// with why. Strict JSON: UTF-8, no control characters in strings, valid escapes and numbers, nothing
/// after the value, at most `maximumDepth` levels.
enum WrittenLine: Equatable {
    case success
    case failure
    case event
    case malformed(String)

    static let maximumDepth = 512

    init(_ line: [UInt8]) {
        self = line.withUnsafeBytes { bytes in
            var scanner = Scanner(bytes: bytes)
            do {
                let top = try scanner.topLevelObject()
                switch (top.ok, top.hasEvent) {
                case (true?, false): return .success
                case (false?, false): return top.hasErrorCode ? .failure : .malformed("an error reply without a string error.code")
                case (nil, true): return .event
                default: return .malformed("neither a reply (ok a boolean) nor an event (event a string)")
                }
            } catch let failure as Failure {
                return .malformed("not JSON: \(failure.reason) at byte \(scanner.index)")
            } catch {
                return .malformed("not JSON")
            }
        }
    }

    private struct Failure: Error { let reason: String }

    /// The reply's members that classify it.
    private struct TopLevel {
        var ok: Bool?
        var hasEvent = false
        var hasErrorCode = false
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        private mutating func expect(_ byte: UInt8) throws(Failure) {
            guard current == byte else { throw Failure(reason: "expected \(Character(Unicode.Scalar(byte)))") }
            index += 1
        }

        mutating func topLevelObject() throws(Failure) -> TopLevel {
            var top = TopLevel()
            skipWhitespace()
            try expect(UInt8(ascii: "{"))
            try members(depth: 1) { (scanner: inout Scanner, key: Range<Int>) throws(Failure) in
                switch scanner.name(key) {
                case .ok?:
                    let start = scanner.index
                    try scanner.value(depth: 1)
                    top.ok = scanner.literal(start..<scanner.index)
                case .event?:
                    top.hasEvent = scanner.current == UInt8(ascii: "\"")
                    try scanner.value(depth: 1)
                case .error?:
                    guard scanner.current == UInt8(ascii: "{") else { return try scanner.value(depth: 1) }
                    scanner.index += 1
                    try scanner.members(depth: 2) { (scanner: inout Scanner, key: Range<Int>) throws(Failure) in
                        if scanner.name(key) == .code, scanner.current == UInt8(ascii: "\"") { top.hasErrorCode = true }
                        try scanner.value(depth: 2)
                    }
                default: try scanner.value(depth: 1)
                }
            }
            skipWhitespace()
            guard index == bytes.count else { throw Failure(reason: "bytes after the value") }
            return top
        }

        /// The member names the classification looks at.
        private enum Name: CaseIterable {
            case ok, event, error, code
            var spelling: StaticString {
                switch self {
                case .ok: "ok"
                case .event: "event"
                case .error: "error"
                case .code: "code"
                }
            }
        }

        /// Which of `Name` the raw key is, compared without allocating.
        private func name(_ key: Range<Int>) -> Name? {
            Name.allCases.first { name in
                name.spelling.utf8CodeUnitCount == key.count && (0..<key.count).allSatisfy { bytes[key.lowerBound + $0] == name.spelling.utf8Start[$0] }
            }
        }

        private func literal(_ range: Range<Int>) -> Bool? {
            if range.count == 4, bytes[range.lowerBound] == UInt8(ascii: "t") { return true }
            if range.count == 5, bytes[range.lowerBound] == UInt8(ascii: "f") { return false }
            return nil
        }

        /// An object's members after its `{`, through its `}`; `member` reads each value (the index is at it).
        private mutating func members(depth: Int, _ member: (inout Scanner, Range<Int>) throws(Failure) -> Void) throws(Failure) {
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                let key = try string()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                try member(&self, key)
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return
            }
        }

        private mutating func value(depth: Int) throws(Failure) {
            guard depth < WrittenLine.maximumDepth else { throw Failure(reason: "nested too deep") }
            switch current {
            case UInt8(ascii: "{")?:
                index += 1
                try members(depth: depth + 1) { (scanner: inout Scanner, _: Range<Int>) throws(Failure) in try scanner.value(depth: depth + 1) }
            case UInt8(ascii: "[")?:
                index += 1
                skipWhitespace()
                if current == UInt8(ascii: "]") {
                    index += 1
                    return
                }
                while true {
                    skipWhitespace()
                    try value(depth: depth + 1)
                    skipWhitespace()
                    if current == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(UInt8(ascii: "]"))
                    return
                }
            case UInt8(ascii: "\"")?: _ = try string()
            case UInt8(ascii: "t")?: try word("true")
            case UInt8(ascii: "f")?: try word("false")
            case UInt8(ascii: "n")?: try word("null")
            default: try number()
            }
        }

        private mutating func word(_ text: StaticString) throws(Failure) {
            for offset in 0..<text.utf8CodeUnitCount {
                guard current == text.utf8Start[offset] else { throw Failure(reason: "a misspelt literal") }
                index += 1
            }
        }

        private mutating func digits() -> Int {
            let start = index
            while let byte = current, byte >= 0x30, byte <= 0x39 { index += 1 }
            return index - start
        }

        private mutating func number() throws(Failure) {
            if current == UInt8(ascii: "-") { index += 1 }
            let start = index
            guard digits() > 0 else { throw Failure(reason: "a value expected") }
            if bytes[start] == 0x30, index - start > 1 { throw Failure(reason: "a number with a leading zero") }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw Failure(reason: "a fraction without digits") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw Failure(reason: "an exponent without digits") }
            }
        }

        /// A string (at its `"`); returns the range of its raw content.
        private mutating func string() throws(Failure) -> Range<Int> {
            try expect(UInt8(ascii: "\""))
            let start = index
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return start..<index - 1
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { break }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"),
                        UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let hex = current, (hex >= 0x30 && hex <= 0x39) || ((hex | 0x20) >= 0x61 && (hex | 0x20) <= 0x66) else {
                                throw Failure(reason: "a \\u escape without four hex digits")
                            }
                            index += 1
                        }
                    default: throw Failure(reason: "an invalid escape")
                    }
                case 0..<0x20: throw Failure(reason: "a control character in a string")
                case 0..<0x80: index += 1
                default: try scalar()
                }
            }
            throw Failure(reason: "an unterminated string")
        }

        /// One multi-byte UTF-8 scalar, well-formed (no overlong forms, surrogates or values past U+10FFFF).
        private mutating func scalar() throws(Failure) {
            let lead = bytes[index]
            let (count, low, high): (Int, UInt8, UInt8)
            switch lead {
            case 0xC2...0xDF: (count, low, high) = (1, 0x80, 0xBF)
            case 0xE0: (count, low, high) = (2, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE, 0xEF: (count, low, high) = (2, 0x80, 0xBF)
            case 0xED: (count, low, high) = (2, 0x80, 0x9F)
            case 0xF0: (count, low, high) = (3, 0x90, 0xBF)
            case 0xF1...0xF3: (count, low, high) = (3, 0x80, 0xBF)
            case 0xF4: (count, low, high) = (3, 0x80, 0x8F)
            default: throw Failure(reason: "invalid UTF-8")
            }
            index += 1
            for offset in 0..<count {
                guard let byte = current, byte >= (offset == 0 ? low : 0x80), byte <= (offset == 0 ? high : 0xBF) else {
                    throw Failure(reason: "invalid UTF-8")
                }
                index += 1
            }
        }
    }
}
