import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

@Suite struct JWTCommandTests {
    @Test func signThenVerifyAndExitCodes() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init"])
        let did = try cli.run(["id", "--json"]).json["did"]!.stringValue!
        let now = Int(Date().timeIntervalSince1970)
        let token = try cli.run(["jwt", "sign", "--typ", "vc+jwt"], stdin: "{\"iss\":\"\(did)\",\"exp\":\(now + 600)}").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let jws = try CompactJWS(parsing: token)
        #expect(jws.header["alg"] == "ES256")
        #expect(jws.header["typ"] == "vc+jwt")
        #expect(jws.header["kid"]?.stringValue == did + "#" + did.dropFirst("did:key:".count))

        let ok = try cli.run(["jwt", "verify", token])
        #expect(ok.code == 0, "\(ok.stderr)")
        #expect(ok.json["claims"]?["iss"]?.stringValue == did)
        #expect(ok.json["header"]?["alg"] == "ES256")

        // Expired (as of a later time): 1.
        let expired = try cli.run(["jwt", "verify", token, "--at", String(now + 3600)])
        #expect(expired.code == 1)
        #expect(expired.stderr.contains("expired"))
        // A changed payload: 1.
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64.urlEncode(Array("{\"iss\":\"\(did)\",\"admin\":true}".utf8))
        #expect(try cli.run(["jwt", "verify", parts.joined(separator: ".")]).code == 1)
        // Malformed: 2.
        for bad in ["not-a-token", "a.b", token + "x!"] {
            #expect(try cli.run(["jwt", "verify", bad]).code == 2, "\(bad)")
        }
        // Via stdin.
        #expect(try cli.run(["jwt", "verify", "-"], stdin: token + "\n").code == 0)
    }

    @Test func claimsMustBeAJSONObject() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init"])
        #expect(try cli.run(["jwt", "sign"], stdin: "[1,2]").code == 2)
        #expect(try cli.run(["jwt", "sign"], stdin: "{\"a\":").code == 2)
        #expect(try cli.run(["jwt", "sign"], stdin: "{\"a\":1,\"a\":2}").code == 2)
    }

    /// The RFC 7515 A.3 token verifies with --jwk (as of its own time), and is expired now.
    @Test func verifiesWithAJWKFile() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let v = (try JSONParser.parse(String(contentsOf: CLI.packageRoot.appendingPathComponent("Tests/Vectors/jws/rfc-vectors.json"), encoding: .utf8)))[
            "rfc7515_A3_ES256"]!
        var jwk = v["jwk"]!.objectValue!
        jwk["d"] = nil
        let path = try cli.write(JSONValue.object(jwk).compactText, to: "key.jwk")
        let token = v["compact"]!.stringValue!
        #expect(try cli.run(["jwt", "verify", token, "--jwk", path, "--at", "1300819000"]).code == 0)
        #expect(try cli.run(["jwt", "verify", token, "--jwk", path]).code == 1)
        let junk = try cli.write("{\"kty\":\"RSA\"}", to: "junk.jwk")
        #expect(try cli.run(["jwt", "verify", token, "--jwk", junk]).code == 2)
    }

    /// Tokens from joserfc verify in Nearcard, and Nearcard's verify in joserfc.
    @Test func interoperatesWithJoserfc() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init"])
        let peer = CLI.packageRoot.appendingPathComponent("Tests/Interop/jose_peer.py").path

        for alg in ["ES256", "EdDSA"] {
            // Key from the kid's did:key.
            let theirs = try CLI.run(executable: CLI.python, [peer, "sign", alg, "--kid-did", "{\"sub\":\"interop\"}"]).json
            let token = theirs["token"]!.stringValue!
            let viaKid = try cli.run(["jwt", "verify", token])
            #expect(viaKid.code == 0, "\(alg): \(viaKid.stderr)")
            #expect(viaKid.json["claims"]?["sub"] == "interop")
            // Key from a JWK file, no kid.
            let plain = try CLI.run(executable: CLI.python, [peer, "sign", alg, "{\"sub\":\"jwk\"}"]).json
            let jwkPath = try cli.write(plain["jwk"]!.compactText, to: "\(alg).jwk")
            #expect(try cli.run(["jwt", "verify", plain["token"]!.stringValue!, "--jwk", jwkPath]).code == 0)
            // The other key: refused.
            #expect(try cli.run(["jwt", "verify", token, "--jwk", jwkPath]).code == 1)
        }

        let token = try cli.run(["jwt", "sign"], stdin: "{\"hello\":\"joserfc\"}").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let jwk = try cli.run(["id", "--json"]).json["publicKeyJwk"]!.compactText
        let checked = try CLI.run(executable: CLI.python, [peer, "verify", token, jwk])
        #expect(checked.code == 0, "\(checked.stderr)")
        #expect(checked.stdout.contains("joserfc"))
        // joserfc refuses our token under another key.
        let other = try CLI.run(executable: CLI.python, [peer, "sign", "ES256", "{}"]).json["jwk"]!.compactText
        #expect(try CLI.run(executable: CLI.python, [peer, "verify", token, other]).code == 1)
    }
}
