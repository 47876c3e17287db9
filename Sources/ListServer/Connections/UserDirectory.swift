import CSystemd
import FileSafety
import ListAccess
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

extension PeerIdentity {
    /// The identity of listd's own process (for changes listd makes itself, and in-process connections).
    public static var current: PeerIdentity {
        var groups = [gid_t](repeating: 0, count: Int(max(getgroups(0, nil), 0)))
        let count = getgroups(Int32(groups.count), &groups)
        let uid = geteuid()
        return PeerIdentity(uid: uid, gid: getegid(), pid: getpid(), groups: Array(groups.prefix(Int(max(count, 0)))), user: UserDirectory.userName(of: uid))
    }

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

/// User names by uid, looked up once (the user database can be slow: LDAP, …). Cleared on reload, so a
/// renamed user shows after SIGHUP.
final class UserNameCache {
    private var names: [UInt32: String?] = [:]

    func name(of uid: UInt32) -> String? {
        if let known = names[uid] { return known }
        let name = UserDirectory.userName(of: uid)
        if names.count > 10_000 { names.removeAll() }
        names[uid] = name
        return name
    }

    func clear() { names.removeAll() }
}
