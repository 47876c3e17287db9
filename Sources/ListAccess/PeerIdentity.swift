/// Who is on the other end of a connection, as the kernel tells it (`SO_PEERCRED` when the connection
/// was made, `SO_PEERGROUPS` for the supplementary groups), with the user name when it resolves.
public struct PeerIdentity: Sendable, Equatable, Hashable {
    public var uid: UInt32
    public var gid: UInt32
    /// The process that connected (it may have exited since).
    public var pid: Int32
    /// The supplementary groups of the process that connected.
    public var groups: [UInt32]
    /// The user name of `uid`, when the system knows one.
    public var user: String?

    public init(uid: UInt32, gid: UInt32, pid: Int32, groups: [UInt32] = [], user: String? = nil) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.groups = groups
        self.user = user
    }

    /// Whether the process was in group `gid` (as its primary group or a supplementary one).
    public func isMember(of group: UInt32) -> Bool { gid == group || groups.contains(group) }

    /// The user name, else the uid in decimal: how logs and errors name the user.
    public var displayName: String { user ?? String(uid) }
}
