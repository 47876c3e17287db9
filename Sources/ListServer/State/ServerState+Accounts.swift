import DiffableCore
import ListEngine
import ListWire
import NIOCore

/// Every byte listd holds because of a user, charged to that user's account (`UserAccounts`): the model
/// and the engine charge what lasts, views charge the cells and expansion copies they keep, and queues and
/// unsent output are read from the user's connections when an account is read.
extension ServerState {
    /// The bytes `holder`'s connections hold now in queues (request lines waiting their turn, unfinished
    /// lines) and as output the peers have not taken yet. O(the user's connections).
    func liveAccountBytes(of holder: AccountHolder) -> (queues: Int, output: Int) {
        guard let connections = connections.byUser[holder.uid] else { return (0, 0) }
        var (queues, output) = (0, 0)
        for connection in connections.values where connection.accountHolder == holder {
            let held = connection.liveBytes
            queues += held.queues
            output += held.output
        }
        return (queues, output)
    }

    /// Refuses (`quota-exceeded`) a request of `connection` that would add `adding` bytes to `part` of
    /// its user's account past `maxBytesPerUser` (root's own connections are exempt, a relay's are not).
    func checkCharge(of connection: any ViewConnection, adding: Int, releasing: Int = 0, to part: AccountPart) throws(WireError) {
        try model.accounts.check(
            connection.accountHolder, adding: adding, releasing: releasing, to: part, limit: configuration.quota.maximumBytes)
    }

    /// The account of `holder` for `access` and `stats`: every part and the total.
    func accountJSON(of holder: AccountHolder) -> JSONValue {
        model.accounts.bytes(of: holder).json
    }

    /// Every account with something in it, by uid (a root relay's as `"0-relay"`): all of them for
    /// administrators, the connection's own user's for anyone else.
    func accountsJSON(visibleTo connection: any ServedConnection) -> JSONValue {
        let everyone = policy.isAdministrator(connection.identity)
        var holders = Set(model.accounts.all.keys)
        for (uid, _) in connections.byUser { holders.insert(AccountHolder(uid: uid)) }
        var members: [String: JSONValue] = [:]
        for holder in holders where everyone || holder.uid == connection.identity.uid {
            let bytes = model.accounts.bytes(of: holder)
            guard !bytes.isEmpty else { continue }
            members[holder.isRelay ? "\(holder.uid)-relay" : String(holder.uid)] = bytes.json
        }
        return .object(members)
    }
}
