import DiffableCore
import Testing

/// `FrontQueue` against an array used the slow way (`removeFirst`), through many compactions.
@Suite("Front queue")
struct FrontQueueTests {
    @Test func itKeepsOrderThroughEveryCompaction() {
        var queue = FrontQueue<Int>()
        var reference: [Int] = []
        var next = 0
        var random = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            // Bursts in and out, sometimes emptying, sometimes growing past the compaction threshold.
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                queue.append(next)
                reference.append(next)
                next += 1
            }
            for _ in 0..<Int.random(in: 0...(round % 50 == 0 ? 200 : 5), using: &random) {
                #expect(queue.popFirst() == (reference.isEmpty ? nil : reference.removeFirst()))
            }
            #expect(queue.count == reference.count && queue.isEmpty == reference.isEmpty)
            #expect(queue.first == reference.first && queue.last == reference.last)
            if let offset = reference.indices.randomElement(using: &random) {
                #expect(queue[offset: offset] == reference[offset])
                queue[offset: offset] = -reference[offset]
                reference[offset] = -reference[offset]
            }
            #expect(queue[offset: reference.count] == nil && queue[offset: -1] == nil)
        }
        #expect(queue.elements == reference)
        queue.removeAll()
        #expect(queue.isEmpty && queue.popFirst() == nil && queue.elements.isEmpty)
    }
}
