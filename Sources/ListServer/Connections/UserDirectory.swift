import CSystemd
import ListAccess
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The system's user and group database (NSS: `/etc/passwd`, `/etc/group`, or whatever the machine
/// uses): names for uids, uids and gids for names, a user's groups.
public enum UserDirectory {
    /// The user name of `uid`, if the database has one.
    public static func userName(of uid: UInt32) -> String? {
        withBuffer { buffer in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            let status = getpwuid_r(uid, &entry, buffer.baseAddress!, buffer.count, &result)
            if status == ERANGE { return .retry }
            guard status == 0, result != nil, let name = entry.pw_name else { return .done(nil) }
            return .done(String(cString: name))
        }
    }

    /// The uid and primary gid of the user called `name`.
    public static func user(named name: String) -> (uid: UInt32, gid: UInt32)? {
        withBuffer { buffer in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            let status = getpwnam_r(name, &entry, buffer.baseAddress!, buffer.count, &result)
            if status == ERANGE { return .retry }
            guard status == 0, result != nil else { return .done(nil) }
            return .done((entry.pw_uid, entry.pw_gid))
        }
    }

    /// The gid of the group called `name`.
    public static func group(named name: String) -> UInt32? {
        withBuffer { buffer in
            var entry = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            let status = getgrnam_r(name, &entry, buffer.baseAddress!, buffer.count, &result)
            if status == ERANGE { return .retry }
            guard status == 0, result != nil else { return .done(nil) }
            return .done(entry.gr_gid)
        }
    }

    /// The groups the database lists `user` in, with `primary` (at most 65,536: the kernel's limit).
    public static func groups(of user: String, primary: UInt32) -> [UInt32] {
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let found = getgrouplist(user, primary, &groups, &count)
            if found >= 0 { return Array(groups.prefix(Int(count))) }
            guard groups.count < 65_536 else { return groups }
            count = Int32(min(max(Int(count), groups.count * 2), 65_536))
        }
    }

    private enum Attempt<Value> {
        case done(Value)
        case retry
    }

    /// Runs a `get*_r` call with a buffer that grows while the call says it is too small.
    private static func withBuffer<Value>(_ body: (UnsafeMutableBufferPointer<CChar>) -> Attempt<Value?>) -> Value? {
        var size = 1_024
        while true {
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            switch body(buffer) {
            case .done(let value): return value
            case .retry:
                // A database that keeps asking for more than 16 MiB is broken: nothing found.
                guard size < 16 << 20 else { return nil }
                size *= 4
            }
        }
    }
}

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
