import ListWire

/// The limits across connections: unfinished lines and unsent output held by all of them together, shed
/// fairly by user when they pass their caps.
extension ServerState {
    /// Closes connections holding unfinished lines until the total is within
    /// `maximumPartialLineBytesTotal`, fairly by user: each time the user holding the most bytes (over all
    /// its connections) loses its longest line, so many connections of one user never push out another
    /// user's one long line.
    func shedPartialLines() {
        let cap = configuration.maximumPartialLineBytesTotal
        let holders = connections.values.compactMap { connection in connection.heldPartialBytes > 0 ? (connection, connection.heldPartialBytes) : nil }
        for shed in Self.shedFairly(holders, total: connections.partialLineBytes, cap: cap) {
            let user = shed.connection.identity
            shed.connection.abandonPartialLine(
                "Unfinished lines across all connections passed maxPartialLineBytesTotal (\(cap) bytes); user "
                    + "\(user.displayName) (uid \(user.uid)) holds the most (\(shed.userBytes) bytes over \(shed.userConnections) "
                    + "connection\(shed.userConnections == 1 ? "" : "s")) and this is its longest line (\(shed.bytes) bytes); closing the connection.",
                reason: "unfinished lines over maxPartialLineBytesTotal")
        }
    }

    /// Which of `holders` (a connection and the bytes it holds) to close so that `total` comes within
    /// `cap`, fairly by user: each time the user holding the most over all its connections gives up its
    /// largest holder, so one user's many connections never cost another user its one large one. Each
    /// comes with what its user held (bytes, connections) when it was picked.
    static func shedFairly(_ holders: [(any ServedConnection, Int)], total: Int, cap: Int)
        -> [(connection: any ServedConnection, bytes: Int, userBytes: Int, userConnections: Int)]
    {
        guard total > cap else { return [] }
        var byUser: [UInt32: (total: Int, holders: [(any ServedConnection, Int)])] = [:]
        for (connection, bytes) in holders {
            byUser[connection.identity.uid, default: (0, [])].total += bytes
            byUser[connection.identity.uid, default: (0, [])].holders.append((connection, bytes))
        }
        for uid in byUser.keys { byUser[uid]!.holders.sort { $0.1 < $1.1 } }
        var remaining = total
        var shed: [(connection: any ServedConnection, bytes: Int, userBytes: Int, userConnections: Int)] = []
        while remaining > cap, let (uid, most) = byUser.max(by: { $0.value.total < $1.value.total }), let (holder, bytes) = most.holders.last {
            shed.append((holder, bytes, most.total, most.holders.count))
            byUser[uid]!.holders.removeLast()
            byUser[uid]!.total -= bytes
            if byUser[uid]!.holders.isEmpty { byUser[uid] = nil }
            remaining -= bytes
        }
        return shed
    }
}

extension ServerState {
    /// The unsent output of the connections holding more than `maxOutputBytes` (paused, or views whose
    /// peers do not read their events; each other one holds less), with the total.
    func heldOutput() -> (total: Int, holders: [(connection: any ServedConnection, bytes: Int)]) {
        var holders: [(connection: any ServedConnection, bytes: Int)] = []
        var total = 0
        for connection in connections.values {
            guard let bytes = connection.heldOutputBytes else { continue }
            holders.append((connection, bytes))
            total += bytes
        }
        return (total, holders)
    }

    /// Closes connections until what the connections holding output hold together is within
    /// `maximumOutputBytesTotal`, fairly by user: each time the user holding the most loses its largest
    /// holder, so one user's many connections never cost another user its one large reply.
    func shedHeldOutput() {
        let cap = configuration.maximumOutputBytesTotal
        let (total, holders) = heldOutput()
        for shed in Self.shedFairly(holders.map { ($0.connection, $0.bytes) }, total: total, cap: cap) {
            guard shed.connection.eventLoop != nil else { continue }
            logger.warning(
                "closing a connection that does not read its output: unsent output across connections passed maxOutputBytesTotal",
                metadata: [
                    "connection": "\(shed.connection.id)", "user": "\(shed.connection.identity.displayName)", "unsentBytes": "\(shed.bytes)",
                    "userHeldBytes": "\(shed.userBytes)", "heldOutputBytes": "\(total)", "maxOutputBytesTotal": "\(cap)",
                ])
            shed.connection.closeHoldingOutput()
            stats.connectionsClosedForHeldOutput += 1
        }
    }
}
