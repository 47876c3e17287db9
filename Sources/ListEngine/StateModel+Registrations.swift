import CellCore
import ListStore
import ListWire

/// Registrations: made once, up front, each in its owner's namespace (keyed by owner and name, see
/// `Registration.key`), and checked where cell providers name them.
extension StateModel {

    /// "cell" or "supplementary:KIND", as replies name a registration's kind.
    static func describe(_ kind: Registration.Kind) -> String {
        switch kind {
        case .cell: return "cell"
        case .supplementary(let elementKind): return "supplementary:\(elementKind)"
        }
    }

    /// The registration `name` of the user `owner`, if there is one.
    public func registration(named name: String, owner: UInt32) -> Registration? {
        registrations[Registration.key(owner: owner, name: name)]
    }

    /// `register`: a new registration in its owner's namespace, or nothing when the owner has an
    /// identical one (only the owner's own counts: another user's of that name is another registration).
    func applyRegister(_ registration: Registration, limits: ChangeLimits, recordingUndo: Bool) throws(WireError) -> ChangeOutcome {
        var outcome = try register(registration, limits: limits)
        if recordingUndo { outcome.undo = ChangeUndo(step: outcome.createdRegistration ? .registered(key: registration.key) : .nothing) }
        return outcome
    }

    /// `register` with `replace`: the owner's registration of that name gets the new definition (same
    /// kind; its place stays), or is made when there is none.
    func applyReplace(_ registration: Registration, limits: ChangeLimits, recordingUndo: Bool) throws(WireError) -> ChangeOutcome {
        guard let existing = registrations[registration.key] else {
            return try applyRegister(registration, limits: limits, recordingUndo: recordingUndo)  // nothing to replace: made as register makes it
        }
        guard existing.kind == registration.kind else {
            throw WireError(
                .invalidArgument,
                "Registration \"\(registration.name)\" is a \(Self.describe(existing.kind)) registration; a replacement keeps its kind (unregister it to make a \(Self.describe(registration.kind)) one).")
        }
        var outcome = ChangeOutcome()
        if existing.definition != registration.definition {
            try checkBytes(
                replacing: existing.storedBytes, with: registration.storedBytes, owner: registration.owner, limits, part: .registrations)
            registrations[registration.key] = registration
            chargeRegistration(existing, sign: -1)
            chargeRegistration(registration, sign: 1)
            outcome.replacedRegistration = true
        }
        if recordingUndo { outcome.undo = ChangeUndo(step: outcome.replacedRegistration ? .replaced(existing) : .nothing) }
        return outcome
    }

    /// `unregister`: deletes the registration `name` of the user `owner`.
    func applyUnregister(name: String, owner: UInt32, recordingUndo: Bool) throws(WireError) -> ChangeOutcome {
        let key = Registration.key(owner: owner, name: name)
        guard let removed = registrations.removeValue(forKey: key) else {
            throw WireError(.registrationNotFound, "Registration \"\(name)\" of uid \(owner) does not exist.")
        }
        adjustUsage(of: removed.owner, registrations: -1)
        chargeRegistration(removed, sign: -1)
        let position = registrationOrder.firstIndex(of: key) ?? registrationOrder.count
        registrationOrder.remove(at: position)
        var outcome = ChangeOutcome()
        if recordingUndo { outcome.undo = ChangeUndo(step: .unregistered(removed, position: position)) }
        return outcome
    }

    func register(_ registration: Registration, limits: ChangeLimits) throws(WireError) -> ChangeOutcome {
        let name = registration.name
        if name.isEmpty || name.utf8.count > limits.maximumIdentifierBytes {
            throw WireError(.invalidArgument, "A registration name must have 1 to \(limits.maximumIdentifierBytes) bytes.")
        }
        if limits.maximumIdentifierBytes < .max, let error = ControlCharacters.error("registration", name) { throw error }
        if name == DefaultPresentation.name {
            throw WireError(.invalidArgument, "\"\(name)\" is the default presentation's name; choose another registration name.")
        }
        var outcome = ChangeOutcome()
        if let existing = registrations[registration.key] {
            guard existing.definition == registration.definition else {
                throw WireError(
                    .registrationExists,
                    "Registration \"\(name)\" exists with another definition. Registrations are created once, up front; to change it, register it with replace: true (views configure their cells anew).")
            }
            return outcome
        }
        guard registrations.count < limits.maximumRegistrations else {
            throw WireError(
                .limitExceeded,
                "listd holds \(registrations.count) registrations, its limit. Create registrations up front and reuse them, not one per dequeue.")
        }
        let owned = usage(of: registration.owner).registrations
        if OwnerQuota.applies(to: registration.owner), owned >= limits.quota.maximumRegistrations {
            throw WireError(
                .quotaExceeded, "User \(registration.owner) owns \(owned) registrations, the per-user quota (maxRegistrationsPerUser).",
                details: ["quota": "maxRegistrationsPerUser", "uid": .int(Int(registration.owner)), "limit": .int(limits.quota.maximumRegistrations)])
        }
        try checkBytes(replacing: 0, with: registration.storedBytes, owner: registration.owner, limits, part: .registrations)
        registrations[registration.key] = registration
        registrationOrder.append(registration.key)
        adjustUsage(of: registration.owner, registrations: 1)
        chargeRegistration(registration, sign: 1)
        outcome.createdRegistration = true
        return outcome
    }

    /// Adds (`sign` 1) or removes (-1) what `registration` holds to its owner's account.
    func chargeRegistration(_ registration: Registration, sign: Int) {
        accounts.charge(AccountHolder(uid: registration.owner), .registrations, sign * registration.storedBytes)
    }

    /// Refuses a provider of a data source owned by `dataSourceOwner` that names a registration that does
    /// not exist (in the namespace it is looked up in) or is of another kind.
    func checkRegistrations(of provider: CellProvider, elementKind: String?, dataSourceOwner: UInt32) throws(WireError) {
        for reference in provider.references {
            guard let found = registrations[reference.key(dataSourceOwner: dataSourceOwner)] else {
                throw WireError(
                    .registrationNotFound,
                    reference.owner.map { "Registration \"\(reference.name)\" of uid \($0) does not exist." }
                        ?? "Registration \"\(reference.name)\" does not exist among the data source owner's (uid \(dataSourceOwner)); register it first, or name another user's as {\"name\": …, \"owner\": …}.")
            }
            switch (found.kind, elementKind) {
            case (.cell, nil): break
            case (.supplementary(let kind), let wanted?) where kind == wanted: break
            default:
                throw WireError(
                    .invalidArgument,
                    "Registration \"\(reference.name)\" is not a \(elementKind.map { "supplementary registration for \"\($0)\"" } ?? "cell registration").")
            }
        }
    }
}
