import FileSafety
import Foundation
import HTTPTypes
import Hummingbird

/// The secret every request for data carries: printed at start in the address's fragment
/// (`http://HOST:PORT/#token=TOKEN`, which a browser never sends anywhere), or read from a file only its user
/// may read. The page keeps it (in its origin's session storage: this scheme, host and port only) and
/// sends it as `Authorization: Bearer TOKEN` with each request, and as `?token=TOKEN` in its WebSocket's
/// address (a browser cannot set a header there). No cookie carries it: a cookie reaches every port of
/// the host.
public struct AccessToken: Sendable, Equatable {
    public let value: String

    /// The cookie earlier versions set: cleared when a browser still sends it.
    static let retiredCookieName = "listweb_token"

    public init(_ value: String) { self.value = value }

    /// 32 random bytes from the system's generator, in hexadecimal.
    public static func random() -> AccessToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return AccessToken(bytes.map { String(format: "%02x", $0) }.joined())
    }

    /// Reads the token from a file: a regular file of this user, one name, not a symbolic link, that no
    /// other user may read or write; its first line, at least 16 characters.
    ///
    /// A systemd credential (a file in `$CREDENTIALS_DIRECTORY`, `credentials`) is systemd's: root's, read
    /// through an ACL, in a directory only the service can read; it is opened without following a link.
    public static func read(from path: String, credentials: String? = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]) throws -> AccessToken {
        let isCredential = credentials.map { !$0.isEmpty && path.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") } ?? false
        let descriptor: Int32
        if isCredential {
            descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw TokenFileError("cannot open the credential \(path): \(String(cString: strerror(errno)))") }
        } else {
            descriptor = try TrustedPath.openFile(path, flags: O_RDONLY)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { throw TokenFileError("cannot read \(path) (not a regular file)") }
        guard isCredential || status.st_mode & 0o077 == 0 else {
            throw TokenFileError("refusing \(path): other users may read or write it (mode \(String(status.st_mode & 0o777, radix: 8)); chmod 600 it)")
        }
        return try parse(readAll(descriptor), path: path)
    }

    /// At most 64 KiB of what `descriptor` reads.
    static func readAll(_ descriptor: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65_536 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// The token in a file's bytes: its first line, at least 16 printable ASCII characters.
    static func parse(_ bytes: [UInt8], path: String) throws -> AccessToken {
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let token = line.trimmingCharacters(in: .whitespaces)
        guard token.utf8.count >= 16, token.utf8.allSatisfy({ (0x21...0x7E).contains($0) && !";,\"\\".utf8.contains($0) }) else {
            throw TokenFileError("\(path): the token must be one line of at least 16 printable ASCII characters (no spaces, ';', ',', '\"' or '\\')")
        }
        return AccessToken(token)
    }

    /// Compares in time independent of where the strings differ.
    func matches(_ candidate: Substring) -> Bool {
        let expected = Array(value.utf8)
        let given = Array(candidate.utf8)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }

    /// How a request shows the token, if it does.
    enum Presented: Equatable {
        case header, query, none
    }

    /// Where the request carries a valid token: the header, or (a WebSocket's upgrade only) the query.
    func presented(by request: Request) -> Presented {
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer "),
            matches(authorization.dropFirst("Bearer ".count))
        {
            return .header
        }
        if request.headers[.upgrade]?.lowercased() == "websocket", let query = request.uri.queryParameters["token"], matches(query) {
            return .query
        }
        return .none
    }
}

/// A token file that cannot be used.
public struct TokenFileError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Refuses every request for data without the token (401): the pages' files (the same for everyone,
/// no data in them) are served without it, since a browser cannot send the fragment's token before the
/// page's script has read it. A cookie of earlier versions still sent is cleared.
struct TokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: AccessToken

    /// Paths served without the token: the two pages, their files, the icon, the proof (TokenProof).
    static func isPublic(_ path: String) -> Bool {
        if path == "/" || path == "/favicon.ico" || path == "/api/proof" { return true }
        if path.hasPrefix("/static/") { return true }
        // A data source's page, not its WebSocket.
        return path.hasPrefix("/sources/") && !path.dropFirst("/sources/".count).contains("/")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if Self.isPublic(request.uri.path) && request.headers[.upgrade] == nil {
            response = try await next(request, context)
        } else if token.presented(by: request) != .none {
            response = try await next(request, context)
        } else {
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; charset=utf-8"
            headers[.wwwAuthenticate] = "Bearer realm=\"listweb\""
            response = Response(
                status: .unauthorized, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: "listweb: a token is required (open the address listweb printed at start: it has the token after #token=, or send Authorization: Bearer TOKEN).\n")))
        }
        if request.headers[values: .cookie].contains(where: { $0.contains(AccessToken.retiredCookieName + "=") }) {
            response.headers[.setCookie] = "\(AccessToken.retiredCookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"
        }
        return response
    }
}
