import FileSafety
import Foundation
import HTTPTypes
import Hummingbird

/// The secret every request to listweb carries: printed at start (or read from a file only its user may
/// read), accepted as `Authorization: Bearer TOKEN`, as `?token=TOKEN` on a first request (which then
/// sets a cookie), and as that cookie.
public struct AccessToken: Sendable, Equatable {
    public let value: String

    /// The cookie that carries the token after a first request with `?token=`.
    static let cookieName = "listweb_token"

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
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65_536 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
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
        case header, cookie, query, none
    }

    /// Where the request carries a valid token (the header, the cookie, the query), or `.none`.
    func presented(by request: Request) -> Presented {
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer "),
            matches(authorization.dropFirst("Bearer ".count))
        {
            return .header
        }
        for cookies in request.headers[values: .cookie] {
            for pair in cookies.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                if trimmed.hasPrefix(Self.cookieName + "="), matches(trimmed.dropFirst(Self.cookieName.count + 1)) { return .cookie }
            }
        }
        if let query = request.uri.queryParameters["token"], matches(query) { return .query }
        return .none
    }

    /// The cookie set after a first request with `?token=`: the browser sends it back to this origin
    /// only, never to scripts.
    var setCookie: String { "\(Self.cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict" }
}

/// A token file that cannot be used.
public struct TokenFileError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Refuses every request without the token (401), so nothing listweb serves or relays is reachable
/// without it. A page opened with `?token=` gets the cookie and is sent to its address without it.
struct TokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: AccessToken

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch token.presented(by: request) {
        case .header, .cookie:
            return try await next(request, context)
        case .query:
            // The token leaves the address bar (and the history): the cookie carries it from now on.
            var headers = HTTPFields()
            headers[.setCookie] = token.setCookie
            let isPage = request.method == .get && request.headers[.upgrade] == nil
            if isPage {
                // The same address without its token pair (the other pairs as they came), on this host: the
                // path starts with exactly one slash (never "//host", another site).
                let pairs = (request.uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") && $0 != "token" }
                let path = "/" + request.uri.path.drop { $0 == "/" }
                headers[.location] = path + (pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&"))
                headers[.cacheControl] = "no-store"
                return Response(status: .seeOther, headers: headers)
            }
            var response = try await next(request, context)
            response.headers[.setCookie] = token.setCookie
            return response
        case .none:
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; charset=utf-8"
            headers[.wwwAuthenticate] = "Bearer realm=\"listweb\""
            return Response(
                status: .unauthorized, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: "listweb: a token is required (the URL listweb printed at start has it, or Authorization: Bearer TOKEN).\n")))
        }
    }
}
