import Foundation
import TestSupport

/// Runs SQL on a database with the `sqlite3` shell (what an older listd or an operator left there);
/// returns its exit status (0: the SQL ran) and what it wrote to standard error.
@discardableResult
func runSQLiteShell(_ database: String, _ sql: String) throws -> (status: Int32, error: String) {
    let sqlite = Process()
    sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    sqlite.arguments = [database, sql]
    let errors = Pipe()
    sqlite.standardError = errors
    try sqlite.start()
    sqlite.waitUntilExit(within: .seconds(60))
    let error = String(decoding: (try? errors.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
    return (sqlite.terminationStatus, error)
}
