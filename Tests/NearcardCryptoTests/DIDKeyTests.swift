import Foundation
import NearcardCrypto
import Testing

/// did:key vectors (w3c-ccg/did-method-key): every DID parses, re-encodes to itself, and its
/// document carries the vector's keys and method ids.
@Suite struct DIDKeyTests {
    /// Key bytes from a vector's key pair, written either as `<prefix>Base58` or `<prefix>Jwk`.
    func material(_ pair: [String: Any], _ prefix: String, jwkMember: String) throws -> [UInt8] {
        if let b58 = pair[prefix + "Base58"] as? String { return try Base58.decode(b58) }
        let jwk = pair[prefix + "Jwk"] as! [String: Any]
        return try Base64.urlDecode(jwk[jwkMember] as! String)
    }

    func jwk(_ object: Any) throws -> JSONValue {
        try JSONParser.parse(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }

    @Test func nistCurveVectorsRoundTrip() throws {
        let vectors = try Vectors.json("didkey/nist-curves.json") as! [String: [String: Any]]
        #expect(vectors.count == 7)
        for (did, entry) in vectors {
            let key = try DIDKey(parsing: did)
            #expect(key.did == did)
            let vm = entry["verificationMethod"] as! [String: Any]
            let expectedDoc = entry["didDocument"] as! [String: Any]
            if let jwk = vm["publicKeyJwk"] as? [String: Any] {
                // The JsonWebKey2020 document must equal the vector's, member for member.
                let ours = try JSONSerialization.jsonObject(with: Data(key.document(format: .jsonWebKey2020).compactText.utf8)) as! NSDictionary
                #expect(ours == expectedDoc as NSDictionary, "document for \(did)")
                let parsedJWK = try JWK(json: JSONParser.parse(String(decoding: try JSONSerialization.data(withJSONObject: jwk), as: UTF8.self)))
                #expect(parsedJWK.key == key)
                if let priv = vm["privateKeyJwk"] as? [String: Any], (priv["crv"] as? String) == "P-256" {
                    let privateKey = try JWK.p256PrivateKey(
                        json: JSONParser.parse(String(decoding: try JSONSerialization.data(withJSONObject: priv), as: UTF8.self)))
                    #expect(DIDKey(privateKey.publicKey).did == did)
                }
            } else {
                // The legacy P256Key2021 form carries the compressed point in base58.
                #expect(try Base58.decode(vm["publicKeyBase58"] as! String) == key.publicKeyBytes)
                let ids = (expectedDoc["verificationMethod"] as! [[String: Any]]).map { $0["id"] as! String }
                #expect(ids == [key.keyID])
            }
        }
    }

    @Test func ed25519VectorsDeriveX25519() throws {
        let vectors = try Vectors.json("didkey/ed25519-x25519.json") as! [String: [String: Any]]
        #expect(vectors.count == 5)
        for (did, entry) in vectors {
            let key = try DIDKey(parsing: did)
            #expect(key.did == did)
            let signing = entry["verificationKeyPair"] as! [String: Any]
            #expect(try material(signing, "publicKey", jwkMember: "x") == key.publicKeyBytes)
            // From the seed: the same Ed25519 key, and the vector's derived X25519 key pair.
            let seed = hex(entry["seed"])
            let priv = try Ed25519.PrivateKey(seed: SecureBytes(seed))
            #expect(DIDKey(priv.publicKey).did == did)
            let agreement = entry["keyAgreementKeyPair"] as! [String: Any]
            let derivedPrivate = try priv.x25519()
            #expect(derivedPrivate.secret.bytes == (try material(agreement, "privateKey", jwkMember: "d")))
            let derived = try key.ed25519PublicKey()!.x25519()
            #expect(derived.rawRepresentation == (try material(agreement, "publicKey", jwkMember: "x")))
            #expect(derivedPrivate.publicKey == derived)
            // The document's method ids and relationships match the vector's.
            let doc = key.document()
            let expected = entry["didDocument"] as! [String: Any]
            let ourIDs = doc["verificationMethod"]!.arrayValue!.map { $0["id"]!.stringValue! }
            #expect(ourIDs == (expected["verificationMethod"] as! [[String: Any]]).map { $0["id"] as! String })
            #expect(doc["keyAgreement"]!.arrayValue!.map { $0.stringValue! } == expected["keyAgreement"] as! [String])
            #expect(doc["authentication"]!.arrayValue!.map { $0.stringValue! } == expected["authentication"] as! [String])
        }
    }

    @Test func x25519Vectors() throws {
        let vectors = (try Vectors.json("didkey/x25519.json") as! [String: Any])["didDocument"] as! [String: [String: Any]]
        #expect(vectors.count == 4)
        for (did, expected) in vectors {
            let key = try DIDKey(parsing: did)
            #expect(key.did == did)
            #expect(key.keyType == .x25519)
            let vm = (expected["verificationMethod"] as! [[String: Any]])[0]
            if let b58 = vm["publicKeyBase58"] as? String {
                #expect(try Base58.decode(b58) == key.publicKeyBytes)
            } else {
                #expect(try JWK(json: jwk(vm["publicKeyJwk"]!)).key == key)
            }
            let doc = key.document()
            #expect(doc["keyAgreement"]!.arrayValue!.map { $0.stringValue! } == expected["keyAgreement"] as! [String])
            #expect(doc["authentication"] == nil, "an X25519 key is for key agreement only")
        }
    }

    @Test func multikeyDocumentShape() throws {
        let key = try DIDKey(parsing: "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169")
        let doc = key.document(format: .multikey)
        #expect(doc["@context"] == ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"])
        let vm = doc["verificationMethod"]!.arrayValue![0]
        #expect(vm["type"] == "Multikey")
        #expect(vm["publicKeyMultibase"]?.stringValue == key.multibaseValue)
        #expect(vm["controller"]?.stringValue == key.did)
    }

    /// Each kind of bad did:key names the specification's error.
    @Test(arguments: [
        ("did:web:example.com", DIDKeyErrorCode.invalidDid),
        ("did:key", .invalidDid),
        ("did:key:", .invalidDid),
        ("did:key:abc", .invalidDid),
        ("did:key:z0OIl", .invalidDid),
        ("did:key:2:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169", .invalidDid),
        ("did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169#frag", .invalidDid),
        // secp256k1 (0xe7): a real did:key, but not a type Nearcard resolves.
        ("did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme", .unsupportedPublicKeyType),
        // Ed25519 prefix with 31 key bytes.
        ("did:key:" + Multibase.encodeBase58btc([0xED, 0x01] + [UInt8](repeating: 7, count: 31)), .invalidPublicKeyLength),
        // P-256 prefix with a compressed "point" whose x is not on the curve.
        ("did:key:" + Multibase.encodeBase58btc([0x80, 0x24, 0x02] + [UInt8](repeating: 0xFF, count: 32)), .invalidPublicKey),
    ])
    func malformedDIDsNameTheSpecError(did: String, code: DIDKeyErrorCode) {
        #expect {
            try DIDKey(parsing: did)
        } throws: { error in
            guard let e = error as? CryptoError else { return false }
            return e.kind == .didKey(code) && e.message.hasPrefix(code.rawValue)
        }
    }

    /// Parsed DIDs are remembered by their exact text (a session reads its peer's DID three times):
    /// a remembered DID still verifies its own signatures and no other's, a refused one is refused
    /// again, and more DIDs than the cache holds all still parse to their own keys.
    @Test func rememberedDIDsStayTheirOwnKeys() throws {
        let message = Array("nearcard".utf8)
        let keys = (0..<(DIDKey.parsedCacheLimit + 20)).map { _ in P256.PrivateKey() }
        for _ in 0..<2 {
            for (i, key) in keys.enumerated() {
                let parsed = try DIDKey(parsing: DIDKey(key.publicKey).did)
                #expect(parsed.ecPublicKey() == key.publicKey)
                let other = keys[(i + 1) % keys.count]
                #expect(parsed.ecPublicKey()?.isValidRawSignature(try other.signature(for: message), for: message) == false)
                #expect(parsed.ecPublicKey()?.isValidRawSignature(try key.signature(for: message), for: message) == true)
            }
        }
        let offCurve = "did:key:" + Multibase.encodeBase58btc([0x80, 0x24, 0x02] + [UInt8](repeating: 0xFF, count: 32))
        for _ in 0..<2 { #expect(throws: CryptoError.self) { try DIDKey(parsing: offCurve) } }
    }

    @Test func didURLFragments() throws {
        let did = "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169"
        let (key, fragment) = try DIDKey.parse(didURL: did + "#keys-1")
        #expect(key.did == did)
        #expect(fragment == "keys-1")
        #expect(throws: CryptoError.self) { try DIDKey.parse(didURL: did + "#") }
    }
}
