import CPostgres
import ListStore

/// A value bound to a query parameter (sent in PostgreSQL's binary format).
enum PostgresValue {
    case text(String)
    case integer(Int)
    case bytes([UInt8])
    case null
}

/// A thin wrapper of one libpq connection: statements with binary parameters and results, and errors
/// that name the server (without its password) and PostgreSQL's message. Not thread-safe: confine a
/// connection to one thread at a time.
final class PostgresConnection {
    /// The connection URI with any password left out, for messages.
    let displayName: String
    private var handle: OpaquePointer?

    /// Connects to `uri` (libpq's syntax: `postgresql://user@host/db`, `postgresql://user@/db?host=/run/postgresql`,
    /// or `key=value` pairs).
    ///
    /// - Throws: `StorageError` (`io`) naming the server and why the connection failed.
    init(uri: String) throws(StorageError) {
        displayName = Self.redacted(uri)
        handle = PQconnectdb(uri)
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let message = handle.map { Self.message(PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(handle)
            self.handle = nil
            throw StorageError(.io, "Cannot connect to PostgreSQL at \(displayName): \(message)")
        }
        // Notices (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
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
        return try check(PQexec(handle, sql), sql)
    }

    /// Runs one statement with `parameters` (`$1`, `$2`, …), results in binary.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(StorageError) -> PostgresResult {
        guard let handle else { throw StorageError(.io, "The connection to PostgreSQL at \(displayName) is closed.") }
        // Every parameter's bytes back to back in one buffer (plus one byte, so that it has an address
        // even when every value is empty), kept alive until the call returns.
        var storage: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        var types: [Oid] = []
        for parameter in parameters {
            let start = storage.count
            switch parameter {
            case .text(let text):
                storage.append(contentsOf: text.utf8)
                types.append(25)  // text
            case .integer(let number):
                withUnsafeBytes(of: Int64(number).bigEndian) { storage.append(contentsOf: $0) }
                types.append(20)  // int8
            case .bytes(let bytes):
                storage.append(contentsOf: bytes)
                types.append(17)  // bytea
            case .null:
                types.append(0)
            }
            offsets.append(start)
            lengths.append(Int32(storage.count - start))
        }
        storage.append(0)
        let formats = [Int32](repeating: 1, count: parameters.count)
        let result = storage.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var values: [UnsafePointer<CChar>?] = []
            for (index, parameter) in parameters.enumerated() {
                if case .null = parameter { values.append(nil) } else { values.append(base + offsets[index]) }
            }
            return PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 1)
        }
        return try check(result, sql)
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws(StorageError) -> PostgresResult {
        guard let result else {
            throw StorageError(.io, "PostgreSQL at \(displayName): \(Self.message(PQerrorMessage(handle)))")
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = Self.message(PQresultErrorMessage(result))
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            PQclear(result)
            let statement = sql.split(separator: "\n").first.map(String.init) ?? sql
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

    /// `uri` with the password of a URI (`user:secret@`) or of a `password=` pair replaced by `***`.
    static func redacted(_ uri: String) -> String {
        for scheme in ["postgresql://", "postgres://"] where uri.hasPrefix(scheme) {
            let authority = uri.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" }
            guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return uri }
            return String(uri[..<colon]) + ":***" + String(uri[at...])
        }
        return uri.split(separator: " ").map { $0.hasPrefix("password=") ? "password=***" : String($0) }.joined(separator: " ")
    }
}

/// One statement's result (binary columns). Frees itself.
final class PostgresResult {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }
    deinit { PQclear(result) }

    var rowCount: Int { Int(PQntuples(result)) }
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
