import FileSafety
import ListAccess

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
