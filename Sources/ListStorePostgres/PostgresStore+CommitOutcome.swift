import ListStore

#if canImport(Glibc)
    import Glibc
#endif

/// What became of a write whose commit was cut off: PostgreSQL's commit log says, never a guess.
extension PostgresStore {
    /// Learns what became of a transaction whose commit was sent but not confirmed (the connection broke
    /// or timed out): from PostgreSQL's commit log (`txid_status`), on a new connection, within
    /// `timeout` in all. Returns when it committed; throws `error` when it did not. A transaction still
    /// in progress (its commit has not reached the server, or the server has not noticed the broken
    /// link) is ended first (`pg_terminate_backend` on its server process), so that the answer is final.
    ///
    /// - Throws: `error` when the transaction was rolled back; `StorageError` (`unknownOutcome`) when
    ///   the database could not tell in time.
    func resolve(_ transactionID: Int, backend: Int32, after error: StorageError) throws(StorageError) {
        let deadline = ContinuousClock.now + timeout
        var reason = "no answer"
        var pause = Duration.milliseconds(20)
        // A connection of its own, none of whose waits goes past the deadline (the writer's next write
        // connects again with the full timeout, and reads the data sources' ids again).
        var probe: PostgresConnection?
        defer { probe?.close() }
        asking: while ContinuousClock.now < deadline {
            switch ask(about: transactionID, backend: backend, on: &probe, until: deadline) {
            case .committed:
                return
            case .rolledBack:
                throw error
            case .unknowable(let why):
                reason = why
                break asking
            case .notYet(let why):
                reason = why
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            let wait = min(pause, left)
            var interval = timespec(tv_sec: Int(wait.components.seconds), tv_nsec: Int(wait.components.attoseconds / 1_000_000_000))
            nanosleep(&interval, nil)
            pause = min(pause * 2, .milliseconds(500))
        }
        throw StorageError(
            .unknownOutcome,
            "\(displayName): the commit was sent but not confirmed (\(error.message)), and whether it was stored could not be learned within \(timeout) (\(reason)); listd follows what the database holds once it answers.")
    }

    /// What the database says of a transaction, asked once.
    private enum Answer {
        case committed
        case rolledBack
        /// Final: the database cannot tell.
        case unknowable(String)
        /// Ask again (the transaction was ended meanwhile, or the database did not answer).
        case notYet(String)
    }

    /// Asks on `probe` (connecting it when needed); no wait goes past `deadline`.
    private func ask(about transactionID: Int, backend: Int32, on probe: inout PostgresConnection?, until deadline: ContinuousClock.Instant) -> Answer {
        do throws(StorageError) {
            if probe?.isConnected != true {
                probe?.close()
                probe = try PostgresConnection(uri: uri, timeout: timeout, waitsEnd: deadline)
            }
            let connection = probe!
            let status = try connection.query("SELECT txid_status($1)", [.integer(transactionID)])
            switch status.rowCount == 1 && !status.isNull(0, 0) ? status.text(0, 0) : "" {
            case "committed": return .committed
            case "aborted": return .rolledBack
            case "in progress":
                // Its commit has not arrived (or the server has not seen the link break): end it.
                // Only while that process still runs this transaction (its process id may be reused).
                if backend != 0 {
                    _ = try? connection.query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_xid::text::bigint = $2 % 4294967296",
                        [.integer(Int(backend)), .integer(transactionID)])
                }
                return .notYet("the transaction was still in progress")
            default:
                return .unknowable("the database no longer knows transaction \(transactionID)")
            }
        } catch {
            return .notYet(error.message)
        }
    }
}
