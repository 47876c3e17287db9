import ArgumentParser
import CSystemd
import Foundation
import ListClient
import ListWeb
import ListWire
import Logging

/// `listweb`: listd's views in a web browser, and listd's stats for Prometheus.
@main
struct Listweb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listweb",
        abstract: "Serves listd's data sources as live collection views in a web browser, and listd's stats for Prometheus.",
        discussion: """
            listweb connects to listd as a client, as the user it runs as (listd's access rules apply to that \
            user), and serves: / (the data sources), /sources/NAME (one drawn with its layout, live over a \
            WebSocket), /metrics (Prometheus text) and /healthz. Every request for data needs the token: listweb \
            makes it on its first start and keeps it in its state directory (--state-directory), so that an open \
            page survives a restart, or reads it with --token-file. The address printed at start carries it \
            after #token= (a fragment, which \
            the browser never sends anywhere; the page keeps it for listweb's origin alone and sends it with \
            its requests), or send Authorization: Bearer TOKEN. No cookie carries it. Pages are read-only \
            unless --allow-actions, and then change only their own views. Data is shown as text, never as HTML; \
            cells show images only from data: URLs and the origins --image-origins names.
            """,
        version: ListdVersion.number)

    @Option(help: "listd's socket (default: $LISTD_SOCKET; as root /run/listd.sock; else $XDG_RUNTIME_DIR/listd.sock or /tmp/listd-$USER/listd.sock).")
    var socket: String?

    @Option(help: "The address to listen on (loopback by default: put a reverse proxy in front to serve others).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free one). When it is taken, the next \(PortChoice.nextPortsTried) ports are tried, then any free one: the address printed says which (and that the port was taken); --exact-port fails instead.")
    var port = 8_111

    @Flag(name: .customLong("exact-port"), help: "Fail when --port is taken instead of listening on another port (for a reverse proxy that expects this one).")
    var exactPort = false

    @Option(name: .customLong("unix-socket"), help: "Listen on this Unix socket instead of TCP (for a reverse proxy).")
    var unixSocket: String?

    @Option(name: .customLong("token-file"), help: "Read the token from this file (yours alone: mode 0600; never written) instead of the state directory's.")
    var tokenFile: String?

    @Option(
        name: .customLong("state-directory"),
        help: ArgumentHelp(
            "Where listweb keeps its token (the file token, made with mode 0600 on the first start, read on later ones; the directory made 0700 or yours and writable by no one else) (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/listweb, else ~/.local/state/listweb).",
            valueName: "dir"))
    var stateDirectory: String?

    @Flag(name: .customLong("allow-actions"), help: "Let pages select, and expand and collapse in their own views (read-only by default); never anything shared.")
    var allowActions = false

    @Option(name: .customLong("image-origins"), help: "Origins cells may show images from (http(s)://host[:port], comma-separated or repeated; default none: data: images only).")
    var imageOrigins: [String] = []

    @Option(name: .customLong("max-pages"), help: "The most pages open at once (each holds a connection to listd); more get a 503 page.")
    var maxPages = WebConfiguration.defaultMaximumPages

    @Option(name: .customLong("max-connections-per-peer"), help: "The most connections one address may hold (a newcomer closes its oldest idle one).")
    var maxConnectionsPerPeer = 256

    @Option(name: .customLong("header-timeout"), help: "Seconds a new connection has to send its first request head.")
    var headerTimeout = 10

    @Option(name: .customLong("idle-timeout"), help: "Seconds an idle keep-alive connection stays open.")
    var idleTimeout = 30

    @Option(name: .customLong("allow-origin"), help: "Another origin whose pages may open views (a reverse proxy's, e.g. https://lists.example); repeatable.")
    var allowOrigin: [String] = []

    func run() async throws {
        var logger = Logger(label: "listweb")
        logger.logLevel = .notice
        guard tokenFile == nil || stateDirectory == nil else {
            throw ValidationError("--token-file and --state-directory both give the token: pass one of them")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port is a port number (0 to 65535)") }
        let token: AccessToken
        do {
            if let tokenFile {
                token = try AccessToken.read(from: tokenFile)
            } else {
                guard let directory = stateDirectory ?? TokenStateDirectory.defaultPath() else {
                    throw ValidationError("No state directory for the token: pass --state-directory (or --token-file), or set STATE_DIRECTORY, XDG_STATE_HOME or HOME.")
                }
                let kept = try TokenStateDirectory.token(in: directory)
                token = kept.token
                Self.printError("listweb: \(kept.created ? "made a new token, kept in" : "using the token kept in") \(kept.file)")
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("\(error)")
        }
        // The port asked for, else the next ones, else any free one (a reverse proxy's listweb: --exact-port).
        var notes: [String] = []
        var port = self.port
        if unixSocket == nil && port != 0 && exactPort && !PortChoice.isFree(host: host, port: port) {
            Self.printError("listweb: port \(port) on \(host) is taken (another program listens there), and --exact-port says to use no other")
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
        if unixSocket == nil && port != 0 && !exactPort {
            port = PortChoice.choose(host: host, preferred: self.port)
            if port != self.port {
                notes.append("port \(self.port) was taken")
                Self.printError("listweb: port \(self.port) on \(host) is taken; listening on \(port == 0 ? "another free port" : "port \(port)") instead")
            }
        }
        let listen: WebConfiguration.Listen = unixSocket.map { .unixSocket($0) } ?? .tcp(host: host, port: port)
        var origins: [ImageOrigin] = []
        for text in imageOrigins.flatMap({ $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }) where !text.isEmpty {
            guard let origin = ImageOrigin(text) else { throw ValidationError("--image-origins: \"\(text)\" is not an origin (http(s)://host[:port])") }
            origins.append(origin)
        }
        guard maxPages >= 1, maxConnectionsPerPeer >= 1, headerTimeout >= 1, idleTimeout >= 1 else {
            throw ValidationError("--max-pages, --max-connections-per-peer, --header-timeout and --idle-timeout are at least 1")
        }
        let configuration = WebConfiguration(
            listen: listen, token: token, allowsActions: allowActions, allowedOrigins: Set(allowOrigin), imageOrigins: origins,
            maximumPages: maxPages,
            connectionLimits: ConnectionLimits(
                headerTimeout: .seconds(Int64(headerTimeout)), idleTimeout: .seconds(Int64(idleTimeout)), maximumPerPeer: maxConnectionsPerPeer),
            link: ListdLink(socketPath: socket ?? SocketPath.forClient()))
        let printsToken = tokenFile == nil
        let host = self.host
        let said = notes
        let unixSocket = self.unixSocket
        let application = WebServer.application(configuration, logger: logger) { port in
            let shown = host.contains(":") ? "[\(host)]" : host
            let address = unixSocket.map { "unix:\($0)" } ?? "http://\(shown):\(port)"
            // Written at once (standard output may be a pipe that a script or the journal reads).
            let said = (printsToken ? [] : ["token from the token file"]) + said
            let line = "listweb: serving \(address)/\(printsToken ? "#token=\(token.value)" : "")\(said.isEmpty ? "" : " (\(said.joined(separator: "; ")))")\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
            _ = sd_notify(0, "READY=1\nSTATUS=Serving \(address)")
        }
        try await application.runService()
    }

    /// A line on standard error, written at once.
    static func printError(_ message: String) {
        let line = message + "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    }
}
