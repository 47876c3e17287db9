import CellCore
import DiffableCore
import ListAccess
import ListEngine
import ListStore
import ListWire

/// The access policy applied: who may change what, and who owns what a change creates.
extension ServerState {
    var policy: AccessPolicy { configuration.access }

    /// The user a change is made as: the connection's, or listd's own for changes listd makes itself.
    func identity(of connection: (any ServedConnection)?) -> PeerIdentity { connection?.identity ?? serviceIdentity }

    /// The user name of `uid` for messages (cached), else the number.
    func userName(of uid: UInt32) -> String {
        userNames.name(of: uid) ?? String(uid)
    }

    /// The registration a provider of `dataSource` names with `reference`: the data source owner's of that
    /// name, or the one of the owner the reference names. Another user's registration of that name is never
    /// taken instead: `registration-not-found` (for `what`, e.g. `item "x"`).
    func registration(_ reference: RegistrationReference, of dataSource: DataSourceModel, for what: String) throws(WireError) -> Registration {
        if let found = registrations[reference.key(dataSourceOwner: dataSource.owner)] { return found }
        let whose = userName(of: reference.owner ?? dataSource.owner)
        throw WireError(
            .registrationNotFound,
            "Registration \"\(reference.name)\" (for \(what)) does not exist among \(whose)'s registrations"
                + (reference.owner == nil ? " (a cell provider names its data source owner's registrations unless it gives an owner)." : "."))
    }

    /// The registration `name` a read names: with `owner`, that user's; else the caller's own, and when the
    /// caller has none, the only one of that name (several users having one: `invalid-argument`, give `owner`).
    func registration(named name: String, owner: UInt32?, caller: PeerIdentity) throws(WireError) -> Registration {
        if let owner {
            guard let found = model.registration(named: name, owner: owner) else {
                throw WireError(.registrationNotFound, "Registration \"\(name)\" of \(userName(of: owner)) (uid \(owner)) does not exist.")
            }
            return found
        }
        if let own = model.registration(named: name, owner: caller.uid) { return own }
        // Bounded by maxRegistrations, and only for a name the caller has none of.
        let others = Array(registrationOrder.lazy.compactMap { self.registrations[$0] }.filter { $0.name == name }.prefix(2))
        switch others.count {
        case 0: throw WireError(.registrationNotFound, "Registration \"\(name)\" does not exist.")
        case 1: return others.first!
        default:
            throw WireError(
                .invalidArgument, "Several users have a registration \"\(name)\" and user \(caller.displayName) has none; give \"owner\" (a user name or uid).")
        }
    }

    /// `change` with what it creates owned by `uid`.
    func owned(_ change: StateChange, by uid: UInt32) -> StateChange {
        switch change {
        case .createDataSource(let name, let incarnation, var content):
            content.owner = uid
            return .createDataSource(name: name, incarnation: incarnation, content: content)
        case .dataSource(let name, let ifVersion, var creation?, let operation):
            creation.owner = uid
            return .dataSource(name: name, ifVersion: ifVersion, createAs: creation, operation)
        case .register(var registration):
            registration.owner = uid  // always in the caller's own namespace
            return .register(registration)
        case .dataSource, .dropDataSource, .replaceRegistration, .unregister:
            // A replacement or deletion names its owner (the caller's own unless it gave another).
            return change
        }
    }

    /// Refuses (`permission-denied`) a change `identity` may not make; what it would create is checked
    /// against the rules for new names, quotas later by the model.
    func authorize(_ change: StateChange, by identity: PeerIdentity) throws(WireError) {
        switch change {
        case .createDataSource(let name, _, _):
            try authorizeCreating(name, by: identity)
        case .dropDataSource(let name):
            if let dataSource = model.dataSources[name] { try require(.admin, on: dataSource, by: identity, to: "drop it") }
        case .dataSource(let name, _, let creation, let operation):
            if let dataSource = model.dataSources[name] {
                if creation != nil && !isVisible(dataSource, to: identity) {
                    // A change that would create it is answered as `createDataSource` is: refused as a
                    // reserved name is, else "already exists" (never whose it is).
                    try authorizeCreating(name, by: identity)
                    throw WireError(.dataSourceExists, "Data source \"\(name)\" already exists.")
                }
                try require(operation.requiredAccess, on: dataSource, by: identity, to: operation.purpose, forChange: true)
            } else if creation != nil {
                try authorizeCreating(name, by: identity)
            }
        case .register:
            break  // made in the caller's own namespace: another user's of that name is another registration
        case .replaceRegistration(let registration):
            // Another user's registration (named with `owner`) is the administrators' to replace, or make.
            if !policy.mayChangeRegistration(identity, ownedBy: registration.owner) {
                throw registrationDenied(registration.name, ownedBy: registration.owner, by: identity, to: "replace it")
            }
        case .unregister(let name, let owner):
            if !policy.mayChangeRegistration(identity, ownedBy: owner) {
                throw registrationDenied(name, ownedBy: owner, by: identity, to: "unregister it")
            }
        }
    }

    /// Whether `identity` may know that `dataSource` exists (it may at least read it).
    func isVisible(_ dataSource: DataSourceModel, to identity: PeerIdentity) -> Bool {
        policy.access(of: identity, toDataSource: dataSource.name, ownedBy: dataSource.owner).0 >= .read
    }

    /// Refuses when `identity` has less than `level` on `dataSource`: `permission-denied` naming the owner
    /// for a user that may read it, and for one that may not even read it exactly what a data source that
    /// does not exist gets (`forChange`: as a change of one would), so that its name and owner stay hidden.
    func require(
        _ level: AccessLevel, on dataSource: DataSourceModel, by identity: PeerIdentity, to purpose: String, forChange: Bool = false
    ) throws(WireError) {
        let (granted, reason) = policy.access(of: identity, toDataSource: dataSource.name, ownedBy: dataSource.owner)
        guard granted < level else { return }
        if granted < .read { throw StateModel.notFound(dataSource.name, forChange: forChange) }
        let owner = userName(of: dataSource.owner)
        throw WireError(
            .permissionDenied,
            "Data source \"\(dataSource.name)\" is owned by \(owner) (uid \(dataSource.owner)); user \(identity.displayName) (uid \(identity.uid)) has \(granted) access (\(reason)), and to \(purpose) needs \(level).",
            details: [
                "dataSource": .string(dataSource.name), "owner": .int(Int(dataSource.owner)), "ownerName": .string(owner),
                "access": .string(granted.description), "required": .string(level.description),
            ])
    }

    private func authorizeCreating(_ name: String, by identity: PeerIdentity) throws(WireError) {
        let (allowed, reason) = policy.mayCreate(identity, dataSource: name)
        guard !allowed else { return }
        throw WireError(
            .permissionDenied,
            "User \(identity.displayName) (uid \(identity.uid)) may not create data source \"\(ControlCharacters.escaped(name))\": \(reason.map { "\($0)" } ?? "a rule") reserves the name to users it gives write.",
            details: ["dataSource": .string(name), "required": "write"])
    }

    private func registrationDenied(_ name: String, ownedBy uid: UInt32, by identity: PeerIdentity, to purpose: String) -> WireError {
        let owner = userName(of: uid)
        return WireError(
            .permissionDenied,
            "Registration \"\(name)\" of \(owner) (uid \(uid)) is \(owner)'s; user \(identity.displayName) (uid \(identity.uid)) may name it in cell providers but not \(purpose).",
            details: ["registration": .string(name), "owner": .int(Int(uid)), "ownerName": .string(owner)])
    }

    /// Refuses when `identity` may not act on `view`, another connection's view: only its own user and
    /// administrators may.
    func authorize(view: ViewSession, by connection: any ServedConnection, to purpose: String) throws(WireError) {
        let owner = view.connection.identity
        if view.connection === connection || owner.uid == connection.identity.uid || policy.isAdministrator(connection.identity) { return }
        throw WireError(
            .permissionDenied,
            "View \"\(view.name)\" of data source \"\(view.dataSource)\" belongs to a connection of \(owner.displayName) (uid \(owner.uid)); user \(connection.identity.displayName) (uid \(connection.identity.uid)) may not \(purpose).",
            details: ["view": .string(view.name), "owner": .int(Int(owner.uid)), "ownerName": .string(owner.displayName)])
    }

    /// Whether the connection's user may read the data source.
    func canRead(_ dataSource: DataSourceModel, _ connection: any ServedConnection) -> Bool {
        policy.access(of: connection.identity, toDataSource: dataSource.name, ownedBy: dataSource.owner).level >= .read
    }

    /// After the policy changed (a reload): views whose user may no longer read their data source are
    /// detached (`dropped` with `"reason": "access"`), plugins whose user is no longer trusted are
    /// disconnected. What was allowed when it started does not outlive the rule that allowed it.
    func enforcePolicyOnOpenConnections() {
        // Display signals are the owner's: a watcher that lost write access stops getting them.
        for dataSource in dataSources.values where dataSource.display.isWatched {
            dataSource.display.keepWatchers { connection in
                policy.access(of: connection.identity, toDataSource: dataSource.name, ownedBy: dataSource.model.owner).level >= .write
            }
        }
        for connection in connections.values {
            let lost = connection.views.filter { view in
                guard let dataSource = dataSources[view.dataSource] else { return false }
                return !canRead(dataSource.model, connection)
            }
            for view in lost {
                dataSources[view.dataSource]?.detach(view: view.name)
                logger.notice(
                    "access revoked: detaching a view",
                    metadata: ["user": "\(connection.identity.displayName)", "dataSource": "\(view.dataSource)", "view": "\(view.name)"])
                connection.viewDropped(view, reason: "access")
            }
            if let plugin = connection.plugin, !policy.mayProvidePlugins(connection.identity) {
                plugin.close(reason: "user \(connection.identity.displayName) is no longer trusted to provide plugins")
            }
        }
    }

    /// Refuses a command only administrators may run.
    func requireAdministrator(_ connection: any ServedConnection, for command: String) throws(WireError) {
        guard !policy.isAdministrator(connection.identity) else { return }
        throw WireError(
            .permissionDenied,
            "\(command) is for root and the user listd runs as; user \(connection.identity.displayName) (uid \(connection.identity.uid)) may not run it.")
    }
}

extension DataSourceOperation {
    /// The access a user needs on the data source to make this change.
    var requiredAccess: AccessLevel {
        switch self {
        case .edit, .batch, .replaceSnapshot, .replaceOutline, .setExpansion: return .write
        case .setLayout, .setCellProvider, .setExpansionScope: return .admin
        }
    }

    /// What the change does, for a refusal's message.
    var purpose: String {
        switch self {
        case .edit, .batch, .replaceSnapshot: return "change its content"
        case .replaceOutline, .setExpansion: return "change its outlines"
        case .setLayout: return "set its layout"
        case .setCellProvider: return "set its cell providers"
        case .setExpansionScope: return "set its expansion scope"
        }
    }
}
