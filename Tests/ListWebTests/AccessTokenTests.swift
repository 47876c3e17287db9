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
    }
}
