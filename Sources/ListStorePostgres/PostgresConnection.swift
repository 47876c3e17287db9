import CPostgres
import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// A thin wrapper of one libpq connection: statements with binary parameters and results, and errors
/// that name the server (without its password) and PostgreSQL's message. Not thread-safe: confine a
/// connection to one thread at a time.
///
/// Nothing waits for the server without a bound: connecting, sending a statement and reading its result
/// each end within `timeout` (libpq's non-blocking calls and `poll`). A server that stops answering
/// (a partition drops packets; no reset arrives) makes the call fail with `StorageError` (`io`) naming
/// the statement, and closes the connection, whose state is then unknown.
final class PostgresConnection {
    /// The connection URI with any password left out, for messages.
    let displayName: String
    /// The longest a connection, a statement or its result may take.
    let timeout: Duration
    /// When set, no wait goes past it, whatever `timeout` leaves (the end of the time a whole task was
    /// given, such as learning what became of a commit).
    var waitsEnd: ContinuousClock.Instant?
    /// The libpq connection (`nil` once closed).
    private(set) var handle: OpaquePointer?
    /// The server process of this connection (to learn what became of its transaction after it broke).
    private(set) var backendProcess: Int32 = 0

    /// Connects to `uri` (libpq's syntax: `postgresql://user@host/db`, `postgresql://user@/db?host=/run/postgresql`,
    /// `key=value` pairs, or a database name), within `timeout` (and before `waitsEnd` when given).
    /// TCP keepalives and a user timeout are on unless `uri` says otherwise (they end a connection whose
    /// peer vanished even while nothing is sent).
    ///
    /// - Throws: `StorageError` (`io`) naming the server and why the connection failed; for a connection
    ///   string that does not parse, without libpq's message (it may quote the password).
    init(uri: String, timeout: Duration = .seconds(10), waitsEnd: ContinuousClock.Instant? = nil) throws(StorageError) {
        displayName = Self.redacted(uri)
        self.timeout = timeout
        self.waitsEnd = waitsEnd
        guard Self.parses(uri) else {
            throw StorageError(
                .io, "Cannot connect to PostgreSQL: the connection string does not parse (libpq's message is not shown: it may quote the password).")
        }
        let seconds = max(1, Int((timeout / .seconds(1)).rounded(.up)))
        // Defaults first: the connection string (`dbname`, expanded) comes after them, so it wins.
        let settings: [(String, String)] = [
            ("connect_timeout", "\(seconds)"), ("keepalives", "1"), ("keepalives_idle", "\(max(1, seconds / 2))"),
            ("keepalives_interval", "1"), ("keepalives_count", "3"), ("tcp_user_timeout", "\(seconds * 1_000)"),
            ("dbname", uri),
        ]
        let deadline = nextDeadline()
        handle = Self.withCStrings(settings) { keywords, values in PQconnectStartParams(keywords, values, 1) }
        do throws(StorageError) {
            guard let handle, PQstatus(handle) != CONNECTION_BAD else { throw connectionFailure() }
            // As if PQconnectPoll had said "writing": wait until the socket is writable, then ask again.
            var polling = PGRES_POLLING_WRITING
            while polling != PGRES_POLLING_OK {
                guard polling != PGRES_POLLING_FAILED else { throw connectionFailure() }
                try wait(for: polling == PGRES_POLLING_READING ? POLLIN : POLLOUT, until: deadline, doing: "connecting")
                polling = PQconnectPoll(handle)
            }
            guard PQsetnonblocking(handle, 1) == 0 else { throw connectionFailure() }
            backendProcess = PQbackendPID(handle)
        } catch {
            close()
            throw error
        }
        // Notices (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    /// Calls `body` with C arrays of the keys and values, each ending in `nil`.
    private static func withCStrings<Result>(
        _ pairs: [(String, String)], _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> Result
    ) -> Result {
        let keys = pairs.map { UnsafePointer(strdup($0.0)) } + [nil]
        let values = pairs.map { UnsafePointer(strdup($0.1)) } + [nil]
        defer { for pointer in keys + values { free(UnsafeMutablePointer(mutating: pointer)) } }
        return body(keys, values)
    }

    /// Why the connection could not be made (`io`), with libpq's message.
    private func connectionFailure() -> StorageError {
        let message = handle.map { Self.message(PQerrorMessage($0)) } ?? "out of memory"
        return StorageError(.io, "Cannot connect to PostgreSQL at \(displayName): \(message)")
    }

    /// An `io` error with `what` and libpq's message.
    func failure(_ what: String) -> StorageError {
        let message = handle.map { Self.message(PQerrorMessage($0)) } ?? "out of memory"
        return StorageError(.io, "PostgreSQL at \(displayName): \(what): \(message)")
    }

    /// The end of the next wait: `timeout` from now, or `waitsEnd` when sooner.
    func nextDeadline() -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + timeout
        guard let waitsEnd else { return deadline }
        return min(deadline, waitsEnd)
    }

    /// Waits until the socket is ready for `events` or the deadline passes (then the connection is
    /// closed: what the server did with a request half sent or half answered is unknown).
    func wait(for events: Int32, until deadline: ContinuousClock.Instant, doing what: @autoclosure () -> String) throws(StorageError) {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                close()
                let allowed = waitsEnd.map { $0 <= ContinuousClock.now } == true ? "the time allowed" : Self.seconds(timeout)
                throw StorageError(.io, "PostgreSQL at \(displayName) did not answer within \(allowed) (\(what())): the connection is closed.")
            }
            var descriptor = pollfd(fd: socket, events: Int16(events), revents: 0)
            let milliseconds = Int32(min(left / .milliseconds(1), 60_000).rounded(.up))
            let ready = poll(&descriptor, 1, max(1, milliseconds))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                let error = failure(what())
                close()  // a statement half sent or half answered: the connection is of no further use
                throw error
            }
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration / .milliseconds(1)
        return milliseconds.truncatingRemainder(dividingBy: 1_000) == 0 ? "\(Int(milliseconds / 1_000)) s" : "\(milliseconds / 1_000) s"
    }

    deinit { close() }

    func close() {
        PQfinish(handle)
        handle = nil
    }

    /// Whether the connection is up (libpq notices a broken one when it is next used).
    var isConnected: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// The connection's socket, to wait on for notifications (`-1` when closed).
    var socket: Int32 { handle.map { PQsocket($0) } ?? -1 }

    /// Reads what the server sent (after the socket became readable) and returns the payloads of the
    /// notifications received so far, oldest first.
    ///
    /// - Throws: `StorageError` (`io`) when the connection broke.
    func notifications() throws(StorageError) -> [String] {
        guard let handle else { throw StorageError(.io, "The connection to PostgreSQL at \(displayName) is closed.") }
        guard PQconsumeInput(handle) == 1 else {
            throw StorageError(.io, "PostgreSQL at \(displayName): \(Self.message(PQerrorMessage(handle)))")
        }
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(String(cString: notification.pointee.extra))
            PQfreemem(notification)
        }
        return payloads
    }

    /// Runs SQL without parameters (several statements allowed); returns the last result.
    @discardableResult
    func execute(_ sql: String) throws(StorageError) -> PostgresResult {
        guard let handle else { throw StorageError(.io, "The connection to PostgreSQL at \(displayName) is closed.") }
        guard PQsendQuery(handle, sql) == 1 else { throw failure(Self.statement(sql)) }
        return try collect(sql)
    }

    /// Commits the transaction open on this connection.
    ///
    /// - Throws: `StorageError` (`io`) when it did not commit: the server's error, a lost connection, or
    ///   a transaction a failed statement had aborted (PostgreSQL then answers COMMIT with ROLLBACK).
    func commit() throws(StorageError) {
        let tag = try execute("COMMIT").commandTag
        guard tag == "COMMIT" else {
            throw StorageError(.io, "PostgreSQL at \(displayName): the transaction was rolled back (\(tag)): nothing of it was stored.")
        }
    }

    /// Runs one statement with `parameters` (`$1`, `$2`, …), results in binary.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(StorageError) -> PostgresResult {
        guard let handle else { throw StorageError(.io, "The connection to PostgreSQL at \(displayName) is closed.") }
        let sent = Self.withParameters(parameters) { count, types, values, lengths, formats in
            PQsendQueryParams(handle, sql, count, types, values, lengths, formats, 1)
        }
        guard sent == 1 else { throw failure(Self.statement(sql)) }
        return try collect(sql)
    }

    /// Calls `send` with libpq's parameter arrays for `parameters` (binary format): every parameter's
    /// bytes back to back in one buffer (plus one byte, so that it has an address even when every
    /// value is empty), alive until `send` returns (libpq copies them into its output buffer).
    static func withParameters(
        _ parameters: [PostgresValue],
        _ send: (Int32, [Oid], [UnsafePointer<CChar>?], [Int32], [Int32]) -> Int32
    ) -> Int32 {
        var storage: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        var types: [Oid] = []
        for parameter in parameters {
            let start = storage.count
            parameter.write(to: &storage)
            types.append(parameter.type)
            offsets.append(start)
            lengths.append(Int32(storage.count - start))
        }
        storage.append(0)
        let formats = [Int32](repeating: 1, count: parameters.count)
        return storage.withUnsafeBufferPointer { buffer -> Int32 in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var values: [UnsafePointer<CChar>?] = []
            for (index, parameter) in parameters.enumerated() {
                if case .null = parameter { values.append(nil) } else { values.append(base + offsets[index]) }
            }
            return send(Int32(parameters.count), types, values, lengths, formats)
        }
    }

    /// The statements prepared on this connection, by name (`pipeline` prepares each once).
    var prepared: Set<String> = []

    /// Sends what libpq holds, within the deadline.
    func flush(until deadline: ContinuousClock.Instant, doing what: String) throws(StorageError) {
        guard let handle else { throw StorageError(.io, "The connection to PostgreSQL at \(displayName) is closed.") }
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { return }
            guard flushed == 1 else { throw failure(what) }
            try wait(for: POLLIN | POLLOUT, until: deadline, doing: "sending \(what)")
            guard PQconsumeInput(handle) == 1 else { throw failure(what) }
        }
    }

    /// The next result, reading from the server until one is complete (`nil`: the current statement's
    /// results are all read).
    func nextResult(until deadline: ContinuousClock.Instant, doing sql: String) throws(StorageError) -> OpaquePointer? {
        guard let handle else { throw StorageError(.io, "The connection to PostgreSQL at \(displayName) is closed.") }
        while PQisBusy(handle) == 1 {
            try wait(for: POLLIN, until: deadline, doing: Self.statement(sql))
            guard let handle = self.handle, PQconsumeInput(handle) == 1 else { throw failure(Self.statement(sql)) }
        }
        return PQgetResult(handle)
    }

    /// Sends what libpq holds and reads every result of the statement(s) sent, within `timeout`;
    /// returns the last one, or throws for the first that failed.
    private func collect(_ sql: String) throws(StorageError) -> PostgresResult {
        let deadline = nextDeadline()
        try flush(until: deadline, doing: Self.statement(sql))
        var last: PostgresResult?
        var firstError: StorageError?
        while let result = try nextResult(until: deadline, doing: sql) {
            do throws(StorageError) {
                last = try check(result, sql)
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
        guard let last else { throw failure(Self.statement(sql)) }
        return last
    }

    /// The first line of a statement, for messages.
    static func statement(_ sql: String) -> String {
        sql.split(separator: "\n").first.map(String.init) ?? sql
    }

    func check(_ result: OpaquePointer?, _ sql: String) throws(StorageError) -> PostgresResult {
        guard let result else {
            throw StorageError(.io, "PostgreSQL at \(displayName): \(Self.message(PQerrorMessage(handle)))")
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = Self.message(PQresultErrorMessage(result))
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            PQclear(result)
            let statement = Self.statement(sql)
            // A unique key taken by another writer's commit (SQLSTATE 23505) is a conflict like a version
            // taken by it: nothing of the transaction was stored.
            throw StorageError(
                state == "23505" ? .conflict : .io,
                "PostgreSQL at \(displayName): \(message)\(state.isEmpty ? "" : " (SQLSTATE \(state))") in: \(statement)")
        }
        return PostgresResult(result)
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        return String(cString: text).trimmingWhitespace()
    }

    /// Whether libpq takes `uri` for a plain database name (neither `key=value` pairs nor a URI).
    private static func isDatabaseName(_ uri: String) -> Bool {
        !uri.contains("=") && !uri.hasPrefix("postgresql://") && !uri.hasPrefix("postgres://")
    }

    /// Whether libpq reads `uri` as a connection string (a plain database name, without `=` or a
    /// scheme, always does).
    static func parses(_ uri: String) -> Bool {
        guard !isDatabaseName(uri) else { return true }
        var failure: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(uri, &failure) else {
            if let failure { PQfreemem(failure) }
            return false
        }
        PQconninfoFree(options)
        return true
    }

    /// What names the server in messages, `stats` and logs, without a password however it was given
    /// (a URI's `user:secret@`, `?password=`, a `password = '…'` pair): host, address, port, database and
    /// user as libpq reads them from `uri`.
    static func redacted(_ uri: String) -> String {
        guard !isDatabaseName(uri) else {
            return uri.isEmpty ? "(the default server)" : "dbname=\(uri)"
        }
        var failure: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(uri, &failure) else {
            if let failure { PQfreemem(failure) }
            return "(a connection string that does not parse)"
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let shown = ["host", "hostaddr", "port", "dbname", "user"].compactMap { key in values[key].map { "\(key)=\($0)" } }
        return shown.isEmpty ? "(the default server)" : shown.joined(separator: " ")
    }
}

/// One statement's result (binary columns). Frees itself.
final class PostgresResult {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }
    deinit { PQclear(result) }

    var rowCount: Int { Int(PQntuples(result)) }
    /// The command tag (`COMMIT`, or `ROLLBACK` for a COMMIT of a transaction an error had aborted).
    var commandTag: String { String(cString: PQcmdStatus(result)) }
    /// Rows the statement inserted, updated or deleted.
    var affectedRows: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) == 1 }

    /// The raw bytes of a value (`nil` for SQL null).
    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column) else { return nil }
        let count = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard count > 0, let start = PQgetvalue(result, Int32(row), Int32(column)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    func text(_ row: Int, _ column: Int) -> String {
        String(decoding: bytes(row, column) ?? [], as: UTF8.self)
    }

    /// An integer column (`int2`, `int4` or `int8` in binary), 0 for null.
    func int(_ row: Int, _ column: Int) -> Int {
        guard let bytes = bytes(row, column) else { return 0 }
        var value: Int64 = 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        // Sign-extend the narrower types.
        let shift = Int64(64 - 8 * bytes.count)
        return bytes.isEmpty ? 0 : Int((value << shift) >> shift)
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        return String(text)
    }
}
