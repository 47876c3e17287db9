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

    /// The groups the database lists `user` in, with `primary` (empty when the user is unknown).
    public static func groups(of user: String, primary: UInt32) -> [UInt32] {
        var count: Int32 = 32
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let found = getgrouplist(user, primary, &groups, &count)
            if found >= 0 { return Array(groups.prefix(Int(count))) }
            if count <= groups.count { count = Int32(groups.count * 2) }
        }
    }

    private enum Attempt<Value> {
        case done(Value)
        case retry
    }

    /// Runs a `get*_r` call with a buffer that grows while the call says it is too small.
    private static func withBuffer<Value>(_ body: (UnsafeMutableBufferPointer<CChar>) -> Attempt<Value>) -> Value {
        var size = 1_024
        while true {
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            switch body(buffer) {
            case .done(let value): return value
            case .retry: size *= 4
            }
        }
    }
}

extension PeerIdentity {
    /// The identity of listd's own process (for changes listd makes itself, and in-process connections).
    public static var current: PeerIdentity {
        let uid = geteuid()
        let name = UserDirectory.userName(of: uid)
        return PeerIdentity(
            uid: uid, gid: getegid(), pid: getpid(), groups: name.map { UserDirectory.groups(of: $0, primary: getegid()) } ?? [], user: name)
    }

    /// Reads the peer of a Unix socket channel: uid, gid and pid from `SO_PEERCRED` (the kernel's record
    /// of the process that connected), the user name and groups from the user database.
    static func read(from channel: Channel, directory: IdentityCache) -> EventLoopFuture<PeerIdentity> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ListServerError("not a socket: no peer credentials"))
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            .map { (credentials: listd_ucred) in
                directory.identity(uid: credentials.uid, gid: credentials.gid, pid: credentials.pid)
            }
    }
}

/// User names and groups by uid, looked up once (the user database can be slow: LDAP, …). Cleared on
/// reload, so a renamed user or changed group shows after SIGHUP.
final class IdentityCache {
    private var entries: [UInt32: (user: String?, groups: [UInt32])] = [:]

    func identity(uid: UInt32, gid: UInt32, pid: Int32) -> PeerIdentity {
        let entry: (user: String?, groups: [UInt32])
        if let known = entries[uid] {
            entry = known
        } else {
            let user = UserDirectory.userName(of: uid)
            entry = (user, user.map { UserDirectory.groups(of: $0, primary: gid) } ?? [])
            if entries.count > 10_000 { entries.removeAll() }
            entries[uid] = entry
        }
        return PeerIdentity(uid: uid, gid: gid, pid: pid, groups: entry.groups, user: entry.user)
    }

    func clear() { entries.removeAll() }
}
