import CellCore
import DiffableCore
import Foundation
import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// Following the other instances (`SharedStore`).
///
/// Every write's transaction sends notifications on the `listd` channel (delivered when it commits):
/// `<instance> c <version> <name>` for a data source's new version (sent by the statement that moves
/// the version on), `<instance> s` when data sources were created or dropped, `<instance> r` when
/// registrations changed. A notification names no data (PostgreSQL limits them to 8,000 bytes): the
/// instance that receives it reads the rows on a connection of its own.
extension PostgresStore {
    /// The kinds of notification that carry no data source.
    enum Notice {
        static let dataSources = "s"
        static let registrations = "r"
    }

    /// A random name for this instance's notifications (16 hexadecimal digits).
    static func makeInstanceName() -> String {
        let digits = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The notification of a data source's new version (a data source whose name would not fit tells
    /// the others to compare every data source instead).
    func notice(changed name: String, version: Int) -> String {
        name.utf8.count <= 7_000 ? "\(instance) c \(version) \(name)" : "\(instance) \(Notice.dataSources)"
    }

    /// Sends a notification of `kind` with the current transaction.
    func notify(_ kind: String) throws(StorageError) {
        try connection.query("SELECT pg_notify('\(Self.channel)', $1)", [.text("\(instance) \(kind)")])
    }

    /// What a notification says (`nil` for anything not listd's). This instance's own are passed on
    /// too: they change nothing it holds, except after a write whose commit was cut off and that the
    /// database committed after all (then the instance catches up with it, as with another's).
    static func parse(_ payload: String) -> StoreNotice? {
        let fields = payload.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count >= 2 else { return nil }
        switch fields[1] {
        case "c":
            guard fields.count == 4, let version = Int(fields[2]) else { return .dataSources }
            return .changed(dataSource: String(fields[3]), version: version)
        case "r": return .registrations
        default: return .dataSources
        }
    }

    // MARK: SharedStore

    public func startFollowing(_ notice: @escaping @Sendable (StoreNotice) -> Void) {
        follower.startListening(uri: uri, timeout: timeout, notice)
    }

    public func stopFollowing() {
        follower.stopListening()
    }

    public var reconnects: Int { follower.reconnectCount }

    public func changes(of name: String, after version: Int) throws(StorageError) -> FollowedChanges {
        try follower.withReader(uri: uri, timeout: timeout) { reader throws(StorageError) -> FollowedChanges in
            // One round trip: the data source's row and its log after `version`, read in one snapshot.
            let read = try reader.pipeline(
                [PostgresStatement(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")] + Self.followReads(of: name, after: version)
                    + [PostgresStatement(sql: "COMMIT")])
            if let error = read.firstError {
                _ = try? reader.execute("ROLLBACK")
                throw error
            }
            guard let source = read.results[1], let log = read.results[2] else {
                throw StorageError(.io, "\(displayName): reading the changes of data source \"\(name)\" gave no rows.")
            }
            // A version stored as its whole snapshot is read from the checkpoint, in a transaction of its own.
            if let found = try Self.followedChanges(after: version, source: source, log: log, checkpoint: nil) { return found }
            return try Self.transactionalChanges(of: name, after: version, on: reader, store: self)
        }
    }

    /// The data source's row and its log after `version` (prepared once per connection).
    private static func followReads(of name: String, after version: Int) -> [PostgresStatement] {
        [
            PostgresStatement(
                sql: "SELECT id, incarnation, checkpoint_version, version FROM listd_data_sources WHERE name = $1", parameters: [.text(name)],
                preparedName: "listd_follow_source"),
            PostgresStatement(
                sql: """
                    SELECT version, operation, changes FROM listd_change_log \
                    WHERE source = (SELECT id FROM listd_data_sources WHERE name = $1) AND version > $2 ORDER BY version
                    """,
                parameters: [.text(name), .integer(version)], preparedName: "listd_follow_log"),
        ]
    }

    /// What `changes(of:after:)` reads when the log holds a whole snapshot: the data source, its log
    /// and its checkpoint, in one read-only transaction.
    private static func transactionalChanges(of name: String, after version: Int, on reader: PostgresConnection, store: PostgresStore) throws(StorageError)
        -> FollowedChanges
    {
        var found = FollowedChanges.missing
        try transaction(on: reader, readOnly: true) { () throws(StorageError) in
            let read = try reader.pipeline(followReads(of: name, after: version))
            if let error = read.firstError { throw error }
            guard let source = read.results[0], let log = read.results[1] else {
                throw StorageError(.io, "\(store.displayName): reading the changes of data source \"\(name)\" gave no rows.")
            }
            let checkpoint: (Int, Int) throws(StorageError) -> [UInt8] = { id, checkpointVersion throws(StorageError) in
                let stored = try reader.query("SELECT checkpoint, checkpoint_parts FROM listd_data_sources WHERE id = $1", [.integer(id)])
                let parts = stored.int(0, 1)
                return parts == 0
                    ? stored.bytes(0, 0) ?? [] : try store.checkpointParts(of: id, name: name, version: checkpointVersion, count: parts, on: reader)
            }
            found = try followedChanges(after: version, source: source, log: log, checkpoint: checkpoint) ?? .gap(incarnation: source.text(0, 1))
        }
        return found
    }

    /// The changes after `version` from the data source's row and its log rows. A version stored as the
    /// checkpoint it made (a whole snapshot) is read with `checkpoint` (given the data source's id and the
    /// checkpoint's version); without it, returns `nil` for the caller to read again with one.
    private static func followedChanges(
        after version: Int, source: PostgresResult, log: PostgresResult, checkpoint: ((Int, Int) throws(StorageError) -> [UInt8])?
    ) throws(StorageError) -> FollowedChanges? {
        guard source.rowCount == 1 else { return .missing }
        let (id, incarnation, checkpointVersion, newest) = (source.int(0, 0), source.text(0, 1), source.int(0, 2), source.int(0, 3))
        guard newest > version else { return .changes(incarnation: incarnation, []) }
        var changes: [FollowedChange] = []
        changes.reserveCapacity(log.rowCount)
        for row in 0..<log.rowCount {
            let logged = log.int(row, 0)
            guard logged == version + 1 + row else { break }
            let events = log.bytes(row, 2)
            if let operation = log.bytes(row, 1), operation != StateCoding.noOperation {
                changes.append(FollowedChange(version: logged, operation: try StateCoding.decodeOperation(operation), changes: events))
            } else if logged == checkpointVersion {
                // A whole snapshot, stored as the checkpoint it made (read only then: it may be large).
                guard let checkpoint else { return nil }
                let content = try StateCoding.decodeContent(try checkpoint(id, checkpointVersion))
                changes.append(FollowedChange(version: logged, operation: .replaceSnapshot(content.snapshot, reloadData: events == nil), changes: events))
            } else {
                break
            }
        }
        return changes.count == newest - version ? .changes(incarnation: incarnation, changes) : .gap(incarnation: incarnation)
    }

    public func versions() throws(StorageError) -> [StoredVersion] {
        try follower.withReader(uri: uri, timeout: timeout) { reader throws(StorageError) -> [StoredVersion] in
            let rows = try reader.query("SELECT name, incarnation, version FROM listd_data_sources ORDER BY id")
            return (0..<rows.rowCount).map { StoredVersion(name: rows.text($0, 0), incarnation: rows.text($0, 1), version: rows.int($0, 2)) }
        }
    }

    public func storedRegistrations() throws(StorageError) -> [Registration] {
        try follower.withReader(uri: uri, timeout: timeout) { reader throws(StorageError) -> [Registration] in try Self.registrations(on: reader) }
    }

    public func dataSource(named name: String, atVersion version: Int?) throws(StorageError) -> StoredDataSource? {
        try follower.withReader(uri: uri, timeout: timeout) { reader throws(StorageError) -> StoredDataSource? in
            var stored: StoredDataSource?
            try Self.transaction(on: reader, readOnly: true) { () throws(StorageError) in
                let sources = try reader.query(
                    "SELECT id, name, incarnation, checkpoint_version, checkpoint, checkpoint_parts FROM listd_data_sources WHERE name = $1",
                    [.text(name)])
                guard sources.rowCount == 1 else { return }
                stored = try dataSource(sources, 0, on: reader, upTo: version)
            }
            return stored
        }
    }
}

/// The store's second and third connections: one that reads what other instances committed (used by
/// one caller at a time, under a lock), and one a thread of its own keeps listening on.
final class Follower: @unchecked Sendable {
    private let lock = NSLock()
    private var reader: PostgresConnection?
    private var readerConnectedOnce = false
    /// Guards the counters and the listener's state: `lock` is held for a whole read, which may wait on
    /// the database for seconds, while the count is read on the event loop (`stats`) and the listener
    /// looks at `stopped` four times a second.
    private let stateLock = NSLock()
    private var reconnects = 0
    private var listening = false
    private var stopped = false
    private let listenerDone = DispatchSemaphore(value: 0)

    /// Times a connection was made again after it broke.
    var reconnectCount: Int { stateLock.withLock { reconnects } }

    func countReconnect() {
        stateLock.withLock { reconnects += 1 }
    }

    /// Runs `body` on the reading connection, connecting it first when needed.
    func withReader<Result>(uri: String, timeout: Duration, _ body: (PostgresConnection) throws(StorageError) -> Result) throws(StorageError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        if reader?.isConnected != true {
            reader?.close()
            reader = nil
            let connection = try PostgresConnection(uri: uri, timeout: timeout)
            let milliseconds = Int(timeout / .milliseconds(1))
            try connection.execute(
                "SET client_min_messages = warning; SET statement_timeout = \(milliseconds); SET idle_in_transaction_session_timeout = \(milliseconds)")
            if readerConnectedOnce { countReconnect() }
            readerConnectedOnce = true
            reader = connection
        }
        return try body(reader!)
    }

    /// Starts the listening thread: it connects (again, with backoff from 0.1 to 5 s, after the
    /// connection broke), listens, says `.resync` and then passes on every notification.
    func startListening(uri: String, timeout: Duration, _ notice: @escaping @Sendable (StoreNotice) -> Void) {
        let start = stateLock.withLock { () -> Bool in
            guard !listening, !stopped else { return false }
            listening = true
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in
            listen(uri: uri, timeout: timeout, notice)
            listenerDone.signal()
        }
        thread.name = "listd-postgres-listener"
        thread.start()
    }

    /// Stops the listening thread (it notices within a quarter of a second, or once a connection
    /// attempt under way ends) and closes the reader.
    func stopListening() {
        let wasListening = stateLock.withLock { () -> Bool in
            defer { stopped = true }
            return listening && !stopped
        }
        if wasListening { _ = listenerDone.wait(timeout: .now() + 2) }
        lock.withLock {
            reader?.close()
            reader = nil
        }
    }

    private var isStopped: Bool { stateLock.withLock { stopped } }

    private func listen(uri: String, timeout: Duration, _ notice: @escaping @Sendable (StoreNotice) -> Void) {
        var delay = 0.1
        var connectedOnce = false
        while !isStopped {
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection(uri: uri, timeout: timeout)
                try connection.execute("LISTEN \(PostgresStore.channel)")
            } catch {
                // Waits in small steps, so that a stop is not held up.
                let until = Date(timeIntervalSinceNow: delay)
                while !isStopped && Date() < until { usleep(50_000) }
                delay = min(delay * 2, 5)
                continue
            }
            if connectedOnce { countReconnect() }
            connectedOnce = true
            delay = 0.1
            notice(.resync)
            while !isStopped {
                var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 250)
                if ready < 0 && errno != EINTR { break }
                guard ready > 0 else { continue }
                guard let payloads = try? connection.notifications() else { break }
                for payload in payloads {
                    if let parsed = PostgresStore.parse(payload) { notice(parsed) }
                }
            }
            connection.close()
        }
    }
}
