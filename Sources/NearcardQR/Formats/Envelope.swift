public import Foundation
public import NearcardCrypto
public import NearcardModel

/// The iOS app's `QRCodeEnvelope` (version 2) and Nearcard's verifiable zkProof form of it.
///
/// - plaintext: `{"version":2,"format":"plaintext","sharingLevel","selectedFields"?,"shareId","plaintext":{"snapshot",
///   "shareId","createdAt","expirationDate"?,"selectedFields"?}}` — the iOS app's shape exactly.
/// - zkProof (Nearcard): `{"version":2,"format":"zkProof",…,"sdProof":{"sdJwt","createdAt","expirationDate",
///   "issuerProof"?}}` — an SD-JWT any scanner can check (docs/PROTOCOL.md §17). The iOS app's zkProof carries
///   `encryptedPayload` instead, which only the sender's own devices can open.
public enum Envelope {
    public static let version = 2

    /// The iOS app's sharing levels, chosen from the disclosed fields.
    public static func sharingLevel(_ fields: Set<CardField>) -> String {
        if fields.contains(.phone) || fields.contains(.email) { return "personal" }
        if fields.isSubset(of: [.name]) { return "public" }
        return "professional"
    }

    static func base(format: String, fields: Set<CardField>, shareId: String) -> JSONObject {
        [
            "version": .number(Double(version)), "format": .string(format), "sharingLevel": .string(sharingLevel(fields)),
            "selectedFields": .array(CardField.allCases.filter { fields.contains($0) }.map { .string($0.rawValue) }),
            "shareId": .string(shareId.uppercased()),
        ]
    }

    /// A plaintext envelope (the iOS app imports it; unverifiable by design). Its snapshot's `cardId`
    /// is a fresh random UUID unless one is given: a stable one would link every code a person ever
    /// shows. Nothing reads it back as an identity: a scanner stores an identical card once by
    /// comparing the cards (docs/PROTOCOL.md §16), not their ids.
    public static func plaintext(
        card: Card, fields: Set<CardField>, cardId: String = Sodium.randomUUIDString(), updatedAt: Date,
        shareId: String = UUID().uuidString,
        createdAt: Date, expires: Date?
    ) -> String {
        let shown = card.filtered(to: fields)
        var inner: JSONObject = [
            "snapshot": Snapshot.json(shown, cardId: cardId, updatedAt: updatedAt), "shareId": .string(shareId.uppercased()),
            "createdAt": .string(ISO8601.string(createdAt)),
            "selectedFields": .array(CardField.allCases.filter { fields.contains($0) }.map { .string($0.rawValue) }),
        ]
        if let expires { inner["expirationDate"] = .string(ISO8601.string(expires)) }
        var o = base(format: "plaintext", fields: fields, shareId: shareId)
        o["plaintext"] = .object(inner)
        return JSONValue.object(o).canonicalText
    }

    /// Nearcard's zkProof: the card's disclosed fields as an SD-JWT bound to this share (jti) and
    /// expiring (exp), signed with the DID key.
    public static func zkProof(
        card: Card, fields: Set<CardField>, keys: IdentityKeys, shareId: String = UUID().uuidString,
        createdAt: Date, expires: Date, issuerProof: String? = nil
    ) throws(CryptoError) -> String {
        let disclosed = card.filtered(to: fields).presentFields
        let sdJwt = try SelectiveDisclosure.issue(
            card: card, disclosing: disclosed, signer: keys.p256, issuedAt: Int64(createdAt.timeIntervalSince1970),
            extraClaims: ["exp": .number(Double(Int64(expires.timeIntervalSince1970))), "jti": .string("urn:uuid:" + shareId.uppercased())])
        var proof: JSONObject = ["sdJwt": .string(sdJwt), "createdAt": .string(ISO8601.string(createdAt)), "expirationDate": .string(ISO8601.string(expires))]
        if let issuerProof { proof["issuerProof"] = .string(issuerProof) }
        var o = base(format: "zkProof", fields: disclosed, shareId: shareId)
        o["sdProof"] = .object(proof)
        return JSONValue.object(o).canonicalText
    }
}

/// The BusinessCard VC-JWT, in the iOS app's layout: header
/// `{"alg":"ES256","cty":"application/vc+jwt","kid":"<did>#keys-1","typ":"JWT"}` and claims
/// `{jti, iss, sub, nbf, iat, exp?, vc:{@context, type, credentialSubject:{id, …card fields…}}}`.
public enum BusinessCardCredential {
    public static let contexts: [JSONValue] = ["https://www.w3.org/2018/credentials/v1", "https://schema.org"]
    public static let type = "BusinessCardCredential"

    public static func make(
        card: Card, fields: Set<CardField>, signer: P256.PrivateKey, issuedAt: Date, expires: Date?,
        id: String = UUID().uuidString
    ) throws(CryptoError) -> String {
        let did = signer.didKey.did
        var subject: JSONObject = ["id": .string(did)]
        for (k, v) in card.filtered(to: fields).json.objectValue ?? [:] { subject[k] = v }
        var claims: JSONObject = [
            "jti": .string("urn:uuid:" + id.uppercased()), "iss": .string(did), "sub": .string(did),
            "nbf": .number(Double(Int64(issuedAt.timeIntervalSince1970))), "iat": .number(Double(Int64(issuedAt.timeIntervalSince1970))),
            "vc": ["@context": .array(contexts), "type": ["VerifiableCredential", .string(type)], "credentialSubject": .object(subject)],
        ]
        if let expires { claims["exp"] = .number(Double(Int64(expires.timeIntervalSince1970))) }
        return try CompactJWS.sign(
            payload: JCS.canonicalize(.object(claims)),
            header: ["cty": "application/vc+jwt", "kid": .string(did + "#keys-1"), "typ": "JWT"], signer: signer)
    }

    /// The card in a credentialSubject: Nearcard's field names, and the iOS snapshot's plural forms.
    public static func card(from subject: JSONObject) throws(QRError) -> Card {
        guard let name = subject["name"]?.stringValue, !name.isEmpty else { throw QRError(.malformed, Phrase("the credential's subject has no name")) }
        var o = JSONObject()
        for field in CardField.allCases { if let v = subject[field.rawValue] { o[field.rawValue] = v } }
        if o["email"] == nil, let e = subject["emails"]?.arrayValue?.first?.stringValue { o["email"] = .string(e) }
        if o["phone"] == nil, let p = subject["phones"]?.arrayValue?.first?.stringValue { o["phone"] = .string(p) }
        if o["socialNetworks"] == nil, let s = subject["socialProfiles"] { o["socialNetworks"] = s }
        o["name"] = .string(name)
        do { return try Card(json: .object(o)) } catch { throw QRError(.malformed, Phrase("the credential's subject: %1$@", error.phrase)) }
    }
}
