import DiffableCore

/// A data source's cell provider, as rules (the `switch` inside a `cellProvider` closure): the first rule
/// that matches an item names its registration; `default` catches the rest.
///
/// ```json
/// {"rules": [{"section": "consult", "registration": "consultCell"},
///            {"match": {"field": "kind", "equals": "premium"}, "registration": "premiumCell"}],
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
        public var registration: String
        /// Items this rule takes may be moved by a view (`reorder`): UIKit's `reorderingHandlers.canReorderItem`.
        public var reorderable = false

        public init(section: String? = nil, match: (field: String, equals: JSONValue)? = nil, registration: String, reorderable: Bool = false) {
            self.section = section
            self.registration = registration
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
    public var defaultRegistration: String?
    /// The owner (uid) of each registration the provider names, as it was when the provider was set: a
    /// registration of that name someone else made since is not the one meant (see `serves(_:owner:)`).
    /// Filled in by the state when the provider is set; empty for a provider stored before owners were.
    public var registrationOwners: [String: UInt32] = [:]

    public init(rules: [Rule] = [], defaultRegistration: String? = nil) {
        self.rules = rules
        self.defaultRegistration = defaultRegistration
    }

    /// The registration for an item of a section, or `nil` when nothing matches. O(rules).
    public func registration(for item: Item, inSection section: String) -> String? {
        rules.first { $0.matches(item: item, section: section) }?.registration ?? defaultRegistration
    }

    /// `registration(for:inSection:)` for an item whose payload is packed: the payload is rebuilt only
    /// when a rule matches on a field, and then once.
    public func registration(forItem id: String, payload: PackedPayload, inSection section: String) -> String? {
        rule(forPayload: payload, inSection: section)?.registration ?? defaultRegistration
    }

    /// `canReorder(_:inSection:)` for an item whose payload is packed.
    public func canReorder(payload: PackedPayload, inSection section: String) -> Bool {
        rule(forPayload: payload, inSection: section)?.reorderable ?? false
    }

    /// `registration(forItem:payload:inSection:)` and `canReorder(payload:inSection:)` in one pass over
    /// the rules (what `dequeue` needs for each cell).
    public func cellRule(forPayload payload: PackedPayload, inSection section: String) -> (registration: String?, reorderable: Bool) {
        let rule = rule(forPayload: payload, inSection: section)
        return (rule?.registration ?? defaultRegistration, rule?.reorderable ?? false)
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

    /// Whether the registration called `name`, owned by `owner`, is the one the provider was set with (a
    /// name it bound to no owner takes any).
    public func serves(_ name: String, owner: UInt32) -> Bool {
        registrationOwners[name].map { $0 == owner } ?? true
    }

    /// Every registration the provider names.
    public var registrationNames: [String] { rules.map(\.registration) + (defaultRegistration.map { [$0] } ?? []) }
}
