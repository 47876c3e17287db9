import CPostgres
import ListStore

/// A statement of a pipeline (`PostgresConnection.pipeline`): SQL and its parameters, prepared once
/// per connection under `preparedName` when one is given (parsed and planned once, not per write).
struct PostgresStatement {
    var sql: String
    var parameters: [PostgresValue] = []
    var preparedName: String?
}

/// What a pipeline's statements gave: a result for each statement that ran, and the first failure
/// (the server skips the statements after a failed one: their results are `nil`).
struct PipelineResults {
    var results: [PostgresResult?]
    var firstError: StorageError?
}

extension PostgresConnection {
    /// Runs `statements` in one round trip (libpq's pipeline mode): all are sent, then every result is
    /// read. A statement with a `preparedName` is prepared first when this connection has not yet
    /// prepared it. After a failed statement the server skips the rest (their results are `nil`); the
    /// first failure is in `firstError`, for the caller to decide (a transaction begun in the pipeline
    /// is then aborted and needs a `ROLLBACK`).
    ///
    /// - Throws: `StorageError` (`io`) when the statements could not be sent or their results read
    ///   (the connection is then closed or of no further use).
    func pipeline(_ statements: [PostgresStatement]) throws(StorageError) -> PipelineResults {
        guard let handle else { throw StorageError(.io, "The connection to PostgreSQL at \(displayName) is closed.") }
        let what = statements.first.map { Self.statement($0.sql) } ?? "an empty pipeline"
        guard PQenterPipelineMode(handle) == 1 else { throw failure(what) }
        do throws(StorageError) {
            let results = try runPipeline(statements, on: handle, what)
            guard let handle = self.handle, PQexitPipelineMode(handle) == 1 else { throw failure(what) }
            return results
        } catch {
            // Half sent or half read: what the connection still holds is unknown.
            close()
            throw error
        }
    }

    private func runPipeline(_ statements: [PostgresStatement], on handle: OpaquePointer, _ what: String) throws(StorageError) -> PipelineResults {
        // What was sent, in order: the prepared names it prepares (to count once they succeed) or nil.
        var sent: [(preparing: String?, statement: Int)] = []
        for (index, statement) in statements.enumerated() {
            var ok: Int32
            if let name = statement.preparedName {
                if !prepared.contains(name) {
                    let types = statement.parameters.map(\.type)
                    guard PQsendPrepare(handle, name, statement.sql, Int32(types.count), types) == 1 else { throw failure(Self.statement(statement.sql)) }
                    sent.append((name, index))
                }
                ok = Self.withParameters(statement.parameters) { count, _, values, lengths, formats in
                    PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
                }
            } else {
                ok = Self.withParameters(statement.parameters) { count, types, values, lengths, formats in
                    PQsendQueryParams(handle, statement.sql, count, types, values, lengths, formats, 1)
                }
            }
            guard ok == 1 else { throw failure(Self.statement(statement.sql)) }
            sent.append((nil, index))
        }
        guard PQpipelineSync(handle) == 1 else { throw failure(what) }
        let deadline = nextDeadline()
        try flush(until: deadline, doing: what)
        var results = PipelineResults(results: Array(repeating: nil, count: statements.count), firstError: nil)
        for (preparing, index) in sent {
            let sql = statements[index].sql
            // One result per statement, then a null one.
            guard let result = try nextResult(until: deadline, doing: sql) else { throw failure(Self.statement(sql)) }
            if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
            } else {
                do throws(StorageError) {
                    let checked = try check(result, sql)
                    if let preparing { prepared.insert(preparing) } else { results.results[index] = checked }
                } catch {
                    if results.firstError == nil { results.firstError = error }
                }
            }
            while let extra = try nextResult(until: deadline, doing: sql) { PQclear(extra) }
        }
        // The synchronization point's own result ends the pipeline.
        guard let synced = try nextResult(until: deadline, doing: what) else { throw failure(what) }
        let status = PQresultStatus(synced)
        PQclear(synced)
        guard status == PGRES_PIPELINE_SYNC else { throw failure(what) }
        return results
    }
}
