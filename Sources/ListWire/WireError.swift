import DiffableCore

/// The stable error codes of the protocol. `protocol/PROTOCOL.md` documents each one.
public enum ErrorCode: String, CaseIterable, Sendable, Hashable {
    case invalidJSON = "invalid-json"
    case invalidRequest = "invalid-request"
    case invalidArgument = "invalid-argument"
    case unknownCommand = "unknown-command"
    case lineTooLong = "line-too-long"
    case dataSourceNotFound = "data-source-not-found"
    case dataSourceExists = "data-source-exists"
    case sectionNotFound = "section-not-found"
    case itemNotFound = "item-not-found"
    case duplicateSection = "duplicate-section"
    case duplicateItem = "duplicate-item"
    case noSections = "no-sections"
    case invalidMove = "invalid-move"
    case indexOutOfRange = "index-out-of-range"
    case versionConflict = "version-conflict"
    case versionNotReached = "version-not-reached"
    case limitExceeded = "limit-exceeded"
    case quotaExceeded = "quota-exceeded"
    case notAttached = "not-attached"
    case invalidRegistration = "invalid-registration"
    case registrationExists = "registration-exists"
    case registrationNotFound = "registration-not-found"
    case noRegistration = "no-registration"
    case cellNotFound = "cell-not-found"
    case pluginTypeTaken = "plugin-type-taken"
    case pluginTimeout = "plugin-timeout"
    case pluginUnavailable = "plugin-unavailable"
    case permissionDenied = "permission-denied"
    case shuttingDown = "shutting-down"
    case storageFailed = "storage-failed"
    case ephemeral = "ephemeral"
    case `internal` = "internal"

    /// One line for `describe`.
    public var summary: String {
        switch self {
        case .invalidJSON: return "The line is not one valid JSON text (UTF-8, no duplicate keys, bounded nesting)."
        case .invalidRequest: return "The line is JSON but not a request object with a string \"cmd\"."
        case .invalidArgument: return "An argument is missing, unknown, or of the wrong type; the message names it."
        case .unknownCommand: return "No command has that name."
        case .lineTooLong: return "The line is longer than the server's limit; the connection is closed after this reply."
        case .dataSourceNotFound: return "No data source has that name."
        case .dataSourceExists: return "createDataSource named a data source that exists."
        case .sectionNotFound: return "A named section does not exist."
        case .itemNotFound: return "A named item does not exist."
        case .duplicateSection: return "A section identifier repeats, or already exists."
        case .duplicateItem: return "An item identifier repeats, or already exists elsewhere in a snapshot."
        case .noSections: return "Items were appended without a section while there are none."
        case .invalidMove: return "A section or item was moved relative to itself."
        case .indexOutOfRange: return "An index or index path is outside the snapshot."
        case .versionConflict: return "ifVersion does not match the data source's current version."
        case .versionNotReached:
            return "minVersion: the data source did not reach that version here in time (another instance's write not followed yet, or none shares the store)."
        case .limitExceeded: return "A configured limit (data sources, items, batch size, identifier length, …) would be exceeded."
        case .quotaExceeded:
            return "A per-user quota would be exceeded: details name the quota, and for maxBytesPerUser the part of the account (data, layouts, cellProviders, registrations, changeLog, cells, expansions, queues, output) the request would grow."
        case .notAttached: return "The command needs a view attached on this connection."
        case .invalidRegistration:
            return "A registration definition is malformed: an unknown type, kind or key (the message names its path and, when one is close, the key meant), a literal value of the wrong kind, or a template that does not parse; in a cell, a templated value that rendered to something its property does not take."
        case .registrationExists: return "A registration of that name exists with another definition; unregister it first."
        case .registrationNotFound: return "No registration has that name."
        case .noRegistration: return "No supplementary provider rule maps the section's element to a registration (items without one show the default presentation)."
        case .cellNotFound: return "No displayed cell of the view has that identifier (or shows that item)."
        case .pluginTypeTaken: return "A plugin's hello announced a content type that another connected plugin provides."
        case .pluginTimeout: return "Per cell: the plugin did not configure the cell before the deadline."
        case .pluginUnavailable: return "Per cell: no connected plugin provides the type, or it went away or answered wrongly."
        case .permissionDenied:
            return "The connection's user may not do this to what another user owns (or is not trusted as a plugin); the error names the owner."
        case .shuttingDown: return "The server is stopping and accepts no new work."
        case .ephemeral: return "The command needs stored state, and listd runs with --ephemeral."
        case .storageFailed: return "The change could not be stored (disk full, read-only or failing, a database that went away): nothing changed; the message has the OS or database error."
        case .internal: return "A bug in listd; the server logged it. The request changed nothing."
        }
    }
}

/// An error reply: a stable code and a message for humans.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// Members for programs, written beside `code` and `message` (e.g. `owner` of `permission-denied`,
    /// `quota` of a per-user quota's `limit-exceeded`).
    public var details: [String: JSONValue]

    public init(_ code: ErrorCode, _ message: String, details: [String: JSONValue] = [:]) {
        self.code = code
        self.message = message
        self.details = details
    }

    /// The wire form of a core error (same code, same message).
    public init(_ error: SnapshotError) {
        let code: ErrorCode
        switch error.code {
        case .duplicateSection: code = .duplicateSection
        case .duplicateItem: code = .duplicateItem
        case .sectionNotFound: code = .sectionNotFound
        case .itemNotFound: code = .itemNotFound
        case .noSections: code = .noSections
        case .invalidMove: code = .invalidMove
        case .invalidArgument: code = .invalidArgument
        }
        self.init(code, error.message)
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension JSONWriter {
    /// `{"code": …, "message": …}`.
    public mutating func wireError(_ error: WireError) {
        beginObject()
        key("code")
        string(error.code.rawValue)
        key("message")
        string(error.message)
        for name in error.details.keys.sorted() {
            key(name)
            value(error.details[name]!)
        }
        endObject()
    }
}
