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
    public var uri: String { "postgresql://postgres@/listd?host=\(directory)&port=\(socketPort)" }
    /// The port in the Unix socket's name (PostgreSQL names it after the TCP port).
    private var socketPort: UInt16 { network == nil ? 5432 : port }
    private let binaries: String

    /// A server other hosts reach over TCP: TLS only, with a certificate of a test CA for `hostName`,
    /// and the `listd` role's password checked with SCRAM-SHA-256 (the Unix socket stays open, without
    /// a password, for the test's own `psql`).
    public struct Network {
        /// The IPv4 address the server listens on.
        public var address: String
        /// The name in the server's certificate (clients verify it with `sslmode=verify-full`).
        public var hostName: String
        /// A network namespace to run the server in (`ip netns exec`), or `nil`.
        public var namespace: String?
        /// TLS on (only TLS accepted over TCP), or off (plain TCP, for a test that reads the statements
        /// on the wire); SCRAM either way.
        public var tls: Bool

        public init(address: String = "127.0.0.1", hostName: String = "db.listd.test", namespace: String? = nil, tls: Bool = true) {
            self.address = address
            self.hostName = hostName
            self.namespace = namespace
            self.tls = tls
        }
    }

    /// The TCP settings, when the server listens on TCP.
    public let network: Network?
    /// The TCP port (0 without `network`).
    public private(set) var port: UInt16 = 0
    /// The `listd` role's password (random; empty without `network`).
    public private(set) var password = ""
    /// The test CA's certificate, which signed the server's (a file clients may read).
    public var certificateAuthority: String { directory + "/ca.crt" }

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
    public init(network: Network? = nil) throws(Failure) {
        self.network = network
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
        if let network { try prepareNetwork(network) }
        try startPickingAnotherPortWhenTaken()
        try run(binaries + "/createdb", ["-h", directory, "-p", "\(socketPort)", "-U", "postgres", "listd"])
        if network != nil {
            try psql("CREATE ROLE listd LOGIN PASSWORD '\(password)'; ALTER DATABASE listd OWNER TO listd")
        }
    }

    /// Makes the test CA and the server's certificate, picks a port and a password, and lets TCP
    /// clients in only over TLS with SCRAM-SHA-256.
    private func prepareNetwork(_ network: Network) throws(Failure) {
        password = Self.randomHex(16)
        port = try Self.freePort(on: network.address)
        let extensions = directory + "/server.ext"
        try write("subjectAltName=DNS:\(network.hostName),IP:\(network.address)\n", to: extensions)
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=listd test CA", "-days", "30"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=\(network.hostName)"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "30",
             "-extfile", extensions],
        ] {
            try run("/usr/bin/openssl", arguments, in: directory)
        }
        chmod(directory + "/ca.crt", 0o644)
        // Local connections (the test's psql) as before; TCP only with TLS and a password.
        try write(
            network.tls
                ? """
                local all all trust
                hostssl all all 0.0.0.0/0 scram-sha-256
                hostnossl all all 0.0.0.0/0 reject

                """
                : """
                local all all trust
                host all all 0.0.0.0/0 scram-sha-256

                """, to: dataDirectory + "/pg_hba.conf")
    }

    /// A libpq connection string for the `listd` role over TCP with TLS, verifying the server's name
    /// (`sslmode=verify-full`), the password read from `passfile`; `address` and `port` say where to
    /// connect (e.g. a proxy), the server's name is what the certificate must show.
    public func connectionString(address: String? = nil, port: UInt16? = nil, passfile: String) -> String {
        guard let network else { return uri }
        return "host=\(network.hostName) hostaddr=\(address ?? network.address) port=\(port ?? self.port) dbname=listd user=listd "
            + (network.tls ? "sslmode=verify-full sslrootcert=\(certificateAuthority)" : "sslmode=disable") + " passfile=\(passfile)"
    }

    /// A passfile line for the `listd` role (any host and port).
    public var passfileLine: String { "*:*:listd:listd:\(password)\n" }

    /// Writes a new passfile (mode 0600, as libpq requires) for the `listd` role in `directory` (the
    /// caller's own); returns its path.
    public func writePassfile(in directory: String) throws(Failure) -> String {
        let path = directory + "/pgpass"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let bytes = Array(passfileLine.utf8)
        guard Glibc.write(descriptor, bytes, bytes.count) == bytes.count else { throw Failure(description: "cannot write \(path)") }
        return path
    }

    private static func randomHex(_ bytes: Int) -> String {
        String((0..<bytes * 2).map { _ in Array("0123456789abcdef")[Int.random(in: 0..<16)] })
    }

    /// A TCP port nobody listens on now at `address`.
    private static func freePort(on address: String) throws(Failure) -> UInt16 {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else { throw Failure(description: "not an IPv4 address: \(address)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
        }
        // In a namespace of its own, the address may not exist here: any port will do there.
        return bound ? UInt16(bigEndian: socketAddress.sin_port) : 5432
    }

    /// Writes `text` to a new file at `path` (replacing one), readable by the server's user.
    private func write(_ text: String, to path: String) throws(Failure) {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard Glibc.write(descriptor, bytes, bytes.count) == bytes.count else { throw Failure(description: "cannot write \(path)") }
        if getuid() == 0 { fchown(descriptor, Self.postgresUser.uid, Self.postgresUser.gid) }
    }

    /// The `postgres` user's ids (0 when unknown).
    private static var postgresUser: (uid: uid_t, gid: gid_t) {
        guard let entry = getpwnam("postgres") else { return (0, 0) }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    deinit {
        _ = try? run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        _ = try? run("/bin/rm", ["-rf", outer], asPostgres: false)
    }

    /// Starts the server (again).
    public func start() throws(Failure) {
        var options = "-c listen_addresses='' -c unix_socket_directories='\(directory)' -c fsync=on"
        if let network {
            options =
                "-c listen_addresses='\(network.address)' -c port=\(port) -c unix_socket_directories='\(directory)' -c fsync=on "
                + (network.tls ? "-c ssl=on -c ssl_cert_file='\(directory)/server.crt' -c ssl_key_file='\(directory)/server.key' " : "")
                + "-c password_encryption=scram-sha-256"
        }
        try run(
            binaries + "/pg_ctl", ["-D", dataDirectory, "-l", directory + "/server.log", "-w", "-t", "60", "-o", options, "start"],
            namespace: network?.namespace)
    }

    /// Starts the server; on TCP, when another process took the port picked for it meanwhile, again on
    /// another (a few times).
    private func startPickingAnotherPortWhenTaken() throws(Failure) {
        var attempt = 1
        while true {
            do throws(Failure) {
                return try start()
            } catch {
                guard let network, attempt < 5, serverLog.contains("Address already in use") else { throw error }
                attempt += 1
                port = try Self.freePort(on: network.address)
            }
        }
    }

    /// The server's log so far.
    public var serverLog: String {
        let descriptor = open(directory + "/server.log", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Stops the server at once (as a crash would, `immediate`), or cleanly (`fast`).
    public func stop(mode: String = "fast") throws(Failure) {
        try run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", mode, "-w", "stop"])
    }

    /// Runs SQL in the `listd` database with psql; its output (unaligned, tuples only), without what psql
    /// wrote to standard error.
    @discardableResult
    public func psql(_ sql: String) throws(Failure) -> String {
        try run(binaries + "/psql", ["-h", directory, "-p", "\(socketPort)", "-U", "postgres", "-d", "listd", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// Runs a program to completion in `/`, as the `postgres` user when root, and returns its standard
    /// output (its standard error goes into the failure only). Spawned with every descriptor above stderr
    /// closed: `pg_ctl start` leaves the server running, and a server holding one of the caller's pipes
    /// (Foundation's `Process` ones, a benchmark's sockets) would keep them open.
    @discardableResult
    private func run(
        _ program: String, _ arguments: [String], asPostgres: Bool = true, in workingDirectory: String = "/", namespace: String? = nil
    ) throws(Failure) -> String {
        let asRoot = getuid() == 0 && asPostgres
        var argv = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        if let namespace { argv = ["/usr/sbin/ip", "netns", "exec", namespace] + argv }
        let (output, errors) = (outer + "/command.out", outer + "/command.err")
        var cArguments: [UnsafePointer<CChar>?] = argv.map { UnsafePointer(strdup($0)) } + [nil]
        defer { for argument in cArguments { free(UnsafeMutablePointer(mutating: argument)) } }
        let status = listd_test_run_closing_descriptors(&cArguments, workingDirectory, output, errors)
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
