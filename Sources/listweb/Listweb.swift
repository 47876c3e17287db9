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
            WebSocket), /metrics (Prometheus text) and /healthz. Every request needs the token printed at \
            start (or read with --token-file): as ?token= once (a cookie then), or Authorization: Bearer. Pages \
            are read-only unless --allow-actions. Data is shown as text, never as HTML.
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

    @Flag(name: .customLong("allow-actions"), help: "Let pages select, expand, collapse and reorder (read-only by default).")
    var allowActions = false

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
        let configuration = WebConfiguration(
            listen: listen, token: token, allowsActions: allowActions, allowedOrigins: Set(allowOrigin),
            link: ListdLink(socketPath: socket ?? SocketPath.forClient()))
        let printsToken = tokenFile == nil
        let host = self.host
        let unixSocket = self.unixSocket
        let application = WebServer.application(configuration, logger: logger) { port in
            let shown = host.contains(":") ? "[\(host)]" : host
            let address = unixSocket.map { "unix:\($0)" } ?? "http://\(shown):\(port)"
            // Written at once (standard output may be a pipe that a script or the journal reads).
            let line = "listweb: serving \(address)/\(printsToken ? "?token=\(token.value)" : " (token from the token file)")\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
            _ = sd_notify(0, "READY=1\nSTATUS=Serving \(address)")
        }
        try await application.runService()
    }
}
