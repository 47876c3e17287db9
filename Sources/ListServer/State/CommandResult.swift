import DiffableCore
import ListDurability
import ListWire
import NIOCore

/// What running a command produced, from its handler to the connection: the reply, the event to
/// broadcast once the reply is written, anything else to do then, and, when the command finishes later
/// (a dequeue waiting for plugins, a change waiting to be durable, a parked request), the result it
/// finishes with.
struct CommandResult {
    /// The reply, from what the handler says to the bytes the connection writes.
    enum Reply {
        /// The `result` object's members, written into the reply envelope by the router.
        case members((inout JSONWriter) -> Void)
        /// A mutation's `{version, changes, unchanged?, warnings?}` (no closure on the commonest path).
        case mutation(MutationReply)
        /// The command failed (also after all: its change could not be stored): an error reply.
        case failure(WireError)
        /// The whole reply line, without its newline (empty while `deferred` is pending).
        case encoded([UInt8])
    }

    var reply: Reply
    var broadcast: Broadcast? = nil
    var afterReply: [() -> Void] = []
    /// Set when the command finishes later: `reply` is unused meanwhile.
    var deferred: Deferred<CommandResult>? = nil
    /// `deferred` only waits for the change to be stored: the connection's next requests may run
    /// meanwhile (their replies queue behind this one).
    var awaitsStorage = false
    /// Set when the reply (made already) waits for its change to be durable, by the change's number
    /// (`DurableReplies`): the connection holds it and what it publishes until then, and runs its next
    /// requests meanwhile.
    var awaited: AwaitedDurability? = nil

    /// A result whose reply's `result` object `members` writes.
    init(_ members: @escaping (inout JSONWriter) -> Void) { reply = .members(members) }

    init(reply: Reply, broadcast: Broadcast? = nil, afterReply: [() -> Void] = [], deferred: Deferred<CommandResult>? = nil, awaitsStorage: Bool = false) {
        self.reply = reply
        self.broadcast = broadcast
        self.afterReply = afterReply
        self.deferred = deferred
        self.awaitsStorage = awaitsStorage
    }

    /// A result that finishes later with what `deferred` resolves to.
    static func later(_ deferred: Deferred<CommandResult>, awaitsStorage: Bool = false) -> CommandResult {
        CommandResult(reply: .encoded([]), deferred: deferred, awaitsStorage: awaitsStorage)
    }

    /// The error, when the command failed.
    var failure: WireError? {
        if case .failure(let error) = reply { return error }
        return nil
    }

    /// The encoded reply line (empty unless the router encoded it).
    var encodedReply: [UInt8] {
        if case .encoded(let bytes) = reply { return bytes }
        return []
    }
}

/// What a reply waiting for its change to be durable needs: the change's number in the commit
/// pipeline, and the request's `id`, for the error reply should the change be undone.
struct AwaitedDurability {
    var number: Int
    var id: EchoedID? = nil
    /// With a store shared by several instances: runs the command again should another instance's
    /// commit have beaten its change (a conflict), into its final reply for the request `id` (which
    /// may wait for durability in turn). `nil`: the undoing error is the reply.
    var rerun: ((EchoedID?) -> Deferred<CommandResult>)? = nil
}

/// A mutation's reply: `{"version":…,"changes":…,"warnings"?:[…]}`.
struct MutationReply {
    var version: Int
    /// The bytes the event carries, when it was made (the same value, encoded once).
    var changesJSON: ArraySlice<UInt8>?
    var changes: StagedChanges
    var reloadData: Bool
    var animatingDifferences: Bool
    var warnings: [SnapshotWarning]
    /// The change changed nothing: `version` is the current one, and no event was sent.
    var unchanged = false

    func write(into writer: inout JSONWriter) {
        writer.key(literal: "version")
        writer.int(version)
        writer.key(literal: "changes")
        if let changesJSON {
            writer.raw(changesJSON)
        } else {
            writer.changes(changes, reloadData: reloadData, animatingDifferences: animatingDifferences)
        }
        if unchanged {
            writer.key(literal: "unchanged")
            writer.bool(true)
        }
        if !warnings.isEmpty {
            writer.key("warnings")
            writer.beginArray()
            for warning in warnings {
                var members: [String: JSONValue] = [
                    "code": .string(warning.code.rawValue), "message": .string(warning.message),
                    "identifiers": .array(warning.identifiers.map { .string($0) }),
                ]
                members.merge(warning.details) { own, _ in own }
                writer.value(.object(members))
            }
            writer.endArray()
        }
    }
}

extension CommandResult {
    /// The bytes of an error reply line (without its newline): `{"id"?, "ok": false, "error": {…}}`.
    static func errorLine(id: EchoedID?, _ error: WireError) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        if let id {
            writer.key("id")
            writer.echoedID(id)
        }
        writer.key("ok")
        writer.bool(false)
        writer.key("error")
        writer.wireError(error)
        writer.endObject()
        return writer.bytes
    }
}
