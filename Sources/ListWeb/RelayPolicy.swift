import DiffableCore
import ListWire

/// What a page may ask listd through listweb, decided line by line (pure: no I/O).
///
/// A page is a view of one data source (its URL names it): it may attach to that data source (under a
/// view name listweb gives it), act on its own views only, and read. With `--allow-actions` a page may
/// change its own view only: its selection and its own expansion (`setState`, `expandInView`,
/// `collapseInView`, an attach's `expansion`); what would change the data source for everyone (`expand`,
/// `collapse` of the shared outline, `reorder`, writes, registrations, other connections' views,
/// administration) is refused here, before listd sees it. What passes is then subject to listd's own rules
/// for listweb's user.
///
/// A view name is recorded only once listd accepted its attach (`listdReplied`): refused attaches leave
/// nothing behind, and a page holds at most `maximumViews` views and `maximumPendingAttaches` attaches
/// waiting for their reply.
public struct RelayPolicy: Sendable {
    /// The data source the page shows.
    public let dataSource: String
    /// Whether the page may select, expand, collapse and reorder.
    public let allowsActions: Bool
    /// The prefix of the view names this page's attaches get (unique per page).
    public let viewPrefix: String
    /// The views this page attached (listd accepted the attach).
    public private(set) var views: Set<String> = []
    /// Attaches passed on and not answered yet: their id (as listd echoes it) and the view name.
    public private(set) var pendingAttaches: [[UInt8]: String] = [:]
    private var attaches = 0
    /// The most views one page holds (a page shows one).
    public static let maximumViews = 16
    /// The most attaches of one page waiting for listd's reply.
    public static let maximumPendingAttaches = 4

    /// Read-only commands a view needs.
    static let reads: Set<String> = [
        "ping", "layout", "snapshot", "sectionSnapshot", "outlineItem", "cellProvider", "numberOfSections", "numberOfItems",
        "itemIdentifier", "indexPath", "sectionIdentifier", "index", "item",
    ]
    /// Commands on one of the page's own views.
    static let viewCommands: Set<String> = ["dequeue", "dequeueSupplementary", "endDisplaying", "prefetch", "detach"]
    /// View commands that change the page's own view only (`--allow-actions`): its selection, its expansion.
    static let viewActions: Set<String> = ["setState", "expandInView", "collapseInView"]
    /// Commands that change a data source for every view: never from a page.
    static let sharedChanges: Set<String> = ["expand", "collapse", "reorder"]

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
            guard let key = Self.attachKey(id) else {
                return refuse("invalid-argument", "listweb: an attach needs an id: a number or a string of letters, digits, '-' and '_' (at most 64).")
            }
            guard views.count + pendingAttaches.count < Self.maximumViews, pendingAttaches.count < Self.maximumPendingAttaches,
                pendingAttaches[key] == nil
            else {
                return refuse("limit-exceeded", "listweb: a page holds at most \(Self.maximumViews) views and \(Self.maximumPendingAttaches) attaches waiting for listd (detach one first).")
            }
            attaches += 1
            let view = "\(viewPrefix)-\(attaches)"
            members["view"] = .string(view)
            pendingAttaches[key] = view
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
        case _ where Self.sharedChanges.contains(command):
            return refuse(
                "permission-denied",
                "listweb: a page changes its own view only, never the data source for every view (\(command) would; expand in the page's own view with expandInView where the data source's expansion scope is perView).")
        default:
            return refuse("permission-denied", "listweb does not pass \"\(command)\" from a page (views read and, with --allow-actions, select, expand and reorder).")
        }
        return .forward(JSONValue.object(members).jsonBytes, command: command, id: id?.jsonBytes)
    }

    /// Takes listd's reply to a pending attach (a line from listd): its view is the page's once accepted,
    /// forgotten when refused. Other lines change nothing.
    public mutating func listdReplied(_ line: some Collection<UInt8>) {
        guard !pendingAttaches.isEmpty else { return }
        let prefix = #"{"id":"#.utf8
        guard line.starts(with: prefix) else { return }
        let rest = line.dropFirst(prefix.count)
        guard let comma = rest.firstIndex(of: UInt8(ascii: ",")) else { return }
        guard let view = pendingAttaches.removeValue(forKey: Array(rest[..<comma])) else { return }
        if rest[comma...].starts(with: #","ok":true"#.utf8) { views.insert(view) }
    }

    /// An attach's id as listd echoes it (its JSON), when it is one listweb can recognise in the reply: a
    /// number, or a short string of letters, digits, '-' and '_'.
    static func attachKey(_ id: JSONValue?) -> [UInt8]? {
        switch id {
        case .int?: return id?.jsonBytes
        case .string(let text)?:
            guard (1...64).contains(text.utf8.count),
                text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F })
            else { return nil }
            return id?.jsonBytes
        default: return nil
        }
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
