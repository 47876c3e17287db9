import CellCore
import DiffableCore
import FileSafety
import ListEngine
import ListStore
import ListWire

extension WireError {
    init(_ error: CellError) {
        let code: ErrorCode
        switch error.code {
        case .invalidRegistration: code = .invalidRegistration
        case .registrationExists: code = .registrationExists
        case .registrationNotFound: code = .registrationNotFound
        case .noRegistration: code = .noRegistration
        case .limitExceeded: code = .limitExceeded
        }
        self.init(code, error.message)
    }
}

extension CommandRouter {
    /// The largest cell provider (its rules and default, encoded), like the fixed size of templates.
    static let maximumCellProviderBytes = 64 << 10
}

extension CommandRouter {
    static var cellCommands: [Command] {
        [Command(RegisterCommand.self), Command(UnregisterCommand.self), Command(RegistrationsQuery.self), Command(StylesQuery.self), Command(ProviderCommand<CellProviderKind>.self),
         Command(ProviderCommand<SupplementaryProviderKind>.self), Command(CellProviderQuery.self), Command(DequeueCommand.self), Command(DequeueSupplementaryCommand.self), Command(EndDisplayingCommand.self), Command(SetStateCommand.self),
         Command(RegistrationQuery.self)]
    }

    /// Records an identical re-register on the connection; true when it is one too many (the seeds'
    /// pitfall), which is counted and logged once per connection and name.
    static func repeatedRegistration(_ name: String, _ context: CommandContext) -> Bool {
        switch context.connection.registrationRepeats.record(name, at: .now) {
        case .fine:
            return false
        case .firstRepeated:
            context.state.logger.notice(
                "a connection registers the same definition again and again (create registrations once, up front)",
                metadata: ["registration": "\(name)", "connection": "\(context.connection.id)"])
            fallthrough
        case .repeated:
            context.state.stats.registrationsRepeated += 1
            return true
        }
    }

    /// `"registration", "kind", "type"` members of a registration.
    static func writeIdentity(_ registration: Registration, to writer: inout JSONWriter) {
        writer.key("registration")
        writer.string(registration.name)
        writer.key("kind")
        switch registration.kind {
        case .cell: writer.string("cell")
        case .supplementary(let elementKind): writer.string("supplementary:\(elementKind)")
        }
        writer.key("type")
        writer.string(registration.contentType)
    }

    /// `"owner", "ownerName"` members: whose a registration is.
    static func writeOwner(_ uid: UInt32, state: ServerState, to writer: inout JSONWriter) {
        writer.key("owner")
        writer.int(Int(uid))
        writer.key("ownerName")
        writer.string(state.userName(of: uid))
    }

    static func writeTotals(_ totals: CellTotals, to writer: inout JSONWriter) {
        writer.key("created")
        writer.int(totals.counters.created)
        writer.key("reused")
        writer.int(totals.counters.reused)
        writer.key("displayed")
        writer.int(totals.displayed)
        writer.key("pooled")
        writer.int(totals.pooled)
        writer.key("released")
        writer.int(totals.counters.released)
        writer.key("contentConfigurationsReplaced")
        writer.int(totals.counters.contentConfigurationsReplaced)
        writer.key("neverReused")
        writer.bool(totals.counters.created > 0 && totals.counters.reused == 0)
    }

    /// A registration as a provider rule or default names it: a name (the data source owner's), or
    /// `{"name", "owner"}` with the owner a user name (looked up now) or a uid.
    static func registrationReference(_ value: JSONValue?, _ field: String) throws(WireError) -> RegistrationReference {
        let (name, owner) = try StateCoding.reference(value, field)
        return RegistrationReference(name, owner: try owner.map { value throws(WireError) in try ownerUID(value, field: "\(field).owner") })
    }

    /// The uid an `owner` names: a user name or a uid.
    static func ownerUID(_ value: JSONValue, field: String = "owner") throws(WireError) -> UInt32 {
        switch value {
        case .string(let name):
            guard let user = UserDirectory.user(named: name) else { throw WireError(.invalidArgument, "\(field): no user is called \"\(name)\".") }
            return user.uid
        case .int(let number):
            guard let uid = UInt32(exactly: number) else { throw WireError(.invalidArgument, "\(field): \(number) is not a uid.") }
            return uid
        default:
            throw WireError(.invalidArgument, "\(field) must be a user name or a uid.")
        }
    }

    /// `cellProvider`: the rules as `setCellProvider` accepts them, to read back, copy or export.

}

/// `register`: a cell registration (once, up front).
struct RegisterCommand: CommandDeclaration {
    static let about = CommandAbout("register", "Creates a cell registration (once, up front): its kind and how to configure a cell from an item.", result: "{registration, kind, type, owner, created, replaced?, warnings?}")
    static var effect: Command.Effect { .mutates }
    @Arg("The registration's name.") var registration: String
    var definition: RegistrationDefinition
    @Arg("true: give an existing registration this definition (same kind); views configure their cells of it anew.") var replace: Bool?
    @Arg("With replace: the user (name or uid) whose registration to replace; another's is for administrators. Default: the caller's own.")
    var owner: UserID?
    /// The registration the arguments define (by `validate`), and the owner's uid.
    @Prepared private var prepared: (registration: Registration, owner: UInt32?)?

    mutating func validate(_ context: CommandContext) throws(WireError) {
        let owner = owner?.uid
        if owner != nil && !(replace ?? false) {
            throw WireError(.invalidArgument, "register makes a registration of the caller's own; \"owner\" names whose to replace (with replace: true).")
        }
        do throws(CellError) {
            prepared = (try Registration(name: registration, definition: definition.json), owner)
        } catch {
            throw WireError(error)
        }
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let (name, replace, unowned, owner) = (self.registration, replace ?? false, prepared!.registration, prepared!.owner)
        // In the caller's namespace (a replacement: in the one `owner` names).
        var registration = unowned
        registration.owner = owner ?? context.connection.identity.uid
        return try context.state.commit(replace ? .replaceRegistration(registration) : .register(registration), connection: context.connection) {
            applied in
            let (created, replaced) = (applied.outcome.createdRegistration, applied.outcome.replacedRegistration)
            let repeated = !created && !replaced && CommandRouter.repeatedRegistration(name, context)
            return CommandResult { writer in
                CommandRouter.writeIdentity(registration, to: &writer)
                CommandRouter.writeOwner(registration.owner, state: context.state, to: &writer)
                writer.key("created")
                writer.bool(created)
                if replaced {
                    writer.key("replaced")
                    writer.bool(true)
                }
                if repeated {
                    writer.key("warnings")
                    writer.value([[
                        "code": "registration-repeated",
                        "message": .string(
                            "Registration \"\(name)\" was registered again with the same definition more than \(RegistrationRepeats.allowed) times in \(RegistrationRepeats.window.components.seconds) s on this connection: create registrations once, up front, not in the cell provider."),
                        "identifiers": [.string(name)],
                    ]])
                }
            }
        }
    }
}

/// What `register` defines a registration with: the members of its stored definition.
struct RegistrationDefinition: ArgumentGroup {
    @Arg("\"cell\" (default) or \"supplementary\".", type: "string") var kind: JSONValue?
    @Arg("For supplementary registrations: e.g. \"header\", \"footer\".", type: "string") var elementKind: JSONValue?
    @Arg(
        "A list style and its properties (every key known; see \"Configuration keys\"); strings may be Mustache templates.", type: "{type, …}",
        documentedAsRequired: true) var contentConfiguration: JSONValue?
    @Arg("listPlainCell, listGroupedCell, listSidebarCell or clear, with its properties (see \"Configuration keys\").", type: "{type, …}")
    var background: JSONValue?
    @Arg(
        "disclosureIndicator, outlineDisclosure, checkmark, delete, insert, reorder, multiselect, label, detail, popUpMenu, customView, with their options (see \"Configuration keys\").",
        type: "[{type, displayed?, hidden?, tintColor?, reservedLayoutWidth?, …}]") var accessories: JSONValue?

    /// The definition object: the members given, under their argument names.
    var json: JSONValue {
        let members: [(ArgumentName, JSONValue?)] = [
            (.kind, kind), (.elementKind, elementKind), (.contentConfiguration, contentConfiguration), (.background, background), (.accessories, accessories),
        ]
        return .object(Dictionary(uniqueKeysWithValues: members.compactMap { key, value in value.map { (key.rawValue, $0) } }))
    }
}

/// `registration`: one registration, with its definition and cell counters.
struct RegistrationQuery: CommandDeclaration {
    static let about = CommandAbout("registration", "One registration: its kind, owner, definition and cell counters over all views.", result: "{registration, kind, type, owner, ownerName, definition, created, reused, displayed, pooled, released, contentConfigurationsReplaced, neverReused}")
    @Arg("The registration.") var registration: String
    var owner: RegistrationOwner

    init() { owner = RegistrationOwner("The user (name or uid) whose registration it is. Default: the caller's own, else the only one of that name.") }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let name = registration
        let owner = owner.owner?.uid
        let state = context.state
        let registration = try state.registration(named: name, owner: owner, caller: context.connection.identity)
        let totals = state.cellTotals(registration: registration.key)
        return CommandResult { writer in
            CommandRouter.writeIdentity(registration, to: &writer)
            CommandRouter.writeOwner(registration.owner, state: state, to: &writer)
            writer.key("definition")
            writer.value(registration.definition)
            CommandRouter.writeTotals(totals, to: &writer)
        }
    }
}

/// `unregister`: a registration deleted, its pools drained.
struct UnregisterCommand: CommandDeclaration {
    static let about = CommandAbout("unregister", "Deletes a registration (the caller's own, or with owner another user's: administrators) and drains its reuse pools in every view.", result: "{registration, owner, ownerName, drained}")
    static var effect: Command.Effect { .mutates }
    @Arg("The registration.") var registration: String
    var owner: RegistrationOwner

    init() { owner = RegistrationOwner("The user (name or uid) whose registration to delete; another's is for administrators. Default: the caller's own.") }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let name = registration
        let owner = owner.owner?.uid
        let state = context.state
        let uid = owner ?? context.connection.identity.uid
        let key = Registration.key(owner: uid, name: name)
        // The cells its pools and views hold, which the commit drains.
        var drained = 0
        for dataSource in state.dataSources.values {
            for view in dataSource.attachedViews { drained += view.cells.cells.values.filter { $0.registration == key }.count }
        }
        return try state.commit(.unregister(name: name, owner: uid), connection: context.connection) { _ in
            CommandResult { writer in
                writer.key("registration")
                writer.string(name)
                CommandRouter.writeOwner(uid, state: state, to: &writer)
                writer.key("drained")
                writer.int(drained)
            }
        }
    }
}

/// The `owner` argument of the registration commands: a user name or uid.
struct RegistrationOwner: ArgumentGroup {
    @Arg var owner: UserID?

    /// The documentation instance.
    init(_ summary: String) { _owner = Arg(summary) }
}

/// A user given by name (looked up now) or uid.
struct UserID: JSONArgumentValue {
    var uid: UInt32

    static var wireType: String { "string or integer" }

    static func decode(_ value: JSONValue, name: String) throws(WireError) -> UserID {
        UserID(uid: try CommandRouter.ownerUID(value, field: name))
    }
}

/// `setCellProvider` and `setSupplementaryProvider`: the rules that pick registrations.
struct ProviderCommand<Kind: ProviderKind>: CommandDeclaration {
    static var about: CommandAbout { Kind.about }
    static var effect: Command.Effect { .mutates }
    @Arg("The data source.") var dataSource: String
    var kind: Kind
    @Arg(
        "In order; match compares a payload field (a dotted path); reorderable lets views move the items the rule takes (reorder). A registration is a name among the data source owner's registrations, or {name, owner} (a user name or uid) for another user's. Default: none.",
        type: "[{section?, match?: {field, equals}, registration, reorderable?}]") var rules: JSONValue?
    @Arg("The registration when no rule matches (give rules, default or both).", type: "string or {name, owner}") var `default`: JSONValue?
    /// The provider the arguments make (by `validate`).
    @Prepared private var provider: CellProvider?

    mutating func validate(_ context: CommandContext) throws(WireError) {
        var parsed: [CellProvider.Rule] = []
        let (given, fallbackValue, supplementary) = (rules, `default`, Kind.supplementary)
        guard given != nil || fallbackValue != nil else {
            throw WireError(.invalidArgument, "Give \"rules\", \"default\" or both.")
        }
        guard case .array(let ruleValues) = given ?? .array([]) else { throw WireError(.invalidArgument, "\"rules\" must be an array.") }
        for (index, value) in ruleValues.enumerated() {
            guard case .object(let members) = value, members["registration"] != nil else {
                throw WireError(.invalidArgument, "rules[\(index)] must be an object with a \"registration\".")
            }
            if let unknown = members.keys.filter({ !["section", "match", "registration", "reorderable"].contains($0) }).min() {
                throw WireError(.invalidArgument, "Unknown member \"\(unknown)\" in rules[\(index)].")
            }
            var rule = CellProvider.Rule(reference: try CommandRouter.registrationReference(members["registration"], "rules[\(index)].registration"))
            switch members["section"] {
            case nil, .null?: break
            case .string(let section)?: rule.section = section
            default: throw WireError(.invalidArgument, "rules[\(index)].section must be a string.")
            }
            switch members["match"] {
            case nil, .null?: break
            case .object(let match)? where match.count == 2:
                guard case .string(let field)? = match["field"], let equals = match["equals"] else { fallthrough }
                rule.match = (field, equals)
            default: throw WireError(.invalidArgument, "rules[\(index)].match must be {\"field\": …, \"equals\": …}.")
            }
            switch members["reorderable"] {
            case nil, .null?: break
            case .bool(let flag)? where !supplementary || !flag: rule.reorderable = flag
            case .bool?: throw WireError(.invalidArgument, "rules[\(index)].reorderable: supplementary views are not reordered.")
            default: throw WireError(.invalidArgument, "rules[\(index)].reorderable must be a boolean.")
            }
            parsed.append(rule)
        }
        let fallback = try fallbackValue.map { value throws(WireError) in try CommandRouter.registrationReference(value, "default") }
        let provider = CellProvider(rules: parsed, defaultReference: fallback)
        // Rules are kept per data source and element kind, outside maxBytesPerUser: their size is
        // bounded as a registration's templates are.
        let size = StateCoding.json(provider).jsonBytes.count
        guard size <= CommandRouter.maximumCellProviderBytes else {
            throw WireError(
                .limitExceeded, "The cell provider's rules take \(size) bytes; the limit is \(CommandRouter.maximumCellProviderBytes) bytes.")
        }
        self.provider = provider
    }

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        // Names resolve in the data source owner's namespace when used; an owner given is stored
        // with the name, so what is replayed (or followed by another instance) names the same.
        let (name, elementKind, provider) = (dataSource, kind.selectedElementKind, provider!)
        return try context.state.commit(
            .dataSource(name: name, ifVersion: nil, createAs: nil, .setCellProvider(provider, elementKind: elementKind)),
            connection: context.connection
        ) { applied in
            CommandResult(
                reply: .dataSource(name, after: applied.outcome) { writer in
                    writer.key("rules")
                    writer.int(provider.rules.count)
                })
        }
    }
}

/// Which provider a provider command sets: the cells' (no further argument) or one element kind's.
protocol ProviderKind: ArgumentGroup {
    static var about: CommandAbout { get }
    static var supplementary: Bool { get }
    init()
    /// The element kind whose provider it sets (`nil`: the cells').
    var selectedElementKind: String? { get }
}

struct CellProviderKind: ProviderKind {
    static let about = CommandAbout("setCellProvider", "Sets the rules that pick each item's registration: the first matching rule wins, then the default.", result: "{dataSource, version, rules}")
    static let supplementary = false
    var selectedElementKind: String? { nil }
}

struct SupplementaryProviderKind: ProviderKind {
    static let about = CommandAbout("setSupplementaryProvider", "Sets the rules that pick a supplementary registration for a section's element of one kind.", result: "{dataSource, version, rules}")
    static let supplementary = true
    @Arg("e.g. \"header\".") var elementKind: String
    var selectedElementKind: String? { elementKind }
}

/// `registrations`: every user's registrations.
struct RegistrationsQuery: CommandDeclaration {
    static let about = CommandAbout("registrations", "Lists every user's registrations with their owners, definitions and cell counters over all views.", result: "{registrations: [{registration, kind, type, owner, ownerName, definition, created, reused, displayed, pooled, released, contentConfigurationsReplaced, neverReused}]}")
    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let state = context.state
        return CommandResult { writer in
            writer.key("registrations")
            writer.beginArray()
            for key in state.registrationOrder {
                let registration = state.registrations[key]!
                let totals = state.cellTotals(registration: key)
                writer.beginObject()
                CommandRouter.writeIdentity(registration, to: &writer)
                CommandRouter.writeOwner(registration.owner, state: state, to: &writer)
                writer.key("definition")
                writer.value(registration.definition)
                CommandRouter.writeTotals(totals, to: &writer)
                writer.endObject()
            }
            writer.endArray()
        }
    }
}

/// `styles`: every built-in style's defaults, which a view merges under a cell's content.
struct StylesQuery: CommandDeclaration {
    static let about = CommandAbout("styles", "The built-in content styles with their default properties (a cell's content lists only what differs), backgrounds and accessories.", result: "{content: {style: defaults}, backgrounds: {style: defaults}, accessories: {kind: displayed}}")
    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        CommandResult { writer in
            writer.key("content")
            writer.value(.object(Dictionary(uniqueKeysWithValues: ListContentStyle.allCases.map { ($0.rawValue, JSONValue.object($0.defaults)) })))
            writer.key("backgrounds")
            writer.value(.object(Dictionary(uniqueKeysWithValues: BackgroundStyle.allCases.map { ($0.rawValue, JSONValue.object($0.defaults)) })))
            writer.key("accessories")
            writer.value(.object(Dictionary(uniqueKeysWithValues: AccessoryKind.allCases.map { ($0.rawValue, JSONValue.string($0.defaultDisplayed)) })))
        }
    }
}

/// `cellProvider`: the rules as `setCellProvider` accepts them, to read back, copy or export.
struct CellProviderQuery: CommandDeclaration {
    static let about = CommandAbout("cellProvider", "A data source's cell provider (or its supplementary provider for elementKind) as setCellProvider accepts it; no rules and no default: every item shows the default presentation. Without elementKind, supplementaryKinds lists the element kinds that have a supplementary provider (when any).", result: "{dataSource, version, rules, default?, supplementaryKinds?}")
    @Arg("The data source.") var dataSource: String
    @Arg("The supplementary provider of this element kind instead.") var elementKind: String?

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let name = self.dataSource
        let dataSource = try context.dataSource(name)
        let provider = elementKind.map { dataSource.model.supplementaryProviders[$0] } ?? dataSource.model.cellProvider
        let json = StateCoding.json(provider ?? CellProvider(rules: [], defaultRegistration: nil))
        let version = dataSource.version
        return CommandResult { writer in
            writer.key("dataSource")
            writer.string(name)
            writer.key("version")
            writer.int(version)
            writer.key("rules")
            writer.value(json["rules"] ?? .array([]))
            if let fallback = json["default"] {
                writer.key("default")
                writer.value(fallback)
            }
            // Without elementKind: the element kinds that have a supplementary provider, to read next.
            if elementKind == nil && !dataSource.model.supplementaryProviders.isEmpty {
                writer.key("supplementaryKinds")
                writer.strings(dataSource.model.supplementaryProviders.keys.sorted())
            }
        }
    }
}
