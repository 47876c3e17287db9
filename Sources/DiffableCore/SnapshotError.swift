/// A misuse of a snapshot or a section snapshot. Throwing one never changes the snapshot.
///
/// `code` is stable and is what the wire protocol reports; `message` is for humans and names the
/// offending identifiers, which are also in `identifiers`.
public struct SnapshotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable kind.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// A section identifier is repeated within one call, or already in the snapshot.
        case duplicateSection = "duplicate-section"
        /// An item identifier is repeated within one call (or in a section snapshot).
        case duplicateItem = "duplicate-item"
        /// A named section does not exist.
        case sectionNotFound = "section-not-found"
        /// A named item does not exist.
        case itemNotFound = "item-not-found"
        /// Items were appended without a section while the snapshot has no sections.
        case noSections = "no-sections"
        /// A move relative to the moved identifier itself.
        case invalidMove = "invalid-move"
        /// The destination of an insertion is one of the identifiers being inserted.
        case invalidArgument = "invalid-argument"
    }

    public var code: Code
    public var message: String
    /// The identifiers the error is about, in the order they were found.
    public var identifiers: [String]

    public init(_ code: Code, _ message: String, identifiers: [String]) {
        self.code = code
        self.message = message
        self.identifiers = identifiers
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Something UIKit tolerates but that usually points at a bug in the caller. The operation was carried
/// out; the warning tells the caller what was done instead of what was asked.
public struct SnapshotWarning: Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// Inserted or appended items already existed, and were moved into place (UIKit does the same,
        /// logging "the existing item identifier will be moved into place instead").
        case itemsAlreadyExisted = "items-already-existed"
        /// Items asked to be deleted did not exist and were ignored.
        case unknownItemsIgnored = "unknown-items-ignored"
        /// Sections asked to be deleted did not exist and were ignored.
        case unknownSectionsIgnored = "unknown-sections-ignored"
        /// A whole snapshot listed a section's rows otherwise than its outline shows them: the section
        /// became flat, and the outline's collapsed items that the snapshot does not list are gone
        /// (`details`: `section`, `hiddenItemsDropped`).
        case outlineReplaced = "outline-replaced"
        /// A change made the cell provider's rules pick another registration for reconfigured (or moved)
        /// items: they are reloaded instead, so that their cells come from that registration
        /// (`details`: `items`).
        case reconfigureBecameReload = "reconfigure-became-reload"
    }

    public var code: Code
    public var message: String
    public var identifiers: [String]
    /// Members of the warning beyond its code, message and identifiers, as the protocol names them.
    public var details: [String: JSONValue]

    public init(_ code: Code, _ message: String, identifiers: [String], details: [String: JSONValue] = [:]) {
        self.code = code
        self.message = message
        self.identifiers = identifiers
        self.details = details
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Formats identifiers for messages: quoted, comma separated, at most `limit` of them.
func quoted(_ identifiers: some Collection<String>, limit: Int = 10) -> String {
    var parts = identifiers.prefix(limit).map { "\"\($0)\"" }
    if identifiers.count > limit { parts.append("and \(identifiers.count - limit) more") }
    return parts.joined(separator: ", ")
}
