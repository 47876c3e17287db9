import CSystemd
import FileSafety
import ListAccess
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

extension PeerIdentity {
    /// Reads the peer of a Unix socket channel, all from the kernel's record of the process that
    /// connected: uid, gid and pid (`SO_PEERCRED`) and its supplementary groups (`SO_PEERGROUPS`); the
    /// user name from the user database (cached).
    static func read(from channel: Channel, names: UserNameCache) -> EventLoopFuture<PeerIdentity> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ListServerError("not a socket: no peer credentials"))
        }
        let credentials = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            as EventLoopFuture<listd_ucred>
        let groups = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(listd_so_peergroups))
            .map { (buffer: listd_peergroups) in supplementaryGroups(buffer) }
            // More groups than the buffer holds: none are counted (rules on groups fail closed).
            .recover { _ in [] }
        // The cache belongs to the server's event loop, which is the channel's: the callback runs there.
        let cache = NIOLoopBound(names, eventLoop: channel.eventLoop)
        return credentials.and(groups).map { credentials, groups in
            PeerIdentity(
                uid: credentials.uid, gid: credentials.gid, pid: credentials.pid, groups: groups, user: cache.value.name(of: credentials.uid))
        }
    }

    /// The groups in a `SO_PEERGROUPS` buffer: sorted ascending, then zeros. A leading 0 is group 0 only
    /// when groups follow it (a lone 0 cannot be told from an empty list: it is left out, failing closed).
    static func supplementaryGroups(_ buffer: listd_peergroups) -> [UInt32] {
        withUnsafeBytes(of: buffer.groups) { raw in
            let all = raw.bindMemory(to: gid_t.self)
            let groups = all.filter { $0 != 0 }
            return all.first == 0 && !groups.isEmpty ? [0] + groups : groups
        }
    }
}
