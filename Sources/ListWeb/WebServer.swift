import DiffableCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import ListWire
import Logging
import NIOCore

/// What listweb serves and how: where it listens, the token, whether pages may act, and listd.
public struct WebConfiguration: Sendable {
    public enum Listen: Sendable {
        case tcp(host: String, port: Int)
        /// A Unix socket, for a reverse proxy in front.
        case unixSocket(String)
    }

    public var listen: Listen
    public var token: AccessToken
    /// Pages may select, expand, collapse and reorder (`--allow-actions`); read-only otherwise.
    public var allowsActions: Bool
    /// Origins besides listweb's own whose pages may open the WebSocket (a reverse proxy's public one).
    public var allowedOrigins: Set<String>
    /// Origins cells may show images from (`--image-origins`); besides them only data: images.
    public var imageOrigins: [ImageOrigin]
    /// The most pages open at once (`--max-pages`): each holds a connection to listd, which counts them
    /// against listweb's user's `maxConnectionsPerUser`; more get a 503.
    public var maximumPages: Int
    /// Timeouts and the per-peer connection limit.
    public var connectionLimits: ConnectionLimits
    public var link: ListdLink

    /// The default `maximumPages`: well below listd's default `maxConnectionsPerUser` (256), leaving room
    /// for listweb's own short connections (the index, /metrics, /healthz) and the user's listctl.
    public static let defaultMaximumPages = 192

    public init(
        listen: Listen, token: AccessToken, allowsActions: Bool, allowedOrigins: Set<String> = [], imageOrigins: [ImageOrigin] = [],
        maximumPages: Int = defaultMaximumPages, connectionLimits: ConnectionLimits = ConnectionLimits(), link: ListdLink
    ) {
        self.listen = listen
        self.token = token
        self.allowsActions = allowsActions
        self.allowedOrigins = allowedOrigins
        self.imageOrigins = imageOrigins
        self.maximumPages = maximumPages
        self.connectionLimits = connectionLimits
        self.link = link
    }
}

/// listweb's HTTP server: the index, a page per data source, the page's files, a WebSocket per page
/// relayed to listd, `/metrics` and `/healthz`. Every request needs the token.
public enum WebServer {
    /// The application, ready to run; `onListening` gets the bound port (0 for a Unix socket).
    public static func application(
        _ configuration: WebConfiguration, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let counters = RelayCounters()
        let metrics = MetricsExporter(counters: counters)
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.middlewares.add(SecurityHeadersMiddleware(imageOrigins: configuration.imageOrigins))
        router.middlewares.add(TokenMiddleware(token: configuration.token))
        let link = configuration.link
        let maximumPages = configuration.maximumPages

        router.get("/") { _, _ in try asset("index.html") }
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        router.get("/sources/:name") { _, _ in
            // Full: a page that says so (and why) rather than one that cannot connect.
            guard !counters.refusesPage(limit: maximumPages) else { return try fullPage(maximumPages) }
            return try asset("source.html")
        }
        router.get("/static/:file") { _, context in try asset(context.parameters.get("file") ?? "") }
        // Asked without the token, before a page sends it (TokenProof).
        let proof = TokenProof(token: configuration.token)
        router.get("/api/proof") { request, _ in
            guard let nonce = request.uri.queryParameters.get("nonce"), TokenProof.isNonce(nonce) else {
                return text("listweb: /api/proof needs nonce=32 to 128 lower-case hexadecimal digits\n", status: .badRequest)
            }
            let answer = proof.answer(nonce)
            return json(["port": .int(answer.port), "proof": .string(answer.proof)])
        }
        router.get("/api/info") { _, _ in
            let pages = counters.snapshot.open
            return json([
                "actions": .bool(configuration.allowsActions), "listweb": .string(ListdVersion.number),
                "imageOrigins": .array(configuration.imageOrigins.map { .string($0.value) }),
                "pages": ["open": .int(pages), "max": .int(maximumPages)],
            ])
        }
        router.get("/api/sources") { _, _ in
            do {
                return json(try await link.request(["cmd": "listDataSources"]))
            } catch {
                return text("listd: \(error)\n", status: .badGateway)
            }
        }
        router.get("/metrics") { _, _ in
            let stats = try? await link.request(["cmd": "stats"])
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.render(stats: stats))))
        }
        router.get("/healthz") { _, _ in
            do {
                _ = try await link.request(["cmd": "ping"])
                return text("ok\n")
            } catch {
                return text("listd cannot be reached: \(error)\n", status: .serviceUnavailable)
            }
        }
        router.ws("/sources/:name/socket") { request, _ in
            // A browser says where the page came from: only listweb's own pages (or the origins given) may
            // open a view. A client without Origin (not a browser) has shown the token already.
            guard !counters.refusesPage(limit: maximumPages) else { return .dontUpgrade }
            guard let origin = request.headers[.origin] else { return .upgrade([:]) }
            let host = request.head.authority ?? ""
            if origin == "http://\(host)" || origin == "https://\(host)" || configuration.allowedOrigins.contains(origin) { return .upgrade([:]) }
            logger.warning("WebSocket refused: foreign origin", metadata: ["origin": "\(origin)", "host": "\(host)"])
            return .dontUpgrade
        } onUpgrade: { inbound, outbound, context in
            // The router leaves the path parameter as it came: percent-encoded, as the page's URL has it.
            let raw = context.requestContext.parameters.get("name") ?? ""
            let name = raw.removingPercentEncoding ?? raw
            let policy = RelayPolicy(dataSource: name, allowsActions: configuration.allowsActions, viewPrefix: "web-" + randomHex(6))
            try await ViewRelay.run(
                inbound: inbound, outbound: outbound, policy: policy, link: link, metrics: metrics, maximumPages: maximumPages, logger: logger)
        }

        let address: BindAddress
        switch configuration.listen {
        case .tcp(let host, let port): address = .hostname(host, port: port)
        case .unixSocket(let path): address = .unixDomainSocket(path: path)
        }
        let limits = configuration.connectionLimits
        let connections = PeerConnections(limit: limits.maximumPerPeer)
        // Frames up to the largest message a page may send (the library's default is 16 KiB); idle
        // keep-alive connections closed after limits.idleTimeout.
        let serverConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: limits.idleTimeout), ws: WebSocketServerConfiguration(maxFrameSize: ViewRelay.maximumMessageBytes))
        return Application(
            router: router, server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: serverConfiguration),
            configuration: ApplicationConfiguration(address: address, serverName: "listweb"),
            onServerRunning: { channel in
                // First on the listening socket: per-peer limits, the head deadline, pauses when accept fails.
                try? await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(ConnectionGuard(connections: connections, limits: limits, logger: logger), position: .first)
                }.get()
                let port = channel.localAddress?.port ?? 0
                proof.listening(on: port)
                await onListening(port)
            }, logger: logger)
    }

    /// The answer to a page when `limit` pages are open: 503, in words.
    static func fullPage(_ limit: Int) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.retryAfter] = "5"
        let body = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>listweb is full</title></head><body>
            <h1>listweb is full</h1><p>listweb shows at most \(limit) pages at once (its --max-pages), and that many are open. \
            Close a page of listweb's and reload this one.</p></body></html>

            """
        return Response(status: .serviceUnavailable, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func asset(_ name: String) throws -> Response {
        guard let asset = WebAssets.named(name) else { throw HTTPError(.notFound) }
        var headers = HTTPFields()
        headers[.contentType] = asset.contentType
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    static func json(_ value: JSONValue) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.jsonBytes)))
    }

    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func randomHex(_ bytes: Int) -> String {
        (0..<bytes).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    }
}
