/// Replies that wait for earlier ones, in request order: a reply whose outcome is not known yet (its
/// change is being stored) holds every reply after it, known or not. Slots are found by ticket in O(1).
struct ReplyQueue<Reply> {
    /// Names one slot of the queue (see `append`).
    struct Ticket: Equatable {
        /// Tickets are numbered in the order of `append` (a number names the same slot until it leaves).
        let number: Int
    }

    /// The slots, from `head` on (before it: delivered, kept until compacted).
    private var slots: [Reply?] = []
    private var head = 0
    /// The ticket number of `slots[0]`.
    private var firstNumber = 0

    /// No reply is queued.
    var isEmpty: Bool { head == slots.count }

    /// How many replies are queued (known or not).
    var count: Int { slots.count - head }

    /// Queues a reply (`nil`: not known yet, see `fill`) behind the ones queued.
    @discardableResult
    mutating func append(_ reply: Reply?) -> Ticket {
        slots.append(reply)
        return Ticket(number: firstNumber + slots.count - 1)
    }

    /// Sets the reply of the slot `ticket` names.
    mutating func fill(_ ticket: Ticket, with reply: Reply) {
        let index = ticket.number - firstNumber
        guard index >= head, index < slots.count else { return }
        slots[index] = reply
    }

    /// The reply `offset` places from the front, when it and every reply before it are known.
    func known(at offset: Int) -> Reply? {
        let index = head + offset
        return index < slots.count ? slots[index] : nil
    }

    /// Removes `count` replies from the front (delivered).
    mutating func removeFirst(_ count: Int) {
        for index in head..<head + count { slots[index] = nil }  // what they hold is released now
        head += count
        if head == slots.count {
            slots.removeAll(keepingCapacity: slots.count <= 64)
            firstNumber += head
            head = 0
        } else if head > 64, head * 2 > slots.count {
            slots.removeFirst(head)
            firstNumber += head
            head = 0
        }
    }
}

/// Request lines that wait their turn (behind a waiting request, or while output is paused), in order.
struct HeldLines<Line> {
    /// The lines, from `head` on (before it: taken, emptied).
    private var lines: [Line?] = []
    private var head = 0

    var isEmpty: Bool { head == lines.count }

    /// The lines waiting, in order.
    var all: [Line] { lines[head...].map { $0! } }

    mutating func append(_ line: Line) { lines.append(line) }

    mutating func popFirst() -> Line? {
        guard head < lines.count else { return nil }
        let line = lines[head]
        lines[head] = nil
        head += 1
        if head == lines.count {
            lines.removeAll(keepingCapacity: lines.count <= 64)
            head = 0
        } else if head > 64, head * 2 > lines.count {
            lines.removeFirst(head)
            head = 0
        }
        return line
    }

    /// Drops every line waiting.
    mutating func removeAll() {
        lines = []
        head = 0
    }
}
