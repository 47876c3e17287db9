import FileSafety

#if canImport(Glibc)
    import Glibc
#endif

/// Where listd's socket is: one resolution shared by listd (where to create it), listctl, listview and
/// the plugin kit (where to find it), so that every program agrees without options.
///
/// 1. `$LISTD_SOCKET`, when set;
/// 2. as root: `/run/listd.sock` (the system service's);
/// 3. otherwise the user's own: `$XDG_RUNTIME_DIR/listd.sock`, else `/tmp/listd-$USER/listd.sock`;
///    a client that finds no socket there but finds the system service's uses that one.
public enum SocketPath {
    public static let system = "/run/listd.sock"

    /// The socket a server creates.
    public static func forServer(environment: (String) -> String? = SocketPath.environment, uid: UInt32 = geteuid()) -> String {
        if let path = environment("LISTD_SOCKET"), !path.isEmpty { return path }
        if uid == 0 { return system }
        return personal(environment: environment)
    }

    /// The socket a client connects to.
    public static func forClient(
        environment: (String) -> String? = SocketPath.environment, uid: UInt32 = geteuid(), isSocket: (String) -> Bool = SocketPath.isSocket
    ) -> String {
        if let path = environment("LISTD_SOCKET"), !path.isEmpty { return path }
        if uid == 0 { return system }
        let own = personal(environment: environment)
        if !isSocket(own) && isSocket(system) { return system }
        return own
    }

    /// The user's own socket: in the runtime directory, else in a directory of its own under /tmp.
    public static func personal(environment: (String) -> String? = SocketPath.environment) -> String {
        if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty { return runtime + "/listd.sock" }
        return "/tmp/listd-\(userName(environment))/listd.sock"
    }

    /// The directory that holds `path` when it is the per-user one under /tmp: created (mode 0700) by the
    /// server before it binds.
    public static func prepareDirectory(of path: String) {
        guard path == "/tmp/listd-\(userName(environment))/listd.sock" else { return }
        mkdir("/tmp/listd-\(userName(environment))", 0o700)
    }

    /// The users whose socket a client trusts besides root: its own user, listd's service user (`listd`,
    /// when the system has it) and the users `$LISTD_SOCKET_OWNER` names (names or uids, comma-separated).
    public static func trustedOwners(environment: (String) -> String? = SocketPath.environment, uid: UInt32 = geteuid()) -> Set<UInt32> {
        var owners: Set<UInt32> = [uid]
        if let service = UserDirectory.user(named: "listd")?.uid { owners.insert(service) }
        for name in (environment("LISTD_SOCKET_OWNER") ?? "").split(separator: ",") {
            let trimmed = String(name.filter { $0 != " " })
            if let id = UInt32(trimmed) ?? UserDirectory.user(named: trimmed)?.uid { owners.insert(id) }
        }
        return owners
    }

    /// A variable of this process's environment (also how listd reads its state directory's variables).
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    private static func userName(_ environment: (String) -> String?) -> String {
        if let user = environment("USER"), !user.isEmpty, !user.contains("/") { return user }
        return String(geteuid())
    }

    /// Whether a socket exists at `path`.
    public static func isSocket(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
    }
}
