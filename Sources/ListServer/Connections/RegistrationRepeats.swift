/// The seeds' iOS 15 pitfall seen from listd: a registration made inside the cell provider, so once per
/// cell. To listd it is one connection registering the same definition again and again (each time a
/// silent no-op); this counts such repeats per connection so that the reply can say so.
struct RegistrationRepeats {
    /// Repeats within this long count together.
    static let window = Duration.seconds(10)
    /// More identical registers than this within the window are the pitfall.
    static let allowed = 3
    /// Names followed per connection (the oldest forgotten past it).
    static let maximumNames = 64

    private struct Run {
        var count: Int
        var since: ContinuousClock.Instant
        var warned: Bool
    }

    private var runs: [String: Run] = [:]

    /// What a repeat amounts to: nothing, a repeat to warn about, or the first such (to log).
    enum Verdict: Equatable {
        case fine, repeated, firstRepeated
    }

    /// Records that `name` was registered again with its definition unchanged, at `now`.
    mutating func record(_ name: String, at now: ContinuousClock.Instant) -> Verdict {
        var run = runs[name] ?? Run(count: 0, since: now, warned: false)
        if now - run.since > Self.window {
            run.count = 0
            run.since = now
        }
        run.count += 1
        var verdict = Verdict.fine
        if run.count > Self.allowed {
            verdict = run.warned ? .repeated : .firstRepeated
            run.warned = true
        }
        if runs[name] == nil, runs.count >= Self.maximumNames, let oldest = runs.min(by: { $0.value.since < $1.value.since })?.key {
            runs[oldest] = nil
        }
        runs[name] = run
        return verdict
    }
}
