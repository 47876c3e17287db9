@testable import ListWeb
import Testing

@Suite("listweb: the proof a page asks for before it sends the token")
struct TokenProofTests {
    /// HMAC-SHA256 keyed with the token over "listweb-proof", the port and the nonce (the value from
    /// Python's hmac module), and the port it was made for.
    @Test func theProofIsTheHMACOfThePortAndTheNonce() {
        let proof = TokenProof(token: AccessToken("0123456789abcdef0123456789abcdef"))
        proof.listening(on: 8111)
        let answer = proof.answer(String(repeating: "ab", count: 16))
        #expect(answer.port == 8111)
        #expect(answer.proof == "cced79578df29b7d221f9065743d582a4404479d151c2bc059993394e6e44429")
        // Another token, port or nonce gives another proof.
        #expect(TokenProof(token: AccessToken("another")).answer(String(repeating: "ab", count: 16)).proof != answer.proof)
        proof.listening(on: 8112)
        #expect(proof.answer(String(repeating: "ab", count: 16)).proof != answer.proof)
        #expect(proof.answer(String(repeating: "ac", count: 16)).proof != proof.answer(String(repeating: "ab", count: 16)).proof)
    }

    @Test func aNonceIs32To128LowerCaseHexadecimalDigits() {
        #expect(TokenProof.isNonce(String(repeating: "0f", count: 16)))
        #expect(TokenProof.isNonce(String(repeating: "a", count: 128)))
        #expect(!TokenProof.isNonce(String(repeating: "a", count: 31)))
        #expect(!TokenProof.isNonce(String(repeating: "a", count: 129)))
        #expect(!TokenProof.isNonce(String(repeating: "A", count: 32)))
        #expect(!TokenProof.isNonce(String(repeating: "g", count: 32)))
        #expect(!TokenProof.isNonce(""))
    }
}
