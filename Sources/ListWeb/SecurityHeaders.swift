import Foundation
import HTTPTypes
import Hummingbird

/// An origin cells may show images from (`--image-origins`): `http(s)://host[:port]`, nothing else.
public struct ImageOrigin: Sendable, Equatable {
    public let value: String

    /// The origin, or nil when `text` is not one (a path, a wildcard, a quote or a space would widen or
    /// break the Content-Security-Policy).
    public init?(_ text: String) {
        var origin = text
        if origin.hasSuffix("/") { origin.removeLast() }
        guard let url = URL(string: origin), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil,
            origin.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && !"*;,'\"\\".unicodeScalars.contains($0) })
        else { return nil }
        value = "\(scheme)://\(host.lowercased())" + (url.port.map { ":\($0)" } ?? "")
    }
}

/// What every response says to the browser: scripts, styles, connections and frames from listweb only,
/// images from listweb, data: URLs and the origins `--image-origins` names, nothing sniffed, no
/// referrer (an address never leaves listweb in a Referer).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: String

    init(imageOrigins: [ImageOrigin]) {
        let images = (["'self'", "data:"] + imageOrigins.map(\.value)).joined(separator: " ")
        policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(images); connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = Response(status: error.status)
        }
        response.headers[.contentSecurityPolicy] = policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return response
    }
}
