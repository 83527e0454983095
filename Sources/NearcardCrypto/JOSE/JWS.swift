/// Compact JWS (RFC 7515) with the two algorithms Nearcard uses: ES256 (RFC 7518, raw r ‖ s)
/// and EdDSA over Ed25519 (RFC 8037). Anything else, `none` included, is refused.
public enum JWSAlgorithm: String, Sendable {
    case es256 = "ES256"
    case edDSA = "EdDSA"
}

/// Something that can sign a JWS.
public protocol JWSSigner: Sendable {
    var algorithm: JWSAlgorithm { get }
    func sign(_ signingInput: [UInt8]) throws(CryptoError) -> [UInt8]
}

extension P256.PrivateKey: JWSSigner {
    public var algorithm: JWSAlgorithm { .es256 }
    public func sign(_ signingInput: [UInt8]) throws(CryptoError) -> [UInt8] { try signature(for: signingInput) }
}

extension Ed25519.PrivateKey: JWSSigner {
    public var algorithm: JWSAlgorithm { .edDSA }
    public func sign(_ signingInput: [UInt8]) throws(CryptoError) -> [UInt8] { signature(for: signingInput) }
}

/// A parsed compact JWS. Parsing checks form only; `verify` checks the signature.
public struct CompactJWS: Sendable {
    /// The longest token accepted (64 KiB): a QR code holds under 3 KB, a VP a few KB.
    public static let maximumLength = 64 * 1024

    public let header: JSONObject
    public let payload: [UInt8]
    public let signature: [UInt8]
    /// ASCII(BASE64URL(header) ‖ '.' ‖ BASE64URL(payload)): the bytes the signature covers.
    public let signingInput: [UInt8]

    public var algorithmName: String? { header["alg"]?.stringValue }

    public init(parsing token: String) throws(CryptoError) {
        guard token.utf8.count <= CompactJWS.maximumLength else {
            throw CryptoError(
                .malformedToken, Phrase("the token is %1$@ bytes, over the limit of %2$@", String(token.utf8.count), String(CompactJWS.maximumLength)))
        }
        let parts = token.split(ascii: ".")
        guard parts.count == 3 else {
            throw CryptoError(.malformedToken, Phrase("a compact JWS has three dot-separated parts; this has %1$@", String(parts.count)))
        }
        let names = ["header", "payload", "signature"]
        var decoded: [[UInt8]] = []
        for (n, part) in parts.enumerated() {
            do { decoded.append(try Base64.urlDecode(String(part))) } catch {
                throw CryptoError(.malformedToken, Phrase("the token's %1$@ is not base64url: %2$@", names[n], error.phrase))
            }
        }
        let headerValue: JSONValue
        do { headerValue = try JSONParser(maximumDepth: 16).parse(decoded[0]) } catch {
            throw CryptoError(.malformedToken, Phrase("the token's header is not JSON: %1$@", error.phrase))
        }
        guard let header = headerValue.objectValue else { throw CryptoError(.malformedToken, Phrase("the token's header is not a JSON object")) }
        guard header["alg"]?.stringValue != nil else { throw CryptoError(.malformedToken, Phrase("the token's header has no \"alg\"")) }
        self.header = header
        self.payload = decoded[1]
        self.signature = decoded[2]
        self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
    }

    /// Signs `payload` under `header` (which gets `alg` from the signer). The header is written in
    /// canonical (JCS) form.
    public static func sign(payload: [UInt8], header: JSONObject, signer: some JWSSigner) throws(CryptoError) -> String {
        var h = header
        h["alg"] = .string(signer.algorithm.rawValue)
        let encodedHeader = Base64.urlEncode(JCS.canonicalize(.object(h)))
        let encodedPayload = Base64.urlEncode(payload)
        let input = Array((encodedHeader + "." + encodedPayload).utf8)
        return encodedHeader + "." + encodedPayload + "." + Base64.urlEncode(try signer.sign(input))
    }

    /// Verifies the signature with `key`; the key's type must match `alg`.
    public func verifySignature(with key: DIDKey) -> SignatureCheck {
        guard let alg = algorithmName, let algorithm = JWSAlgorithm(rawValue: alg) else {
            return .unsupportedAlgorithm(algorithmName ?? "")
        }
        if let crit = header["crit"] {
            return .unsupportedCritical(crit.compactText)
        }
        switch (algorithm, key.keyType) {
        case (.es256, .p256):
            guard signature.count == 64 else { return .badSignature }
            return key.ecPublicKey()!.isValidRawSignature(signature, for: signingInput) ? .valid : .badSignature
        case (.edDSA, .ed25519):
            return key.ed25519PublicKey()!.isValidSignature(signature, for: signingInput) ? .valid : .badSignature
        default:
            return .keyTypeMismatch(alg: alg, keyType: key.keyType.rawValue)
        }
    }

    public enum SignatureCheck: Sendable, Equatable {
        case valid
        case badSignature
        case unsupportedAlgorithm(String)
        case unsupportedCritical(String)
        case keyTypeMismatch(alg: String, keyType: String)
    }
}
