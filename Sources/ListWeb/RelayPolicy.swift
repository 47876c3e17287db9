import DiffableCore
import ListWire

/// What a page may ask listd through listweb, decided line by line (pure: no I/O).
///
/// A page is a view of one data source (its URL names it): it may attach to that data source (under a
/// view name listweb gives it), act on its own views only, and read. Changes (select, expand, reorder)
/// pass only when listweb was started with `--allow-actions`; everything else (writes, registrations,
/// other connections' views, administration) is refused here, before listd sees it. What passes is then
/// subject to listd's own rules for listweb's user.
public struct RelayPolicy: Sendable {
    /// The data source the page shows.
    public let dataSource: String
    /// Whether the page may select, expand, collapse and reorder.
    public let allowsActions: Bool
    /// The prefix of the view names this page's attaches get (unique per page).
    public let viewPrefix: String
    /// The views this page attached.
    public private(set) var views: Set<String> = []
    private var attaches = 0

    /// Read-only commands a view needs.
    static let reads: Set<String> = [
        "ping", "layout", "snapshot", "sectionSnapshot", "outlineItem", "cellProvider", "numberOfSections", "numberOfItems",
        "itemIdentifier", "indexPath", "sectionIdentifier", "index", "item",
    ]
    /// Commands on one of the page's own views.
    static let viewCommands: Set<String> = ["dequeue", "dequeueSupplementary", "endDisplaying", "prefetch", "detach"]
    /// View commands that change something (`--allow-actions`).
    static let viewActions: Set<String> = ["setState", "expandInView", "collapseInView", "reorder"]
    /// Data source changes a page may make (`--allow-actions`): the shared expansion.
    static let dataSourceActions: Set<String> = ["expand", "collapse"]

    public init(dataSource: String, allowsActions: Bool, viewPrefix: String) {
        self.dataSource = dataSource
        self.allowsActions = allowsActions
        self.viewPrefix = viewPrefix
    }

    /// What to do with one line from the page.
    public enum Decision: Equatable, Sendable {
        /// Send this line to listd: the request `command` with `id` (its JSON, as listd will echo it).
        case forward([UInt8], command: String, id: [UInt8]?)
        /// Answer the page with this line; listd sees nothing.
        case refuse([UInt8])
    }

    /// Decides about one message from the page (a JSON request line).
    public mutating func decide(_ text: [UInt8]) -> Decision {
        let value: JSONValue
        do {
            value = try JSONParser.parse(text)
        } catch {
            return .refuse(Self.error(id: nil, "invalid-json", "listweb: \(error)"))
        }
        guard case .object(var members) = value, case .string(let command)? = members["cmd"] else {
            return .refuse(Self.error(id: nil, "invalid-argument", "listweb: a request is an object with a string \"cmd\"."))
        }
        let id = members["id"]
        func refuse(_ code: String, _ message: String) -> Decision { .refuse(Self.error(id: id, code, message)) }
        switch command {
        case "attach":
            guard members["dataSource"] == .string(dataSource) else {
                return refuse("permission-denied", "listweb: this page shows data source \"\(dataSource)\" only.")
            }
            attaches += 1
            let view = "\(viewPrefix)-\(attaches)"
            members["view"] = .string(view)
            views.insert(view)
            // Another view's selections are not this page's business (a page follows its own); an expansion of
            // its own is an action (as expandInView is).
            members["selectionEvents"] = nil
            if !allowsActions { members["expansion"] = nil }
        case _ where Self.reads.contains(command):
            if let named = members["dataSource"], named != .string(dataSource) {
                return refuse("permission-denied", "listweb: this page shows data source \"\(dataSource)\" only.")
            }
            if members["view"] != nil, !ownsView(members["view"]) {
                return refuse("permission-denied", "listweb: a page acts on its own views only.")
            }
        case _ where Self.viewCommands.contains(command) || Self.viewActions.contains(command):
            if Self.viewActions.contains(command) && !allowsActions {
                return refuse("permission-denied", "listweb is read-only: start it with --allow-actions to \(command) from a page.")
            }
            guard ownsView(members["view"]) else { return refuse("permission-denied", "listweb: a page acts on its own views only.") }
            if let named = members["dataSource"], named != .string(dataSource) {
                return refuse("permission-denied", "listweb: this page shows data source \"\(dataSource)\" only.")
            }
            if command == "detach", case .string(let view)? = members["view"] { views.remove(view) }
        case _ where Self.dataSourceActions.contains(command):
            guard allowsActions else { return refuse("permission-denied", "listweb is read-only: start it with --allow-actions to \(command) from a page.") }
            guard members["dataSource"] == .string(dataSource) else {
                return refuse("permission-denied", "listweb: this page shows data source \"\(dataSource)\" only.")
            }
        default:
            return refuse("permission-denied", "listweb does not pass \"\(command)\" from a page (views read and, with --allow-actions, select, expand and reorder).")
        }
        return .forward(JSONValue.object(members).jsonBytes, command: command, id: id?.jsonBytes)
    }

    private func ownsView(_ value: JSONValue?) -> Bool {
        guard case .string(let view)? = value else { return false }
        return views.contains(view)
    }

    /// An error reply line in listd's shape.
    static func error(id: JSONValue?, _ code: String, _ message: String) -> [UInt8] {
        var reply: [String: JSONValue] = ["ok": false, "error": ["code": .string(code), "message": .string(message)]]
        if let id { reply["id"] = id }
        return JSONValue.object(reply).jsonBytes
    }
}
