public import Foundation
public import NearcardCrypto
public import NearcardModel

/// An OpenID for Verifiable Presentations authorization request, as QR codes carry it
/// (`openid4vp://authorize?…`, also `OID4VP://` and `openid://`).
public struct PresentationRequest: Sendable, Equatable {
    public let clientID: String
    public let responseType: String
    public let responseMode: String?
    public let nonce: String
    public let state: String
    public let responseURI: String?
    public let redirectURI: String?
    /// The credential claims asked for, as paths (`credentialSubject.name`).
    public let requestedClaims: [String]

    /// The verifier's host (from client_id, a URL or a DNS name): the key of its pairwise DID.
    public var verifierHost: String {
        var id = clientID
        for prefix in ["redirect_uri:", "x509_san_dns:", "https://", "http://"] where id.hasPrefix(prefix) { id.removeFirst(prefix.count) }
        if id.hasPrefix("https://") { id.removeFirst(8) }
        return String(id.split(separator: "/").first ?? Substring(id)).split(separator: ":").first.map(String.init)?.lowercased() ?? id
    }

    public static let schemes = ["openid4vp://", "oid4vp://", "openid://"]
    public static let maximumLength = 8192

    /// Parses and checks a request: client_id, nonce and state are required; direct_post needs
    /// response_uri and must not carry redirect_uri.
    public init(parsing text: String) throws(QRError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw QRError(.tooLarge, Phrase("the request is longer than %1$@ bytes", String(Self.maximumLength)))
        }
        guard let q = text.firstIndex(of: "?") else { throw QRError(.invalidRequest, Phrase("the request has no query (client_id, nonce, state, …)")) }
        var params: [String: String] = [:]
        for pair in text[text.index(after: q)...].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard let key = kv.first?.removingPercentEncoding else { continue }
            let value = (kv.count > 1 ? kv[1] : "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            guard params[key] == nil else { throw QRError(.invalidRequest, Phrase("the request repeats \"%1$@\"", key)) }
            params[key] = value
        }
        func required(_ k: String) throws(QRError) -> String {
            guard let v = params[k], !v.isEmpty else { throw QRError(.invalidRequest, Phrase("the request has no %1$@; refused (OID4VP requires it)", k)) }
            return v
        }
        clientID = try required("client_id")
        nonce = try required("nonce")
        state = try required("state")
        responseType = params["response_type"] ?? "vp_token"
        guard responseType == "vp_token" else {
            throw QRError(.invalidRequest, Phrase("response_type \"%1$@\" is not supported (vp_token only)", responseType))
        }
        responseMode = params["response_mode"]
        responseURI = params["response_uri"]
        redirectURI = params["redirect_uri"]
        if responseMode == "direct_post" || responseMode == "direct_post.jwt" {
            guard responseURI != nil else { throw QRError(.invalidRequest, Phrase("response_mode direct_post needs a response_uri; refused")) }
            guard redirectURI == nil else { throw QRError(.invalidRequest, Phrase("response_mode direct_post must not carry a redirect_uri; refused")) }
        }
        var claims: [String] = []
        if let pd = params["presentation_definition"] {
            guard let v = try? JSONParser(maximumDepth: 16, maximumLength: Self.maximumLength).parse(Array(pd.utf8)) else {
                throw QRError(.invalidRequest, Phrase("%1$@ is not JSON", "presentation_definition"))
            }
            for d in v["input_descriptors"]?.arrayValue ?? [] {
                for f in d["constraints"]?["fields"]?.arrayValue ?? [] {
                    for p in f["path"]?.arrayValue ?? [] {
                        if let s = p.stringValue { claims.append(s.replacingOccurrences(of: "$.", with: "").replacingOccurrences(of: "$['vc']", with: "vc")) }
                    }
                }
            }
        }
        if let dq = params["dcql_query"] {
            guard let v = try? JSONParser(maximumDepth: 16, maximumLength: Self.maximumLength).parse(Array(dq.utf8)) else {
                throw QRError(.invalidRequest, Phrase("%1$@ is not JSON", "dcql_query"))
            }
            for c in v["credentials"]?.arrayValue ?? [] {
                for cl in c["claims"]?.arrayValue ?? [] {
                    let path = (cl["path"]?.arrayValue ?? []).compactMap(\.stringValue)
                    if !path.isEmpty { claims.append(path.joined(separator: ".")) }
                }
            }
        }
        requestedClaims = claims
    }

    /// The card fields the request names (by the last component of each path); all disclosed fields when it names none.
    public func requestedFields(from policy: Set<CardField>) -> Set<CardField> {
        let named = Set(requestedClaims.compactMap { path in CardField(rawValue: String(path.split(separator: ".").last ?? "")) })
        return named.isEmpty ? policy : named.union([.name])
    }
}

/// Per-verifier DIDs and VP tokens.
public enum Presentation {
    /// The pairwise key for a verifier: P-256 scalar = HKDF-SHA256(ikm: the identity's P-256 scalar,
    /// salt "nearcard/pairwise-did/v1", info: the verifier's host ‖ counter), the first value in 1…n−1.
    /// Deterministic, so a backup of the identity restores every pairwise DID.
    public static func pairwiseKey(identity: IdentityKeys, verifierHost: String) throws(CryptoError) -> P256.PrivateKey {
        var ikm = identity.p256.rawRepresentation.bytes
        defer { ikm.wipe() }
        for counter in 0..<16 {
            var scalar = try HKDFSHA256.deriveKey(
                inputKeyMaterial: ikm, salt: Array("nearcard/pairwise-did/v1".utf8),
                info: Array(verifierHost.lowercased().utf8) + [UInt8(counter)], outputLength: 32)
            defer { scalar.wipe() }
            if let key = try? P256.PrivateKey(rawRepresentation: SecureBytes(scalar)) { return key }
        }
        throw CryptoError(.library, Phrase("no valid pairwise key (this does not happen)"))
    }

    /// The VP token: a `vp+jwt` signed by the pairwise key, with nonce, aud = client_id and a five-minute
    /// exp, holding one BusinessCardCredential issued by the same pairwise DID with the requested fields.
    public static func token(
        for request: PresentationRequest, card: Card, fields: Set<CardField>, identity: IdentityKeys,
        now: Date = Date()
    ) throws(CryptoError) -> (token: String, did: String) {
        let key = try pairwiseKey(identity: identity, verifierHost: request.verifierHost)
        let did = key.didKey
        let vc = try BusinessCardCredential.make(card: card, fields: fields, signer: key, issuedAt: now, expires: now.addingTimeInterval(300))
        let iat = Int64(now.timeIntervalSince1970)
        let claims: JSONObject = [
            "iss": .string(did.did), "sub": .string(did.did), "iat": .number(Double(iat)), "exp": .number(Double(iat + 300)),
            "nonce": .string(request.nonce), "aud": .string(request.clientID),
            "vp": [
                "@context": ["https://www.w3.org/2018/credentials/v1"], "type": ["VerifiablePresentation"],
                "holder": .string(did.did), "verifiableCredential": [.string(vc)],
            ],
        ]
        let token = try CompactJWS.sign(payload: JCS.canonicalize(.object(claims)), header: ["typ": "vp+jwt", "kid": .string(did.keyID)], signer: key)
        return (token, did.did)
    }
}
