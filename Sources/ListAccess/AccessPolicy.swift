/// What a user may do with a data source, from least to most.
public enum AccessLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Not even read it.
    case none
    /// Queries, `attach`, `dequeue` for one's own views.
    case read
    /// Also change its content: edits, `apply`, `batch`, outlines, expand and collapse.
    case write
    /// Also its layout and cell providers, and drop it: what its owner may do.
    case admin

    public static func < (lhs: AccessLevel, rhs: AccessLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name the configuration and the protocol use.
    public var description: String {
        switch self {
        case .none: return "none"
        case .read: return "read"
        case .write: return "write"
        case .admin: return "admin"
        }
    }

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = level
    }
}

/// One access rule of the configuration: data sources whose names match `dataSources` give `level` to
/// the listed users and to members of the listed groups.
public struct AccessRule: Sendable, Equatable {
    public var dataSources: GlobPattern
    /// Users by uid; `everyone` matches every user.
    public var users: Set<UInt32>
    public var everyone: Bool
    public var groups: Set<UInt32>
    public var level: AccessLevel

    public init(dataSources: GlobPattern, users: Set<UInt32> = [], everyone: Bool = false, groups: Set<UInt32> = [], level: AccessLevel) {
        self.dataSources = dataSources
        self.users = users
        self.everyone = everyone
        self.groups = groups
        self.level = level
    }

    /// Whether the rule speaks about `identity` and the data source `name`.
    public func matches(_ identity: PeerIdentity, dataSource name: String) -> Bool {
        guard everyone || users.contains(identity.uid) || groups.contains(where: identity.isMember(of:)) else { return false }
        return dataSources.matches(name)
    }
}

/// Why a user has the access it has.
public enum AccessReason: Sendable, Equatable, CustomStringConvertible {
    /// Root, or the user listd runs as.
    case administrator
    case owner
    /// The rule at this index of `AccessPolicy.rules` (the first that matched).
    case rule(Int)
    /// No rule matched: `AccessPolicy.defaultLevel`.
    case defaultLevel

    public var description: String {
        switch self {
        case .administrator: return "administrator"
        case .owner: return "owner"
        case .rule(let index): return "rule \(index)"
        case .defaultLevel: return "default"
        }
    }
}

/// Who may do what: listd's policy for data sources, registrations, views and plugins.
///
/// - Administrators (root and the user listd runs as) may do anything.
/// - A data source's owner (the user that created it) may do anything to it; any other user gets the
///   level of the first rule that matches it and the data source's name, else `defaultLevel` (`read`).
///   Creating a data source is open to everyone, except names some rule covers: those only the users
///   the rules give at least `write` may create.
/// - Registrations: everyone may read and use them; only their owner and administrators change or
///   delete them.
/// - Plugins: only administrators and the trusted users and groups may announce cell types.
public struct AccessPolicy: Sendable, Equatable {
    public var administrators: Set<UInt32>
    public var rules: [AccessRule]
    public var defaultLevel: AccessLevel
    public var trustedPluginUsers: Set<UInt32>
    public var trustedPluginGroups: Set<UInt32>

    /// - Parameter serviceUser: the uid listd runs as (an administrator, as root is).
    public init(
        serviceUser: UInt32, rules: [AccessRule] = [], defaultLevel: AccessLevel = .read, trustedPluginUsers: Set<UInt32> = [],
        trustedPluginGroups: Set<UInt32> = []
    ) {
        administrators = [0, serviceUser]
        self.rules = rules
        self.defaultLevel = defaultLevel
        self.trustedPluginUsers = trustedPluginUsers
        self.trustedPluginGroups = trustedPluginGroups
    }

    public func isAdministrator(_ identity: PeerIdentity) -> Bool { administrators.contains(identity.uid) }

    /// What `identity` may do with the data source `name` owned by `owner`, and why.
    public func access(of identity: PeerIdentity, toDataSource name: String, ownedBy owner: UInt32) -> (level: AccessLevel, reason: AccessReason) {
        if isAdministrator(identity) { return (.admin, .administrator) }
        if identity.uid == owner { return (.admin, .owner) }
        if let index = rules.firstIndex(where: { $0.matches(identity, dataSource: name) }) { return (rules[index].level, .rule(index)) }
        return (defaultLevel, .defaultLevel)
    }

    /// Whether `identity` may create a data source called `name`. A name no rule's pattern matches is
    /// anyone's to create. A name some rule covers is reserved to the users the rules give at least
    /// `write` on it (the first rule naming the user decides): nobody else can take a shared name first.
    public func mayCreate(_ identity: PeerIdentity, dataSource name: String) -> (allowed: Bool, reason: AccessReason?) {
        if isAdministrator(identity) { return (true, .administrator) }
        guard let covering = rules.firstIndex(where: { $0.dataSources.matches(name) }) else { return (true, nil) }
        guard let index = rules.firstIndex(where: { $0.matches(identity, dataSource: name) }) else { return (false, .rule(covering)) }
        return (rules[index].level >= .write, .rule(index))
    }

    /// Whether `identity` may change or delete a registration owned by `owner`.
    public func mayChangeRegistration(_ identity: PeerIdentity, ownedBy owner: UInt32) -> Bool {
        isAdministrator(identity) || identity.uid == owner
    }

    /// Whether `identity` may announce itself as a plugin.
    public func mayProvidePlugins(_ identity: PeerIdentity) -> Bool {
        isAdministrator(identity) || trustedPluginUsers.contains(identity.uid) || trustedPluginGroups.contains(where: identity.isMember(of:))
    }
}
