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
            WebSocket), /metrics (Prometheus text) and /healthz. Every request for data needs the token printed at \
            start (or read with --token-file): the address printed carries it after #token= (a fragment, which \
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

    @Option(help: "The port to listen on (0: any free one; the URL printed says which).")
    var port = 8_111

    @Option(name: .customLong("unix-socket"), help: "Listen on this Unix socket instead of TCP (for a reverse proxy).")
    var unixSocket: String?

    @Option(name: .customLong("token-file"), help: "Read the token from this file (yours alone: mode 0600) instead of making one up.")
    var tokenFile: String?

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
        let token: AccessToken
        do {
            token = try tokenFile.map { try AccessToken.read(from: $0) } ?? .random()
        } catch {
            throw ValidationError("\(error)")
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
        let unixSocket = self.unixSocket
        let application = WebServer.application(configuration, logger: logger) { port in
            let shown = host.contains(":") ? "[\(host)]" : host
            let address = unixSocket.map { "unix:\($0)" } ?? "http://\(shown):\(port)"
            // Written at once (standard output may be a pipe that a script or the journal reads).
            let line = "listweb: serving \(address)/\(printsToken ? "#token=\(token.value)" : " (token from the token file)")\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
            _ = sd_notify(0, "READY=1\nSTATUS=Serving \(address)")
        }
        try await application.runService()
    }
}
