import Crypto
import Foundation
import NIOConcurrencyHelpers

/// How a page learns that the server on its address is listweb before it sends the token there.
///
/// Every local user may listen on a loopback port. While listweb is down (or after it moved to another
/// port because the first was taken), another program may hold the address an open page reconnects to;
/// a page that sent its token with the reconnection would hand it over, and the token is kept across
/// restarts. So before each connection the page asks `GET /api/proof?nonce=N` (no token) with a fresh
/// random nonce, and sends the token only when the answer is HMAC-SHA256 keyed with the token over
/// `listweb-proof`, the port listweb listens on and the nonce: only a holder of the token can answer, and
/// the port in it stops another listener from passing the question on to the real listweb on another
/// port (the page checks it is its own). Behind a reverse proxy (a Unix socket) the port is 0.
public final class TokenProof: Sendable {
    private let key: SymmetricKey
    private let port = NIOLockedValueBox(0)

    public init(token: AccessToken) {
        key = SymmetricKey(data: Data(token.value.utf8))
    }

    /// The port listweb listens on, once it does (0 for a Unix socket).
    public func listening(on port: Int) {
        self.port.withLockedValue { $0 = port }
    }

    /// Whether `nonce` is one a page may ask about: 32 to 128 hexadecimal digits.
    public static func isNonce(_ nonce: String) -> Bool {
        (32...128).contains(nonce.utf8.count) && nonce.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// The answer to `nonce`: the port and the proof (hexadecimal).
    public func answer(_ nonce: String) -> (port: Int, proof: String) {
        let port = port.withLockedValue { $0 }
        let code = HMAC<SHA256>.authenticationCode(for: Data(Self.message(port: port, nonce: nonce).utf8), using: key)
        return (port, code.map { String(format: "%02x", $0) }.joined())
    }

    /// What the proof authenticates.
    static func message(port: Int, nonce: String) -> String {
        "listweb-proof\n\(port)\n\(nonce)"
    }
}
