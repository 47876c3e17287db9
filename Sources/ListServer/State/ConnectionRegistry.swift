/// The open connections, by id and by user, with what they hold together (unfinished request lines).
/// Confined to the server's event loop.
struct ConnectionRegistry {
    private var byID: [Int: any ServedConnection] = [:]
    /// Open connections per uid (for `maxConnectionsPerUser`, and to read a user's live account parts).
    private(set) var byUser: [UInt32: [Int: any ServedConnection]] = [:]
    private var nextID = 1
    /// Bytes of unfinished request lines held across all connections (see `shedPartialLines`).
    var partialLineBytes = 0

    var values: Dictionary<Int, any ServedConnection>.Values { byID.values }
    /// The ids of the open connections.
    var keys: Dictionary<Int, any ServedConnection>.Keys { byID.keys }
    var count: Int { byID.count }
    var isEmpty: Bool { byID.isEmpty }
    subscript(id: Int) -> (any ServedConnection)? { byID[id] }

    /// Open connections of `uid`.
    func count(of uid: UInt32) -> Int { byUser[uid]?.count ?? 0 }

    /// Adds `connection`; returns its id.
    mutating func add(_ connection: any ServedConnection) -> Int {
        let id = nextID
        nextID += 1
        byID[id] = connection
        byUser[connection.identity.uid, default: [:]][id] = connection
        return id
    }

    /// Removes `connection` (once; later calls do nothing).
    mutating func remove(_ connection: any ServedConnection) {
        guard byID.removeValue(forKey: connection.id) != nil else { return }
        let uid = connection.identity.uid
        byUser[uid]?[connection.id] = nil
        if byUser[uid]?.isEmpty == true { byUser[uid] = nil }
    }
}
