// `server-benchmarks postgres`: the PostgreSQL store against the embedded SQLite store in one run, both
// `--sync always`: single-item appends over 50 connections (unpipelined and 16 in flight) and the apply
// of a 100k-item snapshot. It starts its own PostgreSQL (initdb into a temporary directory, listening
// only on a Unix socket there; as root the server runs as the postgres user).

import ListClient

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server in a temporary directory, for one benchmark run.
struct BenchmarkPostgres {
    let directory: String
    var uri: String { "postgresql://postgres@/listd?host=\(directory)" }

    /// Runs a PostgreSQL program (as the postgres user when root), its output into the directory's log.
    private static func run(_ program: String, _ arguments: [String], directory: String, asPostgres: Bool = true) -> Bool {
        let asRoot = getuid() == 0 && asPostgres
        let argv = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/commands.log", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ) == 0 else { return false }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return status == 0
    }

    /// The newest installed PostgreSQL's programs, or nil.
    private static var binaries: String? {
        guard let directory = opendir("/usr/lib/postgresql") else { return nil }
        defer { closedir(directory) }
        var newest: Int?
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let version = Int(name) { newest = max(newest ?? version, version) }
        }
        return newest.map { "/usr/lib/postgresql/\($0)/bin" }
    }

    /// Starts a server with a `listd` database; nil (with the reason printed) when it cannot.
    static func start() -> BenchmarkPostgres? {
        guard let bin = binaries else {
            print("postgres: PostgreSQL is not installed (scripts/install-deps installs it); skipped")
            return nil
        }
        var template = Array("/tmp/listd-bench-pg.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return nil }
        let directory = String(cString: made)
        if getuid() == 0 {
            _ = run("/bin/chown", ["postgres:postgres", directory], directory: directory, asPostgres: false)
            chmod(directory, 0o711)
        }
        let data = directory + "/data"
        guard run(bin + "/initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"], directory: directory),
            run(bin + "/pg_ctl", ["-D", data, "-l", directory + "/server.log", "-w", "-o", "-c listen_addresses='' -c unix_socket_directories='\(directory)'", "start"], directory: directory),
            run(bin + "/createdb", ["-h", directory, "-U", "postgres", "listd"], directory: directory)
        else {
            print("postgres: the server did not start (see \(directory)); skipped")
            return nil
        }
        return BenchmarkPostgres(directory: directory)
    }

    func stop() {
        guard let bin = Self.binaries else { return }
        _ = Self.run(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"], directory: directory)
        _ = system("rm -rf \(directory)")
    }
}

func postgresBenchmark() {
    guard let postgres = BenchmarkPostgres.start() else { return }
    defer { postgres.stop() }
    let sqliteDirectory = "/tmp/listd-bench-sqlite-\(getpid())"
    defer { _ = system("rm -rf \(sqliteDirectory)") }
    let sqliteSocket = "/tmp/listd-bench-sqlite-\(getpid()).sock"
    let postgresSocket = "/tmp/listd-bench-postgres-\(getpid()).sock"
    let sqlitePID = startListd(socket: sqliteSocket, storage: ["--state-directory", sqliteDirectory, "--sync", "always"])
    let postgresPID = startListd(socket: postgresSocket, storage: ["--postgres", postgres.uri, "--sync", "always"])
    defer {
        for pid in [sqlitePID, postgresPID] {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }
    print("— appendItems, SQLite against PostgreSQL (both --sync always), three rounds —")
    for (connections, pipeline, perConnection) in [(50, 1, 2_000), (50, 16, 4_000)] {
        var ratios: [Double] = []
        for round in 0..<3 {
            let sqlite = appendThroughput(socket: sqliteSocket, connections: connections, pipeline: pipeline, perConnection: perConnection, tag: "s\(pipeline)-\(round)")
            let postgresRun = appendThroughput(
                socket: postgresSocket, connections: connections, pipeline: pipeline, perConnection: perConnection, tag: "p\(pipeline)-\(round)")
            ratios.append(postgresRun.requestsPerSecond / sqlite.requestsPerSecond)
            print("  PostgreSQL/SQLite at \(connections)×\(pipeline): \(fixed(ratios.last!, 2))× the throughput, PostgreSQL p99 \(fixed(postgresRun.p99 / 1_000, 2)) ms, "
                + "SQLite p99 \(fixed(sqlite.p99 / 1_000, 2)) ms")
        }
        ratios.sort()
        print("PostgreSQL/SQLite at \(connections)×\(pipeline): median \(fixed(ratios[1], 2))×")
    }
    let sqliteApply = applyMilliseconds(socket: sqliteSocket)
    let postgresApply = applyMilliseconds(socket: postgresSocket)
    print("apply of a 100k-item snapshot: SQLite \(fixed(sqliteApply, 1)) ms, PostgreSQL \(fixed(postgresApply, 1)) ms (\(fixed(postgresApply / sqliteApply, 2))×)")
}
