import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `scripts/demo` in the foreground, as a person runs it: the first line on the terminal is listweb's
/// address with its token (once listweb listens), the page answers there, and the same token comes back
/// after the demo restarts (listweb keeps it in the demo's state directory).
@Suite("scripts/demo opens in the browser", .serialized)
struct DemoTests {
    static let script = protocolDirectory.deletingLastPathComponent().appendingPathComponent("scripts/demo").path

    /// The demo in the foreground, its standard output and error together (the terminal), on its own
    /// socket, with its state under `directory`, listweb preferring `port`.
    func demo(directory: String, port: Int) throws -> BackgroundProcess {
        try BackgroundProcess(
            ["bash", Self.script, "--ephemeral"],
            environment: [
                "LISTD_DEMO_BIN": binaryDirectory.path, "LISTD_SOCKET": directory + "/listd.sock", "XDG_STATE_HOME": directory + "/state",
                "LISTD_DEMO_WEB_PORT": "\(port)",
            ], mergingErrors: true)
    }

    @Test func theBannerStartsWithListwebsAddressAndATabSurvivesARestart() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The port listweb prefers is taken (never rely on 8111 being free here): it takes another.
        let held = try HeldPort()
        let first = try demo(directory: directory, port: held.port)
        let line = try #require(try first.firstLine(), "the demo printed nothing:\n\(first.output)")
        #expect(line.hasPrefix("Open in a browser: http://127.0.0.1:"), "the first line:\n\(first.output)")
        let served = try #require(ServedAddress(line), "\(line)")
        #expect(served.port != held.port && served.notes == "(port \(held.port) was taken)", "\(line)")
        // The page, and the data behind it with the address's token.
        let page = try httpGet(port: served.port, "/")
        #expect(page.status == 200 && page.body.contains("<html"), "\(page.status)")
        let sources = try httpGet(port: served.port, "/api/sources", token: served.token)
        #expect(sources.status == 200 && sources.body.contains("\"home\""), "\(sources)")
        // The rest of the banner comes after it; the token is in the demo's state directory.
        let tokenFile = directory + "/state/listd-demo/listweb/token"
        #expect(try eventually { first.output.contains("Stop it with Ctrl-C.") }, "\(first.output)")
        #expect(first.output.contains("listd is running with the demo data sources on\n    \(directory)/listd.sock"), "\(first.output)")
        #expect(first.output.contains("listweb keeps its token in \(tokenFile)"), "\(first.output)")
        #expect(try String(contentsOfFile: tokenFile, encoding: .utf8) == served.token + "\n")
        // Ctrl-C's way out (the script's trap): listd, listweb and the data owner stop.
        #expect(first.stop(signal: SIGINT) != nil)
        #expect(try eventually { !FileManager.default.fileExists(atPath: directory + "/listd.sock") }, "listd stopped")
        #expect(try eventually { (try? httpGet(port: served.port, "/")) == nil }, "listweb stopped")

        // Started again: the same token, so the tab left open works.
        let second = try demo(directory: directory, port: held.port)
        let secondLine = try #require(try second.firstLine(), "\(second.output)")
        let again = try #require(ServedAddress(secondLine), "\(second.output)")
        #expect(again.token == served.token)
        #expect(try httpGet(port: again.port, "/api/sources", token: served.token).status == 200)
        #expect(second.stop(signal: SIGTERM) != nil)
    }
}
