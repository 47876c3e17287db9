import ListDurability
import Testing

@Suite("Group sizing: how long the next group waits to grow")
struct GroupSizingTests {
    /// A group waits for the clients of the group just written, up to twice its size, until one
    /// write's time has passed.
    @Test func theNextGroupWaitsForTheClientsJustWritten() {
        var sizing = GroupSizing()
        sizing.written(16, took: 200_000, open: 10, now: 1_000_000)
        #expect(sizing.target == 26, "what was added during the write plus the group just written")
        #expect(sizing.deadline == 1_200_000)
        #expect(sizing.waits(open: 10, now: 1_000_000))
        #expect(sizing.waits(open: 25, now: 1_199_999))
        #expect(!sizing.completes(open: 25))
        #expect(sizing.completes(open: 26))
        #expect(!sizing.waits(open: 26, now: 1_000_001), "complete: written at once")
        #expect(!sizing.waits(open: 3, now: 1_200_000), "the deadline passed")
        sizing.written(40, took: 100_000, open: 60, now: 2_000_000)
        #expect(sizing.target == 80, "at most twice the group just written")
    }

    /// One client's requests (or a few clients' all in one group) never wait: what can come back is
    /// already there once they are.
    @Test func aLoneClientNeverWaits() {
        var sizing = GroupSizing()
        sizing.written(1, took: 150_000, open: 0, now: 0)
        #expect(sizing.target == 1)
        #expect(!sizing.waits(open: 1, now: 1))
        sizing.written(4, took: 150_000, open: 0, now: 0)
        #expect(!sizing.waits(open: 4, now: 1))
        #expect(sizing.waits(open: 3, now: 1))
    }

    /// A wait is the write's duration, within the bounds; `stopWaiting` ends it.
    @Test func theWaitIsBounded() {
        var sizing = GroupSizing(shortestWait: 10, longestWait: 1_000)
        sizing.written(8, took: 50_000, open: 0, now: 100)
        #expect(sizing.deadline == 1_100, "a slow write does not make a long wait")
        sizing.written(8, took: 2, open: 0, now: 100)
        #expect(sizing.deadline == 110)
        sizing.stopWaiting()
        #expect(!sizing.waits(open: 1, now: 101))
        #expect(sizing.completes(open: 1))
    }
}
