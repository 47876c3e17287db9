import DiffableCore
import ListDurability
import ListWire

/// Who holds a reply that waits for its change to be durable: a connection.
protocol DurableReplyHolder: AnyObject {
    /// The held reply in the holder's slot `slot` (its own numbering; `nil`: none) is known now: the
    /// change is durable (`reply` is the reply made when it was committed, with what it publishes), or
    /// it was undone (`reply` is the error).
    func heldReplyResolved(_ slot: Int?, _ reply: CommandResult)
}

/// Replies made when their changes were committed and held until the changes are durable, in the
/// order of the changes' numbers, whichever connection made them: so the changes' events go out in
/// the order of their versions, as they would without a store. A written group releases them all with
/// one call from the pipeline (`CommitPipeline.numberedDurable`); nothing is made per change but an
/// entry here (no future, no closure).
struct DurableReplies {
    struct Held {
        var number: Int
        var holder: any DurableReplyHolder
        var slot: Int?
        var reply: CommandResult
    }

    /// In the order of the numbers.
    private var queue = FrontQueue<Held>(keptCapacity: 1_024)

    var isEmpty: Bool { queue.isEmpty }

    /// Holds `reply` until the change numbered `number` is durable (numbers come in increasing order).
    mutating func hold(_ reply: CommandResult, number: Int, holder: any DurableReplyHolder, slot: Int?) {
        queue.append(Held(number: number, holder: holder, slot: slot, reply: reply))
    }

    /// Removes and returns the replies whose changes are numbered up to `number`, oldest first.
    mutating func release(upTo number: Int) -> [Held] {
        var released: [Held] = []
        while let front = queue.first, front.number <= number { released.append(queue.popFirst()!) }
        return released
    }
}

extension ServerState {
    /// Uses `pipeline` for every change from now on: the replies of changes it numbers are held here
    /// until they are durable (`hold`), and released once per written group.
    package func adopt(_ pipeline: CommitPipeline) {
        storage.pipeline = pipeline
        pipeline.numberedDurable = { [unowned self] number in
            for var held in storage.durableReplies.release(upTo: number) {
                held.reply.awaited = nil
                held.holder.heldReplyResolved(held.slot, held.reply)
            }
        }
        pipeline.numberedUndone = { [unowned self] numbers, error in
            // Every change in flight was undone: their replies become the error, and nothing they
            // would have published goes out. After a conflict (the pipeline has caught up with the other
            // instances by now), a command that may run again does, and its new reply takes the slot.
            let conflict = error.details["conflict"] == true
            for held in storage.durableReplies.release(upTo: numbers.upperBound) {
                if conflict, let awaited = held.reply.awaited, let rerun = awaited.rerun {
                    rerun(awaited.id).whenResolved { [self] final in holdUntilDurable(final, holder: held.holder, slot: held.slot) }
                    continue
                }
                held.holder.heldReplyResolved(held.slot, CommandResult(reply: .encoded(CommandResult.errorLine(id: held.reply.awaited?.id, error))))
            }
        }
    }

    /// Holds a reply made for a change that is not durable yet (`reply.awaited`), with what it
    /// publishes, until the change is durable or undone; then `holder` gets it (or the error reply).
    func holdUntilDurable(_ reply: CommandResult, holder: any DurableReplyHolder, slot: Int?) {
        guard let number = reply.awaited?.number, let pipeline = storage.pipeline, number > pipeline.durableNumber else {
            var reply = reply
            reply.awaited = nil
            return holder.heldReplyResolved(slot, reply)
        }
        storage.durableReplies.hold(reply, number: number, holder: holder, slot: slot)
    }
}
