/// A shell-style pattern for data source names: `*` matches any run of characters (also none), `?`
/// one character, `\` makes the next character literal; everything else matches itself.
///
/// Matching takes time linear in the name times the number of `*` (no backtracking blow-up).
public struct GlobPattern: Sendable, Equatable, Hashable, CustomStringConvertible {
    private enum Token: Sendable, Equatable, Hashable {
        case literal(Character)
        case any
        case star
    }

    /// The pattern as written.
    public let description: String
    private let tokens: [Token]

    public init(_ pattern: String) {
        description = pattern
        var tokens: [Token] = []
        var escaped = false
        for character in pattern {
            if escaped {
                tokens.append(.literal(character))
                escaped = false
                continue
            }
            switch character {
            case "\\": escaped = true
            case "*": if tokens.last != .star { tokens.append(.star) }
            case "?": tokens.append(.any)
            default: tokens.append(.literal(character))
            }
        }
        if escaped { tokens.append(.literal("\\")) }
        self.tokens = tokens
    }

    /// Whether the whole of `name` matches.
    public func matches(_ name: String) -> Bool {
        let characters = Array(name)
        var token = 0
        var position = 0
        // The last `*` seen and the position in `name` it is currently stretched to.
        var starToken: Int?
        var starPosition = 0
        while position < characters.count {
            if token < tokens.count {
                switch tokens[token] {
                case .star:
                    starToken = token
                    starPosition = position
                    token += 1
                    continue
                case .any:
                    token += 1
                    position += 1
                    continue
                case .literal(let expected) where expected == characters[position]:
                    token += 1
                    position += 1
                    continue
                case .literal:
                    break
                }
            }
            // Mismatch: let the last `*` take one more character, or fail.
            guard let star = starToken else { return false }
            starPosition += 1
            position = starPosition
            token = star + 1
        }
        while token < tokens.count, tokens[token] == .star { token += 1 }
        return token == tokens.count
    }
}
