import DiffableCore
import ListWire

/// What listd holds because of one user, by part: every byte counts against that user's
/// `maxBytesPerUser` (`OwnerQuota.maximumBytes`), whichever part it is in.
public enum AccountPart: Int, CaseIterable, Sendable {
    /// Identifiers and payloads of the user's data sources (their snapshots and outlines).
    case data
    /// The layouts of the user's data sources (`setLayout`), as encoded.
    case layouts
    /// The cell and supplementary provider rules of the user's data sources (`setCellProvider`).
    case cellProviders
    /// The user's registrations: definitions and templates.
    case registrations
    /// The retained events of the user's data sources (what views that resume are sent): charged to the
    /// data source's owner; the oldest are dropped first when the owner is at its quota.
    case changeLog
    /// The cells kept for the user's views: their last content configurations.
    case cells
    /// The user's views' own copies for an expansion of their own (`perView` scope).
    case expansions
    /// Events waiting in the user's view and display queues.
    case queues
    /// Output written to the user's connections and not yet taken by them.
    case output

    /// The part's name on the wire (`access`, `stats`, a `quota-exceeded` error's `part`).
    public var name: String {
        switch self {
        case .data: return "data"
        case .layouts: return "layouts"
        case .cellProviders: return "cellProviders"
        case .registrations: return "registrations"
        case .changeLog: return "changeLog"
        case .cells: return "cells"
        case .expansions: return "expansions"
        case .queues: return "queues"
        case .output: return "output"
        }
    }

    /// The parts the model holds (recounted from it when a whole state is loaded): data, layouts, cell
    /// providers, registrations. The change log is the engine's; the rest lives while connections do.
    public var isModelPart: Bool { rawValue <= AccountPart.registrations.rawValue }
}

/// Who an account belongs to: a user, and for root whether it is a relay's connection (listweb):
/// root's exemption from the quota covers root's own connections only, a relay acting for pages is
/// charged like any user.
public struct AccountHolder: Hashable, Sendable {
    public let uid: UInt32
    public let isRelay: Bool

    /// The account of `uid` (a relay's flag only matters for root: any other user is charged anyway).
    public init(uid: UInt32, relay: Bool = false) {
        self.uid = uid
        isRelay = relay && uid == 0
    }

    /// Whether `maxBytesPerUser` applies (to everyone but root's own connections and data).
    public var isCharged: Bool { uid != 0 || isRelay }
}

/// One holder's bytes, by part.
public struct AccountBytes: Equatable, Sendable {
    /// One count per `AccountPart`, inline (a charge allocates nothing).
    private var parts = InlineArray<9, Int>(repeating: 0)

    public init() {
        assert(AccountPart.allCases.count == 9, "AccountBytes keeps one count per part")
    }

    public subscript(part: AccountPart) -> Int {
        get { parts[part.rawValue] }
        set { parts[part.rawValue] = newValue }
    }

    /// Every part together.
    public var total: Int {
        var sum = 0
        for index in parts.indices { sum += parts[index] }
        return sum
    }

    public var isEmpty: Bool {
        for index in parts.indices where parts[index] != 0 { return false }
        return true
    }

    public static func == (lhs: AccountBytes, rhs: AccountBytes) -> Bool {
        for index in lhs.parts.indices where lhs.parts[index] != rhs.parts[index] { return false }
        return true
    }

    /// The parts by wire name (for `access` and `stats`), with `total`.
    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        for part in AccountPart.allCases { members[part.name] = .int(self[part]) }
        members["total"] = .int(total)
        return .object(members)
    }
}

/// Every holder's account: kept up to date as parts grow and shrink (O(1) per charge), read by the
/// quota checks. Confined to the server's event loop, as the model is.
///
/// The model's parts (data, layouts, cell providers, registrations, the change log) are charged by the
/// engine; the server charges cells, expansion copies and display queues as they are kept. Request lines
/// waiting and unsent output change with every read and write, so they are not charged: `liveBytes`
/// adds them when an account is read.
public final class UserAccounts {
    private var accounts: [AccountHolder: AccountBytes] = [:]
    /// The bytes of `.queues` and `.output` a holder has now (the server sets it; `nil`: none).
    public var liveBytes: ((AccountHolder) -> (queues: Int, output: Int))?

    public init() {}

    /// Adds `delta` bytes (negative: removes) to a part of `holder`'s account. O(1).
    public func charge(_ holder: AccountHolder, _ part: AccountPart, _ delta: Int) {
        guard delta != 0 else { return }
        // In place: one hash look-up, no copy of the account.
        if let index = accounts.index(forKey: holder) {
            accounts.values[index][part] += delta
            if accounts.values[index].isEmpty { accounts.remove(at: index) }
        } else {
            var bytes = AccountBytes()
            bytes[part] = delta
            accounts[holder] = bytes
        }
    }

    /// What `holder` holds now, every part (live ones read now: O(the holder's connections)).
    public func bytes(of holder: AccountHolder) -> AccountBytes {
        var bytes = accounts[holder] ?? AccountBytes()
        if let live = liveBytes?(holder) {
            bytes[.queues] += live.queues
            bytes[.output] += live.output
        }
        return bytes
    }

    /// What `holder` holds in charged parts only (no live read). O(1).
    public func chargedBytes(of holder: AccountHolder) -> AccountBytes { accounts[holder] ?? AccountBytes() }

    /// Every holder with something charged, by holder.
    public var all: [AccountHolder: AccountBytes] { accounts }

    /// Forgets the model's parts of every account (before they are counted again from a whole state).
    func resetModelParts() {
        for (holder, var bytes) in accounts {
            for part in AccountPart.allCases where part.isModelPart { bytes[part] = 0 }
            accounts[holder] = bytes.isEmpty ? nil : bytes
        }
    }

    /// Refuses (`quota-exceeded`, naming `part`) a request that would take `holder` past `limit` by
    /// adding `adding` bytes to `part`, where `releasing` bytes of the account go at the same time. Only
    /// growth is refused: a holder past its quota may still shrink. Exempt holders pass.
    public func check(_ holder: AccountHolder, adding: Int, releasing: Int = 0, to part: AccountPart, limit: Int) throws(WireError) {
        guard adding > releasing, holder.isCharged, limit < .max else { return }
        let held = bytes(of: holder)
        guard held.total - releasing + adding > limit else { return }
        throw Self.exceeded(holder, held: held, adding: adding - releasing, to: part, limit: limit)
    }

    /// The `quota-exceeded` error for `holder`, holding `held`, that a request adding `adding` bytes to
    /// `part` would take past `limit`.
    public static func exceeded(_ holder: AccountHolder, held: AccountBytes, adding: Int, to part: AccountPart, limit: Int) -> WireError {
        let largest = AccountPart.allCases.filter { held[$0] > 0 }.sorted { held[$0] > held[$1] }.prefix(3)
        let summary = largest.map { "\($0.name) \(held[$0])" }.joined(separator: ", ")
        return WireError(
            .quotaExceeded,
            "User \(holder.uid)\(holder.isRelay ? " (as a relay)" : "") holds \(held.total) bytes in listd\(summary.isEmpty ? "" : " (\(summary))"); \(adding) more bytes of \(part.name) would pass the per-user quota of \(limit) bytes (maxBytesPerUser). Release something first.",
            details: [
                "quota": "maxBytesPerUser", "part": .string(part.name), "uid": .int(Int(holder.uid)), "held": .int(held.total),
                "adding": .int(adding), "limit": .int(limit),
            ])
    }
}
