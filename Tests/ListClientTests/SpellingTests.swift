import ListClient
import Testing

@Suite("Did you mean")
struct SpellingTests {
    @Test func typosFindTheirWord() {
        let commands = ["show", "list", "append-items", "apply", "ping"]
        #expect(Spelling.closest(to: "shwo", in: commands) == "show", "a swap of neighbours is one edit")
        #expect(Spelling.closest(to: "apend-items", in: commands) == "append-items")
        #expect(Spelling.closest(to: "Show", in: commands) == "show", "case alone")
        #expect(Spelling.closest(to: "zzzz", in: commands) == nil, "nothing close")
        #expect(Spelling.closest(to: "sho", in: ["show"]) == "show")
        #expect(Spelling.closest(to: "x", in: [String]()) == nil)
    }

    @Test func editDistanceCountsEdits() {
        func distance(_ a: String, _ b: String) -> Int { Spelling.editDistance(Array(a), Array(b)) }
        #expect(distance("", "abc") == 3)
        #expect(distance("kitten", "sitting") == 3)
        #expect(distance("ab", "ba") == 1)
        #expect(distance("same", "same") == 0)
    }
}
