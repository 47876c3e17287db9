import CSQLite
import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// A thin wrapper of one SQLite connection: statements, bindings, columns, and errors that name the
/// file and the OS error. Not thread-safe: confine a connection to one thread at a time.
final class SQLiteConnection {
    let path: String
    private(set) var handle: OpaquePointer?
    /// Every statement prepared on this connection, by SQL: prepared once, reused, and finalized before
    /// the connection closes (a connection with a live statement cannot close, and would leave its
    /// write-ahead log behind).
    private var statements: [String: SQLiteStatement] = [:]

    init(path: String, readOnly: Bool = false) throws(StorageError) {
        self.path = path
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        // Never through a symbolic link (the state directory is checked as well: see StateDirectory).
        let status = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, nil)
        if status != SQLITE_OK {
            let error = failure(status, "open")
            sqlite3_close_v2(handle)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit { close() }

    func close() {
        guard let handle else { return }
        for statement in statements.values { statement.finalize() }
        statements = [:]
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Runs SQL without results (several statements allowed).
    func execute(_ sql: String) throws(StorageError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        if status != SQLITE_OK { throw failure(status, sql) }
    }

    /// The statement for `sql`, prepared on first use.
    func prepare(_ sql: String) throws(StorageError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        if status != SQLITE_OK { throw failure(status, sql) }
        let prepared = SQLiteStatement(statement: statement!, connection: self, sql: sql)
        statements[sql] = prepared
        return prepared
    }

    /// The single integer a query returns (e.g. a pragma).
    func integer(_ sql: String) throws(StorageError) -> Int {
        let statement = try prepare(sql)
        try statement.query()
        guard try statement.step() else { return 0 }
        let value = statement.int(0)
        try statement.query()  // resets it
        return value
    }

    var lastInsertRowID: Int { Int(sqlite3_last_insert_rowid(handle)) }
    /// Rows the last statement inserted, updated or deleted.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// A `StorageError` for a failed call: `corrupt` for a damaged or foreign file, else `io` with
    /// SQLite's message and the OS error behind it.
    func failure(_ status: Int32, _ what: String) -> StorageError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
        let primary = status & 0xff
        if primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB {
            return StorageError(.corrupt, "\(path) is damaged or not a listd database (\(message)).")
        }
        let systemError = handle.map { sqlite3_system_errno($0) } ?? 0
        let os = systemError != 0 ? ": \(String(cString: strerror(systemError)))" : ""
        return StorageError(.io, "\(path): \(message)\(os) (while running \(what.prefix(60)))")
    }
}

/// A prepared statement, reset after each use.
final class SQLiteStatement {
    private var statement: OpaquePointer!
    private unowned let connection: SQLiteConnection
    private let sql: String

    init(statement: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.statement = statement
        self.connection = connection
        self.sql = sql
    }

    deinit { finalize() }

    func finalize() {
        guard statement != nil else { return }
        sqlite3_finalize(statement)
        statement = nil
    }

    /// Steps once: `true` when a row is available.
    @discardableResult
    func step() throws(StorageError) -> Bool {
        let status = sqlite3_step(statement)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            sqlite3_reset(statement)
            return false
        default:
            sqlite3_reset(statement)
            throw connection.failure(status, sql)
        }
    }

    /// Binds, runs to completion and resets.
    func run(_ values: SQLiteValue...) throws(StorageError) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        try bindArray(values)
        while try step() {}
    }

    /// Binds `values` to parameters 1, 2, … .
    private func bindArray(_ values: [SQLiteValue]) throws(StorageError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let number): status = sqlite3_bind_int64(statement, index, Int64(number))
            case .text(let text): status = sqlite3_bind_text(statement, index, text, -1, transient)
            case .blob(let bytes):
                status = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob64(statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, sqlite3_uint64(raw.count), transient)
                }
            }
            if status != SQLITE_OK { throw connection.failure(status, sql) }
        }
    }

    /// Resets, binds `values`; then call `step()` for each row.
    func query(_ values: SQLiteValue...) throws(StorageError) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        try bindArray(values)
    }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: pointer)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int)
    case text(String)
    case blob([UInt8])
}

/// SQLite copies bound values (`SQLITE_TRANSIENT`).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
