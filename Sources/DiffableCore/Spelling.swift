/// "Did you mean": the command-line tools (listctl, listd's configuration file) and registration checks suggest the closest
/// known name for a mistyped one.
public enum Spelling {
    /// The closest of `candidates` to `word`, when it is close enough to be a typo (an edit distance of at
    /// most a third of the word, and at least one; a difference of case alone counts as none): "did you mean".
    public static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        let word = Array(word.lowercased())
        let limit = max(1, word.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let lowered = Array(candidate.lowercased())
            // The distance is at least the difference in length: past the limit, never the answer.
            guard abs(lowered.count - word.count) <= limit else { continue }
            let distance = editDistance(word, lowered)
            if distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        guard let best, best.distance <= limit else { return nil }
        return best.name
    }

    /// Levenshtein distance, with a swap of two neighbours counted as one edit.
    public static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], before[j - 2] + 1) }
            }
            // The rows rotate in place (no copy): `current` is written whole in the next pass.
            swap(&before, &previous)
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
