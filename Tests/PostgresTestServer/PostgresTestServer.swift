import CTestCredentials

#if canImport(Glibc)
    import Glibc
#endif

/// A real PostgreSQL server for one test or benchmark run: `initdb` into a temporary directory and
/// `pg_ctl start`, listening only on a Unix socket in that directory, with one database `listd`. As root
/// the server runs as the `postgres` user (PostgreSQL refuses to run as root). Stopped and removed when
/// released.
///
/// Layout: a temporary directory of the caller's (`/tmp/listd-pg.XXXXXX`) holds the captured output of
/// each command, out of the server user's reach; in it, `server/` belongs to the server's user and holds
/// the socket, the cluster (`server/data`) and the server's log. Every program runs in `/` (a user that
/// cannot enter the test's working directory, a clone under a private directory, would complain), with
/// its standard error kept apart from the output a test compares.
public final class PostgresTestServer {
    /// Why the server could not start or a command failed (with the command's output and the server's log).
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The server's directory: its socket, its cluster and its log.
    public let directory: String
    /// The caller's temporary directory around `directory`, with the commands' captured output.
    private let outer: String
    var dataDirectory: String { directory + "/data" }
    /// The connection URI listd is given (the socket directory as `host`).
    public var uri: String { "postgresql://postgres@/listd?host=\(directory)" }
    private let binaries: String

    /// The newest installed PostgreSQL's programs.
    static func binaryDirectory() throws(Failure) -> String {
        var newest: Int?
        if let directory = opendir("/usr/lib/postgresql") {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if let version = Int(name) { newest = max(newest ?? version, version) }
            }
            closedir(directory)
        }
        guard let newest else { throw Failure(description: "PostgreSQL is not installed (/usr/lib/postgresql/*/bin): run scripts/install-deps") }
        return "/usr/lib/postgresql/\(newest)/bin"
    }

    /// Makes a cluster in a new temporary directory (a short path: the socket's must fit
    /// `sockaddr_un`), starts it and creates the `listd` database.
    public init() throws(Failure) {
        binaries = try Self.binaryDirectory()
        var template = Array("/tmp/listd-pg.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure(description: "mkdtemp failed") }
        outer = String(cString: made)
        directory = outer + "/server"
        guard mkdir(directory, 0o700) == 0 else { throw Failure(description: "cannot make \(directory): \(String(cString: strerror(errno)))") }
        if getuid() == 0 {
            // The server's user owns its directory and can reach it through the caller's (0711).
            try run("/bin/chown", ["postgres:postgres", directory], asPostgres: false)
            chmod(outer, 0o711)
        }
        try run(binaries + "/initdb", ["-D", dataDirectory, "-A", "trust", "-U", "postgres", "--no-sync"])
        try start()
        try run(binaries + "/createdb", ["-h", directory, "-U", "postgres", "listd"])
    }

    deinit {
        _ = try? run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        _ = try? run("/bin/rm", ["-rf", outer], asPostgres: false)
    }

    /// Starts the server (again).
    public func start() throws(Failure) {
        try run(
            binaries + "/pg_ctl",
            ["-D", dataDirectory, "-l", directory + "/server.log", "-w", "-t", "60", "-o",
             "-c listen_addresses='' -c unix_socket_directories='\(directory)' -c fsync=on", "start"])
    }

    /// Stops the server at once (as a crash would, `immediate`), or cleanly (`fast`).
    public func stop(mode: String = "fast") throws(Failure) {
        try run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", mode, "-w", "stop"])
    }

    /// Runs SQL in the `listd` database with psql; its output (unaligned, tuples only), without what psql
    /// wrote to standard error.
    @discardableResult
    public func psql(_ sql: String) throws(Failure) -> String {
        try run(binaries + "/psql", ["-h", directory, "-U", "postgres", "-d", "listd", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// Runs a program to completion in `/`, as the `postgres` user when root, and returns its standard
    /// output (its standard error goes into the failure only). Spawned with every descriptor above stderr
    /// closed: `pg_ctl start` leaves the server running, and a server holding one of the caller's pipes
    /// (Foundation's `Process` ones, a benchmark's sockets) would keep them open.
    @discardableResult
    private func run(_ program: String, _ arguments: [String], asPostgres: Bool = true) throws(Failure) -> String {
        let asRoot = getuid() == 0 && asPostgres
        let argv = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        let (output, errors) = (outer + "/command.out", outer + "/command.err")
        var cArguments: [UnsafePointer<CChar>?] = argv.map { UnsafePointer(strdup($0)) } + [nil]
        defer { for argument in cArguments { free(UnsafeMutablePointer(mutating: argument)) } }
        let status = listd_test_run_closing_descriptors(&cArguments, "/", output, errors)
        guard status != -1 else { throw Failure(description: "cannot start \(argv[0]): \(String(cString: strerror(errno)))") }
        let (text, complaints) = (Self.contents(of: output), Self.contents(of: errors))
        unlink(output)
        unlink(errors)
        guard status == 0 else {
            let log = Self.contents(of: directory + "/server.log")
            throw Failure(description: "\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)\(complaints)\n\(log.suffix(2_000))")
        }
        return text
    }

    /// A file's text ("" when it cannot be read).
    private static func contents(of path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
