import Foundation
import NearcardCrypto
import Testing

@Suite struct JWSTests {
    func vector(_ name: String) throws -> [String: Any] {
        (try Vectors.json("jws/rfc-vectors.json") as! [String: Any])[name] as! [String: Any]
    }

    func jwk(_ object: Any) throws -> JSONValue {
        try JSONParser.parse(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }

    /// RFC 7515 A.3: the ES256 example verifies with its key (and its expired `exp` is reported as such).
    @Test func rfc7515ES256Verifies() throws {
        let v = try vector("rfc7515_A3_ES256")
        let key = try JWK(json: jwk(v["jwk"]!)).key
        let token = v["compact"] as! String
        #expect(try CompactJWS(parsing: token).verifySignature(with: key) == .valid)
        let atIssue = try JWTVerifier(now: 1_300_819_000).verify(token, key: key)
        guard case .valid(_, let claims, _) = atIssue else {
            Issue.record("expected valid, got \(atIssue)")
            return
        }
        #expect(claims["iss"] == "joe")
        #expect(try JWTVerifier(now: 1_700_000_000).verify(token, key: key) == .invalid(.expired(exp: 1_300_819_380, now: 1_700_000_000)))
        // Flip one bit of the signature: refused.
        var parts = token.split(separator: ".").map(String.init)
        var sig = try Base64.urlDecode(parts[2])
        sig[10] ^= 1
        parts[2] = Base64.urlEncode(sig)
        #expect(try CompactJWS(parsing: parts.joined(separator: ".")).verifySignature(with: key) == .badSignature)
    }

    /// RFC 8037 A.4: Ed25519 is deterministic, so signing reproduces the compact form exactly.
    @Test func rfc8037EdDSAReproduced() throws {
        let v = try vector("rfc8037_A4_EdDSA")
        let j = v["jwk"] as! [String: String]
        let priv = try Ed25519.PrivateKey(seed: SecureBytes(try Base64.urlDecode(j["d"]!)))
        #expect(Base64.urlEncode(priv.publicKey.rawRepresentation) == j["x"])
        // The RFC's header is exactly {"alg":"EdDSA"}.
        let token = try CompactJWS.sign(payload: Array((v["payload_utf8"] as! String).utf8), header: [:], signer: priv)
        #expect(token == v["compact"] as! String)
        #expect(try CompactJWS(parsing: token).verifySignature(with: DIDKey(priv.publicKey)) == .valid)
    }

    /// RFC 9901: the disclosure's digest is SHA-256 over its base64url text.
    @Test func rfc9901DisclosureDigest() throws {
        let v = try vector("sd_jwt_rfc9901_disclosure")
        let b64 = v["disclosure_b64url"] as! String
        #expect(Base64.urlEncode(SHA256.hash(Array(b64.utf8))) == v["digest_sha256_b64url"] as! String)
        let decoded = try JSONParser.parse(try Base64.urlDecode(b64))
        #expect(decoded == .array((v["disclosure_array"] as! [String]).map { .string($0) }))
    }

    @Test func es256SignVerifyAndFailures() throws {
        let keys = IdentityKeys.generate()
        let did = DIDKey(keys.p256.publicKey)
        let claims: JSONValue = ["iss": .string(did.did), "sub": "x", "iat": 1000, "exp": 2000, "nbf": 1000]
        let token = try CompactJWS.sign(payload: JCS.canonicalize(claims), header: ["typ": "JWT", "kid": .string(keys.keyID)], signer: keys.p256)
        let verifier = JWTVerifier(now: 1500, leeway: 0)
        guard case .valid(let header, _, let key) = try verifier.verify(token) else {
            Issue.record("should verify")
            return
        }
        #expect(header["alg"] == "ES256")
        #expect(key == did)
        #expect(try JWTVerifier(now: 2000, leeway: 0).verify(token) == .invalid(.expired(exp: 2000, now: 2000)))
        #expect(try JWTVerifier(now: 999, leeway: 0).verify(token) == .invalid(.notYetValid(nbf: 1000, now: 999)))
        // The leeway forgives a clock that runs up to `leeway` seconds off, on both ends, and no more.
        guard case .valid = try JWTVerifier(now: 2030, leeway: 60).verify(token) else {
            Issue.record("30 s past exp within a 60 s leeway")
            return
        }
        guard case .valid = try JWTVerifier(now: 970, leeway: 60).verify(token) else {
            Issue.record("30 s before nbf within a 60 s leeway")
            return
        }
        #expect(try JWTVerifier(now: 2060, leeway: 60).verify(token) == .invalid(.expired(exp: 2000, now: 2060)))
        // Another key named explicitly: bad signature.
        let other = DIDKey(P256.PrivateKey().publicKey)
        #expect(try verifier.verify(token, key: other) == .invalid(.badSignature(keyID: other.did)))
        // An Ed25519 key for an ES256 token: refused, not verified.
        let ed = DIDKey(Ed25519.PrivateKey().publicKey)
        #expect(try verifier.verify(token, key: ed) == .invalid(.keyTypeMismatch(alg: "ES256", keyType: "Ed25519")))
    }

    @Test func refusesAlgNoneAndCrit() throws {
        let keys = IdentityKeys.generate()
        let did = DIDKey(keys.p256.publicKey)
        let payload = Base64.urlEncode(Array("{\"iss\":\"\(did.did)\"}".utf8))
        let none = Base64.urlEncode(Array("{\"alg\":\"none\"}".utf8)) + "." + payload + "."
        #expect(try JWTVerifier(now: 0).verify(none) == .invalid(.unsupportedAlgorithm("none")))
        let critToken = try CompactJWS.sign(payload: Array("{\"iss\":\"\(did.did)\"}".utf8), header: ["crit": ["exp"], "exp": 1], signer: keys.p256)
        guard case .invalid(.unsupportedCritical) = try JWTVerifier(now: 0).verify(critToken) else {
            Issue.record("crit must be refused")
            return
        }
    }

    @Test func kidAndIssMustAgree() throws {
        let a = IdentityKeys.generate()
        let b = IdentityKeys.generate()
        let token = try CompactJWS.sign(
            payload: Array("{\"iss\":\"\(a.publicIdentity(name: nil).did)\"}".utf8),
            header: ["kid": .string(b.keyID)], signer: b.p256)
        guard case .invalid(.issuerMismatch) = try JWTVerifier(now: 0).verify(token) else {
            Issue.record("kid/iss mismatch must fail")
            return
        }
        // The iOS app's "#keys-1" fragment is accepted.
        let ios = try CompactJWS.sign(payload: Array("{}".utf8), header: ["kid": .string(a.publicIdentity(name: nil).did + "#keys-1")], signer: a.p256)
        guard case .valid = try JWTVerifier(now: 0).verify(ios) else {
            Issue.record("#keys-1 should verify")
            return
        }
        // Without kid, iss or --jwk there is no key.
        let bare = try CompactJWS.sign(payload: Array("{}".utf8), header: [:], signer: a.p256)
        #expect(try JWTVerifier(now: 0).verify(bare) == .invalid(.noKey))
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "!!!.e30.", "e30.e30.", "eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.", "WzFd.e30."])
    func malformedTokensThrow(token: String) {
        #expect(throws: CryptoError.self) { try JWTVerifier(now: 0).verify(token, key: DIDKey(P256.PrivateKey().publicKey)) }
    }
}
