import Foundation
import CTestCredentials
import ListClient

#if canImport(Glibc)
    import Glibc
#endif

/// A real PostgreSQL server for one test: `initdb` into a temporary directory and `pg_ctl start`,
/// listening only on a Unix socket in that directory, with one database `listd`. As root the server
/// runs as the `postgres` user (PostgreSQL refuses to run as root). A test that needs it fails (it does
/// not skip) when the server cannot start: `scripts/install-deps` installs PostgreSQL.
final class PostgresServer {
    let directory: String
    var dataDirectory: String { directory + "/data" }
    /// The connection URI listd is given (the socket directory as `host`).
    var uri: String { "postgresql://\(user)@/listd?host=\(directory)" }
    private let user = "postgres"

    /// The newest installed PostgreSQL's programs.
    static func binaryDirectory() throws -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw ClientError("PostgreSQL is not installed (/usr/lib/postgresql/*/bin): run scripts/install-deps")
        }
        return "/usr/lib/postgresql/\(newest)/bin"
    }

    init() throws {
        // A short path: the socket's path must fit sockaddr_un.
        directory = try makeTemporaryDirectory()
        if getuid() == 0 {
            // The server's user must own the directory and be able to reach it.
            try run("/bin/chown", ["postgres:postgres", directory], asPostgres: false)
            chmod(directory, 0o711)
        }
        try run(Self.binaryDirectory() + "/initdb", ["-D", dataDirectory, "-A", "trust", "-U", user, "--no-sync"])
        try start()
        try run(Self.binaryDirectory() + "/createdb", ["-h", directory, "-U", user, "listd"])
    }

    deinit {
        _ = try? run(Self.binaryDirectory() + "/pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server (again).
    func start() throws {
        try run(
            Self.binaryDirectory() + "/pg_ctl",
            ["-D", dataDirectory, "-l", directory + "/server.log", "-w", "-t", "60", "-o",
             "-c listen_addresses='' -c unix_socket_directories='\(directory)' -c fsync=on", "start"])
    }

    /// Stops the server at once (as a crash would, `immediate`), or cleanly (`fast`).
    func stop(mode: String = "fast") throws {
        try run(Self.binaryDirectory() + "/pg_ctl", ["-D", dataDirectory, "-m", mode, "-w", "stop"])
    }

    /// Runs SQL in the `listd` database with psql; its output (unaligned, tuples only).
    @discardableResult
    func psql(_ sql: String) throws -> String {
        try run(Self.binaryDirectory() + "/psql", ["-h", directory, "-U", user, "-d", "listd", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// Runs a program to completion, as the `postgres` user when the tests run as root. Spawned with
    /// every descriptor above stderr closed: `pg_ctl start` leaves the server running, and a server
    /// holding one of Foundation's pipes would keep `Process` from ever seeing its child end.
    @discardableResult
    private func run(_ program: String, _ arguments: [String], asPostgres: Bool = true) throws -> String {
        let asRoot = getuid() == 0 && asPostgres
        let argv = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        let output = directory + "/command.out"
        var cArguments: [UnsafePointer<CChar>?] = argv.map { UnsafePointer(strdup($0)) } + [nil]
        defer { for argument in cArguments { free(UnsafeMutablePointer(mutating: argument)) } }
        let status = listd_test_run_closing_descriptors(&cArguments, output)
        guard status != -1 else { throw ClientError("cannot start \(argv[0]): \(String(cString: strerror(errno)))") }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        unlink(output)
        guard status == 0 else {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw ClientError("\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)\n\(log.suffix(2_000))")
        }
        return text
    }
}
