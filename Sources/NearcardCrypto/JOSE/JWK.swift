/// A public JSON Web Key (RFC 7517/7518/8037): EC (P-256/384/521) or OKP (Ed25519, X25519).
/// Private members (`d`) are never emitted; when parsing, a `d` is ignored for verification.
public struct JWK: Sendable, Equatable {
    public let key: DIDKey

    public init(_ key: DIDKey) { self.key = key }

    public var json: JSONValue {
        var o = JSONObject()
        switch key.keyType {
        case .p256, .p384, .p521:
            let ec = key.ecPublicKey()!
            o["kty"] = "EC"
            o["crv"] = .string(ec.curve.rawValue)
            o["x"] = .string(Base64.urlEncode(ec.x))
            o["y"] = .string(Base64.urlEncode(ec.y))
        case .ed25519, .x25519:
            o["kty"] = "OKP"
            o["crv"] = .string(key.keyType.rawValue)
            o["x"] = .string(Base64.urlEncode(key.publicKeyBytes))
        }
        return .object(o)
    }

    /// Parses a JWK object; refuses unknown key types and malformed coordinates.
    public init(json: JSONValue) throws(CryptoError) {
        guard let o = json.objectValue else { throw CryptoError(.invalidKey, Phrase("a JWK must be a JSON object")) }
        guard let kty = o["kty"]?.stringValue else { throw CryptoError(.invalidKey, Phrase("the JWK has no \"%1$@\"", "kty")) }
        guard let crv = o["crv"]?.stringValue else { throw CryptoError(.invalidKey, Phrase("the JWK has no \"%1$@\"", "crv")) }
        func coordinate(_ name: String) throws(CryptoError) -> [UInt8] {
            guard let s = o[name]?.stringValue else { throw CryptoError(.invalidKey, Phrase("the JWK has no \"%1$@\"", name)) }
            do { return try Base64.urlDecode(s) } catch { throw CryptoError(.invalidKey, Phrase("the JWK's \"%1$@\" is not base64url", name)) }
        }
        switch (kty, crv) {
        case ("EC", "P-256"), ("EC", "P-384"), ("EC", "P-521"):
            let curve = ECCurve(rawValue: crv)!
            let ec = try ECPublicKey(curve: curve, x: try coordinate("x"), y: try coordinate("y"))
            key = DIDKey(ec)
        case ("OKP", "Ed25519"):
            key = DIDKey(try Ed25519.PublicKey(rawRepresentation: try coordinate("x")))
        case ("OKP", "X25519"):
            key = DIDKey(try X25519.PublicKey(rawRepresentation: try coordinate("x")))
        default:
            throw CryptoError(.invalidKey, Phrase("JWK key type %1$@/%2$@ is not supported (EC P-256/P-384/P-521, OKP Ed25519/X25519)", kty, crv))
        }
    }

    /// The private key of a P-256 JWK with `d` (used by tests and key import only).
    public static func p256PrivateKey(json: JSONValue) throws(CryptoError) -> P256.PrivateKey {
        guard let d = json["d"]?.stringValue else { throw CryptoError(.invalidKey, Phrase("the JWK has no private \"%1$@\"", "d")) }
        var raw: [UInt8]
        do { raw = try Base64.urlDecode(d) } catch { throw CryptoError(.invalidKey, Phrase("the JWK's \"%1$@\" is not base64url", "d")) }
        defer { raw.wipe() }
        let key = try P256.PrivateKey(rawRepresentation: SecureBytes(raw))
        guard DIDKey(key.publicKey) == (try JWK(json: json)).key else {
            throw CryptoError(.invalidKey, Phrase("the JWK's \"%1$@\" does not match its public coordinates", "d"))
        }
        return key
    }
}
