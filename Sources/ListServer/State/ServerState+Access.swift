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
    func identity(of connection: ConnectionHandler?) -> PeerIdentity { connection?.identity ?? serviceIdentity }

    /// The user name of `uid` for messages (cached), else the number.
    func userName(of uid: UInt32) -> String {
        userNames.name(of: uid) ?? String(uid)
    }

    /// Refuses `registration` for a provider set when a registration of that name belonged to someone
    /// else (it was unregistered and another user took the name): `registration-not-found`, as for a
    /// missing one, until the data source's owner sets the provider again.
    func checkBinding(of provider: CellProvider, to registration: Registration, for what: String) throws(WireError) {
        guard !provider.serves(registration.name, owner: registration.owner) else { return }
        let meant = provider.registrationOwners[registration.name].map(userName(of:)) ?? "?"
        throw WireError(
            .registrationNotFound,
            "Registration \"\(registration.name)\" (for \(what)) is not the one the cell provider was set with: that one was \(meant)'s and is gone; this one is \(userName(of: registration.owner))'s. Set the cell provider again to use it.")
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
            registration.owner = uid
            return .register(registration)
        case .replaceRegistration(var registration):
            registration.owner = uid  // when it makes one; a replaced one keeps its owner
            return .replaceRegistration(registration)
        case .dataSource, .dropDataSource, .unregister:
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
        case .register(let registration):
            // Registering an identical definition again changes nothing, so anyone may; another definition
            // under a taken name is the owner's (or an administrator's) to make.
            if let existing = model.registrations[registration.name], existing.definition != registration.definition,
                !policy.mayChangeRegistration(identity, ownedBy: existing.owner)
            {
                throw registrationDenied(existing, by: identity, to: "register another definition under its name")
            }
        case .replaceRegistration(let registration):
            if let existing = model.registrations[registration.name], existing.definition != registration.definition,
                !policy.mayChangeRegistration(identity, ownedBy: existing.owner)
            {
                throw registrationDenied(existing, by: identity, to: "replace it")
            }
        case .unregister(let name):
            if let existing = model.registrations[name], !policy.mayChangeRegistration(identity, ownedBy: existing.owner) {
                throw registrationDenied(existing, by: identity, to: "unregister it")
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

    private func registrationDenied(_ registration: Registration, by identity: PeerIdentity, to purpose: String) -> WireError {
        let owner = userName(of: registration.owner)
        return WireError(
            .permissionDenied,
            "Registration \"\(registration.name)\" is owned by \(owner) (uid \(registration.owner)); user \(identity.displayName) (uid \(identity.uid)) may use it but not \(purpose).",
            details: ["registration": .string(registration.name), "owner": .int(Int(registration.owner)), "ownerName": .string(owner)])
    }

    /// Refuses when `identity` may not act on `view`, another connection's view: only its own user and
    /// administrators may.
    func authorize(view: ViewSession, by connection: ConnectionHandler, to purpose: String) throws(WireError) {
        let owner = view.connection.identity
        if view.connection === connection || owner.uid == connection.identity.uid || policy.isAdministrator(connection.identity) { return }
        throw WireError(
            .permissionDenied,
            "View \"\(view.name)\" of data source \"\(view.dataSource)\" belongs to a connection of \(owner.displayName) (uid \(owner.uid)); user \(connection.identity.displayName) (uid \(connection.identity.uid)) may not \(purpose).",
            details: ["view": .string(view.name), "owner": .int(Int(owner.uid)), "ownerName": .string(owner.displayName)])
    }

    /// Whether the connection's user may read the data source.
    func canRead(_ dataSource: DataSourceModel, _ connection: ConnectionHandler) -> Bool {
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
    func requireAdministrator(_ connection: ConnectionHandler, for command: String) throws(WireError) {
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
