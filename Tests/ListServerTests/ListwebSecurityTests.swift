import Foundation
import TestSupport
import Testing

/// Issue 46 point 9 in Chromium and with real processes (Tests/Browser/listweb_security_test.py, with
/// listweb_test.py's helpers): the token stays on listweb's port (a second HTTP server on another
/// 127.0.0.1 port gets neither a cookie nor a Referer with it), images only from --image-origins, a page
/// with --allow-actions cannot change a shared outline, --max-pages answers 503 while /metrics and listctl
/// work, a 1400 × 900 grid page and a 600 KB message pass, a right-to-left override is shown escaped, and
/// 400 idle connections (descriptors short) keep neither / nor /healthz from the token holder, and a
/// program holding listweb's port while it is down never gets the page's token (it cannot prove it knows it).
@Suite("listweb: its token, limits and page rights", .serialized)
struct ListwebSecurityTests {
    @Test func listwebKeepsItsTokenAndItsLimits() throws {
        let run = try BrowserTests.runScript("listweb_security_test.py")
        #expect(run.status == 0 && run.output.contains("8 passed, 0 failed"), "\(run.output)")
    }

    /// The unit bounds listweb's descriptors (LimitNOFILE) above what its defaults need: two per page
    /// (--max-pages 192) and the connections of one address (--max-connections-per-peer 256).
    @Test func theUnitSetsLimitNOFILE() throws {
        let unit = try String(contentsOf: UnitFileTests.systemdDirectory.appendingPathComponent("listweb.service"), encoding: .utf8)
        let value = unit.split(separator: "\n").first { $0.hasPrefix("LimitNOFILE=") }.flatMap { Int($0.dropFirst("LimitNOFILE=".count)) }
        #expect((value ?? 0) >= 2 * 192 + 256 + 64, "LimitNOFILE=\(value.map(String.init) ?? "missing")")
    }
}
