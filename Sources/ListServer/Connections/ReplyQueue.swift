import DiffableCore

/// Replies that wait for earlier ones, in request order: a reply whose outcome is not known yet (its
/// change is being stored) holds every reply after it, known or not. Slots are found by ticket in O(1).
struct ReplyQueue<Reply> {
    /// Names one slot of the queue (see `append`).
    struct Ticket: Equatable {
        /// Tickets are numbered in the order of `append` (a number names the same slot until it leaves).
        let number: Int
    }

    /// The slots, front first (`nil`: not known yet).
    private var slots = FrontQueue<Reply?>()
    /// The ticket number of the front slot.
    private var firstNumber = 0

    /// No reply is queued.
    var isEmpty: Bool { slots.isEmpty }

    /// How many replies are queued (known or not).
    var count: Int { slots.count }

    /// Queues a reply (`nil`: not known yet, see `fill`) behind the ones queued.
    @discardableResult
    mutating func append(_ reply: Reply?) -> Ticket {
        slots.append(reply)
        return Ticket(number: firstNumber + slots.count - 1)
    }

    /// Sets the reply of the slot `ticket` names.
    mutating func fill(_ ticket: Ticket, with reply: Reply) {
        slots[offset: ticket.number - firstNumber] = .some(reply)
    }

    /// The reply `offset` places from the front, when it and every reply before it are known.
    func known(at offset: Int) -> Reply? { slots[offset: offset] ?? nil }

    /// Removes `count` replies from the front (delivered).
    mutating func removeFirst(_ count: Int) {
        for _ in 0..<count { _ = slots.popFirst() }  // what they hold is released now
        firstNumber += count
    }
}
