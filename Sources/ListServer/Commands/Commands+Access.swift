import DiffableCore
import FileSafety
import ListAccess
import ListEngine
import ListStore
import ListWire

/// `access`: what a user may do with a data source, and why.
struct AccessQuery: CommandDeclaration {
    static let about = CommandAbout("access", "A user's effective access to a data source (this connection's user, or another by name or uid): none, read, write or admin, with the reason (administrator, owner, the matching rule, or the default) and the user's usage of the per-user quotas.", result: "{dataSource, exists, owner?, ownerName?, uid, user?, access, reason, mayCreate?, usage: {dataSources, items, registrations, bytes, account: {data, layouts, cellProviders, registrations, changeLog, cells, expansions, queues, output, total}}, quota}")
    @Arg("The data source (it need not exist: then whether the user may create it).") var dataSource: String
    @Arg("A user name or uid (default: this connection's user; others: administrators only).", type: "string or integer") var user: JSONValue?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (state, name) = (context.state, dataSource)
        let caller = context.connection.identity
        // Looking up other users (the user database, possibly remote) is for administrators.
        if let user, user != .string(caller.user ?? ""), user != .int(Int(caller.uid)), !state.policy.isAdministrator(caller) {
            throw WireError(
                .permissionDenied,
                "Only root and the user listd runs as may ask about other users; user \(caller.displayName) may ask about itself.")
        }
        let identity = try user.map { value throws(WireError) in try state.identity(named: value) } ?? caller
        // A data source the caller may not even read is answered about as one that does not exist.
        let model = state.model.dataSources[name].flatMap { state.isVisible($0, to: caller) ? $0 : nil }
        let (level, reason) =
            model.map { state.policy.access(of: identity, toDataSource: name, ownedBy: $0.owner) } ?? (.none, .defaultLevel)
        let creatable = model == nil ? state.policy.mayCreate(identity, dataSource: name).allowed : nil
        let usage = state.model.usage(of: identity.uid)
        // Everything listd holds because of the user, by part (root's own connections; a relay's
        // is its own account, under stats' accounts).
        let account = state.model.accounts.bytes(of: AccountHolder(uid: identity.uid))
        let quota = state.configuration.quota
        let exempt = !OwnerQuota.applies(to: identity.uid)
        return CommandResult { writer in
            writer.key("dataSource")
            writer.string(name)
            writer.key("exists")
            writer.bool(model != nil)
            if let model {
                writer.key("owner")
                writer.int(Int(model.owner))
                writer.key("ownerName")
                writer.string(state.userName(of: model.owner))
            }
            writer.key("uid")
            writer.int(Int(identity.uid))
            if let user = identity.user {
                writer.key("user")
                writer.string(user)
            }
            writer.key("access")
            writer.string(model == nil ? "none" : level.description)
            writer.key("reason")
            writer.string(model == nil ? "no such data source" : reason.description)
            if let creatable {
                writer.key("mayCreate")
                writer.bool(creatable)
            }
            writer.key("usage")
            writer.value([
                "dataSources": .int(usage.dataSources), "items": .int(usage.items), "registrations": .int(usage.registrations),
                "bytes": .int(account.total), "account": account.json,
            ])
            writer.key("quota")
            if exempt {
                writer.string("exempt")
            } else {
                writer.value([
                    "maxDataSourcesPerUser": .int(quota.maximumDataSources), "maxItemsPerUser": .int(quota.maximumItems),
                    "maxRegistrationsPerUser": .int(quota.maximumRegistrations), "maxBytesPerUser": .int(quota.maximumBytes),
                ])
            }
        }
    }
}

extension CommandRouter {
    static var accessCommand: Command { Command(AccessQuery.self) }
}

extension ServerState {
    /// The identity of a user given by name or uid (its primary group and groups from the user
    /// database), for `access`.
    func identity(named value: JSONValue) throws(WireError) -> PeerIdentity {
        switch value {
        case .string(let name):
            guard let user = UserDirectory.user(named: name) else { throw WireError(.invalidArgument, "No user is called \"\(name)\".") }
            return PeerIdentity(uid: user.uid, gid: user.gid, pid: 0, groups: UserDirectory.groups(of: name, primary: user.gid), user: name)
        case .int(let number):
            guard let uid = UInt32(exactly: number) else { throw WireError(.invalidArgument, "user: \(number) is not a uid.") }
            let name = UserDirectory.userName(of: uid)
            let gid = name.flatMap { UserDirectory.user(named: $0)?.gid } ?? uid
            return PeerIdentity(uid: uid, gid: gid, pid: 0, groups: name.map { UserDirectory.groups(of: $0, primary: gid) } ?? [], user: name)
        default:
            throw WireError(.invalidArgument, "user must be a user name or a uid.")
        }
    }
}
