import CellCore
import ListStore
import ListWire

/// Registrations: made once, up front, and checked where cell providers name them.
extension StateModel {

    /// "cell" or "supplementary:KIND", as replies name a registration's kind.
    static func describe(_ kind: Registration.Kind) -> String {
        switch kind {
        case .cell: return "cell"
        case .supplementary(let elementKind): return "supplementary:\(elementKind)"
        }
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
        if let existing = registrations[name] {
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
                .limitExceeded, "User \(registration.owner) owns \(owned) registrations, the per-user quota (maxRegistrationsPerUser).",
                details: ["quota": "maxRegistrationsPerUser", "uid": .int(Int(registration.owner))])
        }
        registrations[name] = registration
        registrationOrder.append(name)
        adjustUsage(of: registration.owner, registrations: 1)
        outcome.createdRegistration = true
        return outcome
    }

    func checkRegistrations(of provider: CellProvider, elementKind: String?) throws(WireError) {
        for registration in provider.registrationNames {
            guard let found = registrations[registration] else {
                throw WireError(.registrationNotFound, "Registration \"\(registration)\" does not exist; register it first.")
            }
            switch (found.kind, elementKind) {
            case (.cell, nil): break
            case (.supplementary(let kind), let wanted?) where kind == wanted: break
            default:
                throw WireError(
                    .invalidArgument,
                    "Registration \"\(registration)\" is not a \(elementKind.map { "supplementary registration for \"\($0)\"" } ?? "cell registration").")
            }
        }
    }
}
