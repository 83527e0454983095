/// JWT (RFC 7519) verification on top of `CompactJWS`: where the key comes from, and the time claims.
public struct JWTVerifier: Sendable {
    /// How much clock difference to tolerate on `exp`, `nbf` and `iat` (seconds).
    public var leeway: Double
    /// Unix time to verify at.
    public var now: Double

    public init(now: Double, leeway: Double = 60) {
        self.now = now
        self.leeway = leeway
    }

    /// Why a well-formed token did not verify.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case badSignature(keyID: String)
        case unsupportedAlgorithm(String)
        case unsupportedCritical(String)
        case keyTypeMismatch(alg: String, keyType: String)
        case noKey
        case unresolvableKey(String)
        case issuerMismatch(kid: String, iss: String)
        case expired(exp: Double, now: Double)
        case notYetValid(nbf: Double, now: Double)
        case issuedInFuture(iat: Double, now: Double)

        public var description: String {
            switch self {
            case .badSignature(let k): "the signature does not verify with \(k)"
            case .unsupportedAlgorithm(let a): "algorithm \"\(a)\" is not accepted (ES256 or EdDSA only)"
            case .unsupportedCritical(let c): "the header marks extensions critical that Nearcard does not implement: \(c)"
            case .keyTypeMismatch(let alg, let type): "algorithm \(alg) does not fit a \(type) key"
            case .noKey: "no key to verify with: pass --jwk FILE, or use a token whose kid or iss is a did:key"
            case .unresolvableKey(let why): "the token names a key that cannot be used: \(why)"
            case .issuerMismatch(let kid, let iss): "the kid's DID (\(kid)) is not the issuer (\(iss))"
            case .expired(let exp, let now): "the token expired at \(Int64(exp)) (now \(Int64(now)))"
            case .notYetValid(let nbf, let now): "the token is not valid before \(Int64(nbf)) (now \(Int64(now)))"
            case .issuedInFuture(let iat, let now): "the token claims to be issued at \(Int64(iat)), in the future (now \(Int64(now)))"
            }
        }
    }

    public enum Outcome: Sendable, Equatable {
        case valid(header: JSONObject, claims: JSONObject, key: DIDKey)
        case invalid(Failure)
    }

    /// Verifies `token`. Throws `.malformedToken` when the token is not a well-formed JWS with a
    /// JSON-object payload; returns `.invalid` when it is well formed but fails.
    /// The key is `key` when given, otherwise the did:key named by `kid` (fragment: the key's
    /// multibase, or `keys-1` as the iOS app writes it) or by `iss`.
    public func verify(_ token: String, key: DIDKey? = nil) throws(CryptoError) -> Outcome {
        let jws = try CompactJWS(parsing: token)
        let claimsValue: JSONValue
        do { claimsValue = try JSONParser(maximumDepth: 32).parse(jws.payload) } catch {
            throw CryptoError(.malformedToken, Phrase("the token's payload is not JSON: %1$@", error.phrase))
        }
        guard let claims = claimsValue.objectValue else { throw CryptoError(.malformedToken, Phrase("the token's claims are not a JSON object")) }
        for name in ["exp", "nbf", "iat"] {
            if let v = claims[name], v.doubleValue == nil {
                throw CryptoError(.malformedToken, Phrase("the \"%1$@\" claim is not a number", name))
            }
        }

        let verificationKey: DIDKey
        if let key {
            verificationKey = key
        } else {
            switch Self.resolveKey(header: jws.header, claims: claims) {
            case .success(let k): verificationKey = k
            case .failure(let f): return .invalid(f)
            }
        }

        switch jws.verifySignature(with: verificationKey) {
        case .valid: break
        case .badSignature: return .invalid(.badSignature(keyID: verificationKey.did))
        case .unsupportedAlgorithm(let a): return .invalid(.unsupportedAlgorithm(a))
        case .unsupportedCritical(let c): return .invalid(.unsupportedCritical(c))
        case .keyTypeMismatch(let alg, let type): return .invalid(.keyTypeMismatch(alg: alg, keyType: type))
        }

        if let exp = claims["exp"]?.doubleValue, now >= exp + leeway { return .invalid(.expired(exp: exp, now: now)) }
        if let nbf = claims["nbf"]?.doubleValue, now + leeway < nbf { return .invalid(.notYetValid(nbf: nbf, now: now)) }
        if let iat = claims["iat"]?.doubleValue, now + leeway < iat { return .invalid(.issuedInFuture(iat: iat, now: now)) }
        return .valid(header: jws.header, claims: claims, key: verificationKey)
    }

    static func resolveKey(header: JSONObject, claims: JSONObject) -> Result<DIDKey, Failure> {
        let iss = claims["iss"]?.stringValue
        if let kid = header["kid"]?.stringValue, kid.hasPrefix("did:") {
            let parsed: (key: DIDKey, fragment: String?)
            do { parsed = try DIDKey.parse(didURL: kid) } catch { return .failure(.unresolvableKey(error.message)) }
            if let fragment = parsed.fragment, fragment != parsed.key.multibaseValue, fragment != "keys-1" {
                return .failure(.unresolvableKey("the kid fragment \"#\(DIDKey.clip(fragment))\" names no key of \(parsed.key.did)"))
            }
            if let iss, iss.hasPrefix("did:key:"), iss != parsed.key.did {
                return .failure(.issuerMismatch(kid: parsed.key.did, iss: iss))
            }
            return .success(parsed.key)
        }
        if let iss, iss.hasPrefix("did:key:") {
            do { return .success(try DIDKey(parsing: iss)) } catch { return .failure(.unresolvableKey(error.message)) }
        }
        return .failure(.noKey)
    }
}
