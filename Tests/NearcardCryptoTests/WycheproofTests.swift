import NearcardCrypto
import Testing

/// Every Wycheproof case gives the vector's result ("acceptable" cases: either outcome, but a
/// success must produce the vector's value).
@Suite struct WycheproofTests {
    @Test func ecdsaP256P1363() throws {
        let cases = try Vectors.wycheproof("ecdsa_secp256r1_sha256_p1363_test")
        #expect(cases.count == 262)
        var failures: [String] = []
        for (group, test) in cases {
            let key = try ECPublicKey(curve: .p256, sec1: hex((group["publicKey"] as! [String: Any])["uncompressed"]))
            let valid = key.isValidRawSignature(hex(test["sig"]), for: hex(test["msg"]))
            if valid != (test["result"] as! String == "valid") { failures.append("tcId \(test["tcId"]!): got \(valid)") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func ecdsaP256DER() throws {
        let cases = try Vectors.wycheproof("ecdsa_secp256r1_sha256_test")
        #expect(cases.count == 484)
        var failures: [String] = []
        for (group, test) in cases {
            let key = try ECPublicKey(curve: .p256, sec1: hex((group["publicKey"] as! [String: Any])["uncompressed"]))
            let valid = key.isValidDERSignature(hex(test["sig"]), for: hex(test["msg"]))
            if valid != (test["result"] as! String == "valid") { failures.append("tcId \(test["tcId"]!): got \(valid)") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func x25519() throws {
        let cases = try Vectors.wycheproof("x25519_test")
        #expect(cases.count == 518)
        var failures: [String] = []
        for (_, test) in cases {
            let result = test["result"] as! String
            let priv = try X25519.PrivateKey(secret: SecureBytes(hex(test["private"])))
            let shared = hex(test["shared"])
            do {
                let computed = try priv.sharedSecret(with: X25519.PublicKey(rawRepresentation: hex(test["public"])))
                if computed.bytes != shared { failures.append("tcId \(test["tcId"]!): wrong shared secret") }
                if result == "invalid" { failures.append("tcId \(test["tcId"]!): accepted an invalid case") }
            } catch {
                // Refusing is right only for the all-zero result (low-order public keys).
                if result == "valid" || shared != [UInt8](repeating: 0, count: 32) {
                    failures.append("tcId \(test["tcId"]!): refused (\(error))")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func ed25519() throws {
        let cases = try Vectors.wycheproof("ed25519_test")
        #expect(cases.count == 151)
        var failures: [String] = []
        for (group, test) in cases {
            let key = try Ed25519.PublicKey(rawRepresentation: hex((group["publicKey"] as! [String: Any])["pk"]))
            let valid = key.isValidSignature(hex(test["sig"]), for: hex(test["msg"]))
            if valid != (test["result"] as! String == "valid") { failures.append("tcId \(test["tcId"]!): got \(valid)") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func chacha20Poly1305() throws {
        let cases = try Vectors.wycheproof("chacha20_poly1305_test")
        #expect(cases.count == 325)
        var failures: [String] = []
        for (_, test) in cases {
            let id = test["tcId"]!
            let valid = test["result"] as! String == "valid"
            let key = SecureBytes(hex(test["key"]))
            let nonce = hex(test["iv"])
            let aad = hex(test["aad"])
            let msg = hex(test["msg"])
            let sealed = hex(test["ct"]) + hex(test["tag"])
            let opened = try? ChaChaPoly.open(sealed, key: key, nonce: nonce, authenticating: aad)
            if valid {
                if opened != msg { failures.append("tcId \(id): did not open to the message") }
                if (try? ChaChaPoly.seal(msg, key: key, nonce: nonce, authenticating: aad)) != sealed { failures.append("tcId \(id): seal differs") }
            } else if opened != nil {
                failures.append("tcId \(id): opened an invalid case")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func hkdfSHA256() throws {
        let cases = try Vectors.wycheproof("hkdf_sha256_test")
        #expect(cases.count == 86)
        var failures: [String] = []
        for (_, test) in cases {
            let valid = test["result"] as! String == "valid"
            let okm = try? HKDFSHA256.deriveKey(
                inputKeyMaterial: hex(test["ikm"]), salt: hex(test["salt"]), info: hex(test["info"]),
                outputLength: test["size"] as! Int)
            if valid ? okm != hex(test["okm"]) : okm != nil { failures.append("tcId \(test["tcId"]!)") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func hmacSHA256() throws {
        let cases = try Vectors.wycheproof("hmac_sha256_test")
        #expect(cases.count == 174)
        var failures: [String] = []
        for (_, test) in cases {
            let valid = test["result"] as! String == "valid"
            let key = hex(test["key"])
            let msg = hex(test["msg"])
            let tag = hex(test["tag"])
            if HMACSHA256.isValid(tag: tag, key: key, message: msg) != valid { failures.append("tcId \(test["tcId"]!)") }
            if valid, Array(HMACSHA256.authenticate(key: key, message: msg).prefix(tag.count)) != tag { failures.append("tcId \(test["tcId"]!): tag differs") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
