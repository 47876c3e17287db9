import CellCore
import DiffableCore
@testable import ListEngine
import ListStore
import ListWire
import Testing

/// Registrations are kept per owner (issue 46, finding 5): two users may each have a registration of one
/// name; a provider resolves names in its data source owner's namespace and another's only explicitly.
@Suite("State model: registrations in their owners' namespaces")
struct RegistrationNamespaceTests {
    var limits: ChangeLimits {
        var limits = ChangeLimits(maximumDataSources: 100, maximumItemsPerDataSource: 1_000, maximumIdentifierBytes: 64, maximumRegistrations: 50)
        limits.quota = OwnerQuota(maximumDataSources: 5, maximumItems: 100, maximumRegistrations: 1)
        return limits
    }

    func row(_ owner: UInt32, text: String = "{{title}}") throws -> Registration {
        var registration = try Registration(name: "row", definition: ["contentConfiguration": ["type": "cell", "text": .string(text)]])
        registration.owner = owner
        return registration
    }

    func code(_ change: StateChange, _ model: StateModel) -> ErrorCode? {
        do throws(WireError) {
            _ = try model.apply(change, limits: limits)
            return nil
        } catch {
            return error.code
        }
    }

    func quota(_ change: StateChange, _ model: StateModel) -> String? {
        do throws(WireError) {
            _ = try model.apply(change, limits: limits)
            return nil
        } catch {
            return error.details["quota"]?.stringValue
        }
    }

    /// The identical definition registered by a second user makes that user's own (never "unchanged"
    /// against the first's); replacing and unregistering touch one namespace; each quota counts its own.
    @Test func twoUsersEachHaveARegistrationOfOneName() throws {
        let model = StateModel()
        #expect(try model.apply(.register(row(65534)), limits: limits).createdRegistration)
        #expect(try model.apply(.register(row(1)), limits: limits).createdRegistration, "the same definition, another user: created")
        #expect(try !model.apply(.register(row(1)), limits: limits).createdRegistration, "the same user again: unchanged")
        #expect(model.registrationOrder == ["65534:row", "1:row"])
        #expect(model.usage(of: 65534).registrations == 1 && model.usage(of: 1).registrations == 1)
        // Each at its quota of one; a third user may still register.
        var other = try Registration(name: "other", definition: ["contentConfiguration": ["type": "cell"]])
        other.owner = 1
        #expect(quota(.register(other), model) == "maxRegistrationsPerUser")
        other.owner = 2
        #expect(code(.register(other), model) == nil)

        #expect(try model.apply(.replaceRegistration(row(65534, text: "HACKED")), limits: limits).replacedRegistration)
        #expect(model.registration(named: "row", owner: 1)?.definition == (try row(1)).definition, "bob's stays")
        _ = try model.apply(.unregister(name: "row", owner: 65534), limits: limits)
        #expect(model.registration(named: "row", owner: 1) != nil && model.registration(named: "row", owner: 65534) == nil)
        #expect(code(.unregister(name: "row", owner: 65534), model) == .registrationNotFound)
    }

    /// A provider's names are looked up among its data source owner's registrations; another user's is
    /// named with its owner.
    @Test func aProviderNamesItsOwnersRegistrationsUnlessItGivesAnOwner() throws {
        let model = StateModel()
        _ = try model.apply(.register(row(65534)), limits: limits)
        _ = try model.apply(.createDataSource(name: "bobs", incarnation: "i", content: DataSourceContent(owner: 1)), limits: limits)
        let implicit = CellProvider(rules: [], defaultRegistration: "row")
        #expect(code(.dataSource(name: "bobs", ifVersion: nil, createAs: nil, .setCellProvider(implicit, elementKind: nil)), model) == .registrationNotFound)
        let explicit = CellProvider(rules: [], defaultReference: RegistrationReference("row", owner: 65534))
        #expect(code(.dataSource(name: "bobs", ifVersion: nil, createAs: nil, .setCellProvider(explicit, elementKind: nil)), model) == nil)
        _ = try model.apply(.register(row(1)), limits: limits)
        #expect(code(.dataSource(name: "bobs", ifVersion: nil, createAs: nil, .setCellProvider(implicit, elementKind: nil)), model) == nil)
        #expect(implicit.names(key: "1:row", dataSourceOwner: 1) && !implicit.names(key: "65534:row", dataSourceOwner: 1))
    }

    /// Records carry the key; a stored state (registrations keyed by name only, owners in the records)
    /// loads with each in its owner's namespace; a provider stored with `owners` (bound before
    /// namespaces) names those owners explicitly; the new encoding round-trips.
    @Test func storedRegistrationsAndProvidersKeepTheirOwners() throws {
        let model = StateModel()
        let outcome = try model.apply(.register(row(1)), limits: limits)
        guard case .register(let key, _)? = try model.records(of: .register(row(1)), outcome: outcome, event: nil).first else {
            Issue.record("a register record")
            return
        }
        #expect(key == "1:row")
        #expect(try model.records(of: .unregister(name: "row", owner: 1), outcome: ChangeOutcome(), event: nil).first.map { "\($0)" } == "\(StoreRecord.unregister(name: "1:row"))")

        let loaded = try StateModel(loading: StoredState(registrations: [try row(65534), try row(1)]))
        #expect(loaded.registrationOrder == ["65534:row", "1:row"] && loaded.usage(of: 1).registrations == 1)

        let legacy: JSONValue = ["rules": [["registration": "card"]], "default": "row", "owners": ["card": 65534]]
        var content = DataSourceContent(owner: 1, version: 1)
        content.cellProvider = CellProvider(rules: [.init(registration: "card")], defaultRegistration: "row")
        var encoded = try #require(JSONParserValue(StateCoding.encode(content)))
        encoded["cellProvider"] = legacy
        let decoded = try StateCoding.decodeContent(encoded.jsonBytes)
        #expect(decoded.cellProvider?.references == [RegistrationReference("card", owner: 65534), RegistrationReference("row")])
        #expect(StateCoding.json(decoded.cellProvider!)["rules"] == [["registration": ["name": "card", "owner": 65534]]])
        #expect(try StateCoding.decodeContent(StateCoding.encode(decoded)).cellProvider == decoded.cellProvider)
        #expect(Registration.name(ofKey: "65534:a:b") == "a:b" && Registration.name(ofKey: DefaultPresentation.name) == DefaultPresentation.name)
    }
}

/// The stored content as a JSON object, to edit.
private func JSONParserValue(_ bytes: [UInt8]) -> [String: JSONValue]? {
    guard case .object(let members)? = try? JSONParser.parse(bytes) else { return nil }
    return members
}

extension Dictionary where Key == String, Value == JSONValue {
    fileprivate var jsonBytes: [UInt8] { JSONValue.object(self).jsonBytes }
}
