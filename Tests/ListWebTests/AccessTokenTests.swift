import Foundation
@testable import ListWeb
import Testing

@Suite("listweb: the token")
struct AccessTokenTests {
    func temporaryFile(_ contents: String, mode: mode_t) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("listweb-token-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let path = directory + "/token"
        try contents.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test func aRandomTokenIs64HexadecimalDigitsAndMatchesOnlyItself() {
        let token = AccessToken.random()
        #expect(token.value.count == 64 && token.value.allSatisfy(\.isHexDigit))
        #expect(token != AccessToken.random())
        #expect(token.matches(Substring(token.value)))
        #expect(!token.matches(Substring(token.value.dropLast() + "x")))
        #expect(!token.matches(Substring(token.value + "0")))
        #expect(!token.matches(""))
    }

    @Test func aTokenFileMustBeTheUsersAlone() throws {
        let good = try temporaryFile("s3cret-token-0123456789\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: (good as NSString).deletingLastPathComponent) }
        #expect(try AccessToken.read(from: good).value == "s3cret-token-0123456789")
        let readable = try temporaryFile("s3cret-token-0123456789\n", mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: (readable as NSString).deletingLastPathComponent) }
        #expect(throws: TokenFileError.self) { try AccessToken.read(from: readable) }
        let short = try temporaryFile("short\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: (short as NSString).deletingLastPathComponent) }
        #expect(throws: TokenFileError.self) { try AccessToken.read(from: short) }
        // A symbolic link to a good file is not followed.
        let link = (good as NSString).deletingLastPathComponent + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
        #expect(throws: (any Error).self) { try AccessToken.read(from: link) }
        // Control characters, quotes and backslashes are not token characters.
        let odd = try temporaryFile("s3cret-token-\u{7}0123456789\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: (odd as NSString).deletingLastPathComponent) }
        #expect(throws: TokenFileError.self) { try AccessToken.read(from: odd) }
    }

    /// A systemd credential is root's, readable through an ACL (its mode shows more than 0600): taken from
    /// the credentials directory as it is, never through a link.
    @Test func aSystemdCredentialIsTakenAsSystemdMadeIt() throws {
        let credential = try temporaryFile("credential-token-0123456789\n", mode: 0o640)
        let directory = (credential as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try AccessToken.read(from: credential, credentials: directory).value == "credential-token-0123456789")
        #expect(throws: TokenFileError.self) { try AccessToken.read(from: credential, credentials: nil) }
        let link = directory + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: credential)
        #expect(throws: TokenFileError.self) { try AccessToken.read(from: link, credentials: directory) }
    }
}
