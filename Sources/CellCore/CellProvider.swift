import DiffableCore

/// A registration as a cell provider names it: a name in the data source owner's namespace, or
/// (with `owner`) in another user's, named explicitly (`{"name": "row", "owner": 1000}`).
public struct RegistrationReference: Hashable, Sendable, ExpressibleByStringLiteral {
    public var name: String
    /// The uid of the user whose registration it is; `nil`: the data source owner's.
    public var owner: UInt32?

    public init(_ name: String, owner: UInt32? = nil) {
        self.name = name
        self.owner = owner
    }

    /// A name in the data source owner's namespace.
    public init(stringLiteral name: String) {
        self.init(name)
    }

    /// The key of the registration meant (see `Registration.key`), for a data source owned by `dataSourceOwner`.
    public func key(dataSourceOwner: UInt32) -> String {
        name == DefaultPresentation.name ? name : Registration.key(owner: owner ?? dataSourceOwner, name: name)
    }
}

/// A data source's cell provider, as rules (the `switch` inside a `cellProvider` closure): the first rule
/// that matches an item names its registration; `default` catches the rest. Names are looked up in the
/// data source owner's namespace; another user's registration is named with its owner.
///
/// ```json
/// {"rules": [{"section": "consult", "registration": "consultCell"},
///            {"match": {"field": "kind", "equals": "premium"}, "registration": {"name": "premiumCell", "owner": 0}}],
///  "default": "plainCell"}
/// ```
public struct CellProvider: Hashable, Sendable {
    public struct Rule: Hashable, Sendable {
        /// Only items of this section, when set.
        public var section: String?
        /// Only items whose payload has `equals` at the dotted path `field`, when set.
        public var match: (field: String, equals: JSONValue)? {
            get { matchField.map { ($0, matchValue) } }
            set {
                matchField = newValue?.field
                matchValue = newValue?.equals ?? .null
            }
        }
        private var matchField: String?
        private var matchValue: JSONValue = .null
        /// The registration's name.
        public var registration: String { reference.name }
        /// The registration the rule picks.
        public var reference: RegistrationReference
        /// Items this rule takes may be moved by a view (`reorder`): UIKit's `reorderingHandlers.canReorderItem`.
        public var reorderable = false

        public init(section: String? = nil, match: (field: String, equals: JSONValue)? = nil, registration: String, reorderable: Bool = false) {
            self.init(section: section, match: match, reference: RegistrationReference(registration), reorderable: reorderable)
        }

        public init(section: String? = nil, match: (field: String, equals: JSONValue)? = nil, reference: RegistrationReference, reorderable: Bool = false) {
            self.section = section
            self.reference = reference
            self.match = match
            self.reorderable = reorderable
        }

        func matches(item: Item, section: String) -> Bool {
            matches(section: section) { item.data }
        }

        /// Whether the rule takes an item of `section` whose payload `data` gives (read only when the
        /// rule matches a field).
        func matches(section: String, data: () -> JSONValue) -> Bool {
            if let wanted = self.section, wanted != section { return false }
            if let field = matchField, data().value(atPath: field) != matchValue { return false }
            return true
        }
    }

    public var rules: [Rule]
    /// The registration when no rule matches.
    public var defaultReference: RegistrationReference?
    /// The default registration's name.
    public var defaultRegistration: String? { defaultReference?.name }

    public init(rules: [Rule] = [], defaultRegistration: String? = nil) {
        self.init(rules: rules, defaultReference: defaultRegistration.map { RegistrationReference($0) })
    }

    public init(rules: [Rule], defaultReference: RegistrationReference?) {
        self.rules = rules
        self.defaultReference = defaultReference
    }

    /// The registration for an item of a section, or `nil` when nothing matches. O(rules).
    public func registration(for item: Item, inSection section: String) -> RegistrationReference? {
        rules.first { $0.matches(item: item, section: section) }?.reference ?? defaultReference
    }

    /// `registration(for:inSection:)` for an item whose payload is packed: the payload is rebuilt only
    /// when a rule matches on a field, and then once.
    public func registration(forItem id: String, payload: PackedPayload, inSection section: String) -> RegistrationReference? {
        rule(forPayload: payload, inSection: section)?.reference ?? defaultReference
    }

    /// `canReorder(_:inSection:)` for an item whose payload is packed.
    public func canReorder(payload: PackedPayload, inSection section: String) -> Bool {
        rule(forPayload: payload, inSection: section)?.reorderable ?? false
    }

    /// `registration(forItem:payload:inSection:)` and `canReorder(payload:inSection:)` in one pass over
    /// the rules (what `dequeue` needs for each cell).
    public func cellRule(forPayload payload: PackedPayload, inSection section: String) -> (registration: RegistrationReference?, reorderable: Bool) {
        let rule = rule(forPayload: payload, inSection: section)
        return (rule?.reference ?? defaultReference, rule?.reorderable ?? false)
    }

    /// The first rule that takes an item with this packed payload (rebuilt only when a rule matches on a
    /// field, and then once).
    private func rule(forPayload payload: PackedPayload, inSection section: String) -> Rule? {
        var rebuilt: JSONValue?
        func data() -> JSONValue {
            if let rebuilt { return rebuilt }
            rebuilt = payload.value
            return rebuilt!
        }
        return rules.first { $0.matches(section: section, data: data) }
    }

    /// Whether a view may move the item (`canReorderItem`): the first rule that takes it in `section`
    /// says so; an item no rule takes (the default registration) may not be moved.
    public func canReorder(_ item: Item, inSection section: String) -> Bool {
        rules.first { $0.matches(item: item, section: section) }?.reorderable ?? false
    }

    /// Every registration the provider names.
    public var references: [RegistrationReference] { rules.map(\.reference) + (defaultReference.map { [$0] } ?? []) }

    /// The names of every registration the provider names (in any namespace).
    public var registrationNames: [String] { references.map(\.name) }

    /// Whether the provider of a data source owned by `dataSourceOwner` names the registration of this
    /// key (`Registration.key`). O(rules).
    public func names(key: String, dataSourceOwner: UInt32) -> Bool {
        references.contains { $0.key(dataSourceOwner: dataSourceOwner) == key }
    }

    /// The provider with every registration named without an owner given `owner` (a provider stored
    /// before registrations had namespaces, bound to the owners it named then: see `StateCoding`).
    public func binding(_ owners: [String: UInt32]) -> CellProvider {
        var bound = self
        for index in bound.rules.indices { bound.rules[index].reference.bind(owners) }
        bound.defaultReference?.bind(owners)
        return bound
    }
}

extension RegistrationReference {
    /// Gives the owner `owners` names for this name, unless it has one.
    mutating func bind(_ owners: [String: UInt32]) {
        if owner == nil { owner = owners[name] }
    }
}
