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

    /// The name of group `gid` and whether the database lists any members in it (beyond the users whose
    /// primary group it is).
    public static func group(id gid: UInt32) -> (name: String, hasMembers: Bool)? {
        withBuffer { buffer in
            var entry = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            let status = getgrgid_r(gid, &entry, buffer.baseAddress!, buffer.count, &result)
            if status == ERANGE { return .retry }
            guard status == 0, result != nil, let name = entry.gr_name else { return .done(nil) }
            return .done((String(cString: name), entry.gr_mem.map { $0.pointee != nil } ?? false))
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
