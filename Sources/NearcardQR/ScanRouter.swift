public import Foundation
import NearcardCrypto
public import NearcardModel
public import NearcardSemaphore

/// A contact a QR code yields, with its status and the reason for it.
public struct ScannedContact: Sendable {
    public enum Format: String, Sendable { case plaintext, zkProof, didSigned }

    public let format: Format
    public let card: Card
    public let cardId: String?
    public let did: String?
    public let status: VerificationStatus
    public let reason: String
    /// The trusted group a verified, bound group proof in the code names.
    public var memberOf: String? = nil
    /// The verdict on the group proof the code carried, as the contact keeps it (nil: it carried none).
    public var groupVerdict: String? = nil
    /// The credential the code carried (didSigned), to import alongside the contact.
    public let credential: ImportedCredential?
    /// The code's content, kept with the contact for audit.
    public let source: String
}

/// A verifiable credential imported from a QR code.
public typealias ImportedCredential = Credential

/// What the scanner knows that the code does not carry.
public struct ScanContext: Sendable {
    public var now: Date
    /// Whether a DID is a trusted issuer: a trust anchor, or a contact verified in person.
    public var isTrustedIssuer: @Sendable (String) -> Bool
    /// The group the user trusts with this root (decimal), if any; nil when this scanner keeps no trust
    /// list (a group proof is then reported as one it cannot check).
    public var trustedGroup: (@Sendable (String) -> SemaphoreBinding.TrustedGroup?)?

    public init(
        now: Date = Date(), isTrustedIssuer: @escaping @Sendable (String) -> Bool,
        trustedGroup: (@Sendable (String) -> SemaphoreBinding.TrustedGroup?)? = nil
    ) {
        self.now = now
        self.isTrustedIssuer = isTrustedIssuer
        self.trustedGroup = trustedGroup
    }
}

/// What a scanned code is.
public enum ScanOutcome: Sendable {
    case contact(ScannedContact)
    case credentials([ImportedCredential])
    case presentationRequest(PresentationRequest)
    /// Part of a chunked payload: more frames are needed. `missing` is `Chunks.Assembler.missing` (only
    /// frames that exist whichever numbering the payload uses); `Chunks.describeMissing` words it.
    case needMoreFrames(received: Int, total: Int, missing: [Int])
}

/// Routes QR texts by the documented priority: chunk frames; `openid4vp://` (and `OID4VP://`),
/// `openid-credential-offer://`, `openid://`; a three-part JWT; a VP JSON; deep links; envelope JSON
/// (plain or `sce1:`); a legacy base64 blob. Everything else is an error that says what it is not.
public struct ScanRouter: Sendable {
    /// Why a valid signature alone leaves a code unverified (the same words for every format).
    static let unknownSigner = ": signature valid, signer unknown (verified once you meet them in person, or after `nearcard trust add DID`)"
    public static let maximumTextLength = Chunks.maximumTotal
    private var assembler = Chunks.Assembler()

    public init() {}

    public mutating func scan(_ raw: String, context: ScanContext) throws(QRError) -> ScanOutcome {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw QRError(.malformed, Phrase("the QR code is empty")) }
        guard text.utf8.count <= Self.maximumTextLength else { throw QRError(.tooLarge, Phrase("the text is over %1$@ bytes", String(Self.maximumTextLength))) }
        if text.hasPrefix(Chunks.prefix) {
            guard let payload = try assembler.add(try Chunks.parse(text)) else {
                return .needMoreFrames(received: assembler.received, total: assembler.expected, missing: assembler.missing)
            }
            guard let inner = String(validating: payload, as: UTF8.self), !inner.hasPrefix(Chunks.prefix) else {
                throw QRError(.chunks, Phrase("the reassembled payload is not text (or is itself chunked)"))
            }
            var fresh = ScanRouter()
            return try fresh.scan(inner, context: context)
        }
        let lower = text.lowercased()
        if PresentationRequest.schemes.contains(where: { lower.hasPrefix($0) }) {
            return .presentationRequest(try PresentationRequest(parsing: text))
        }
        if lower.hasPrefix("openid-credential-offer://") {
            throw QRError(
                .unusable,
                Phrase(
                    "this is an OpenID credential offer: it asks you to fetch a credential from an issuer's server, which Nearcard does not do; nothing was stored"
                ))
        }
        if Self.looksLikeJWT(text) { return try scanJWT(text, context: context) }
        if text.hasPrefix(Compressed.prefix) { return try scanEnvelope(try Compressed.decode(text), context: context) }
        if text.hasPrefix("{") {
            let value: JSONValue
            do { value = try JSONParser(maximumDepth: 32, maximumLength: Self.maximumTextLength).parse(Array(text.utf8)) } catch {
                throw QRError(.malformed, Phrase("the QR code holds broken JSON: %1$@", error.phrase))
            }
            if Self.isPresentation(value) { return try scanPresentation(value, context: context) }
            return try scanEnvelope(value, context: context)
        }
        if let scheme = text.range(of: "://"), text[..<scheme.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "+" }) {
            throw QRError(.unusable, Phrase("this is a link (%1$@://…) for an app, not a card; nothing was stored", text[..<scheme.lowerBound]))
        }
        if let blob = try? Base64.decode(text), blob.count >= 28 {
            throw QRError(
                .unusable,
                Phrase(
                    "this is an encrypted card from the iOS app's older format: only the sender's own devices can open it; ask them to share a plaintext or signed QR code; nothing was stored"
                ))
        }
        throw QRError(.malformed, Phrase("not a card, credential or OpenID request QR code that Nearcard knows"))
    }

    static func looksLikeJWT(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && text.hasPrefix("eyJ") && parts.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } }
    }

    static func isPresentation(_ v: JSONValue) -> Bool {
        (v["type"]?.arrayValue?.contains("VerifiablePresentation") ?? false) || v["type"] == "VerifiablePresentation"
            || (v["vp"]?["type"]?.arrayValue?.contains("VerifiablePresentation") ?? false)
    }

    // MARK: envelopes

    func scanEnvelope(_ text: String, context: ScanContext) throws(QRError) -> ScanOutcome {
        let value: JSONValue
        do { value = try JSONParser(maximumDepth: 32, maximumLength: Self.maximumTextLength).parse(Array(text.utf8)) } catch {
            throw QRError(.malformed, Phrase("the QR code holds broken JSON: %1$@", error.phrase))
        }
        return try scanEnvelope(value, context: context)
    }

    func scanEnvelope(_ value: JSONValue, context: ScanContext) throws(QRError) -> ScanOutcome {
        guard let o = value.objectValue else { throw QRError(.malformed, Phrase("the QR code's JSON is not an object")) }
        guard let format = o["format"]?.stringValue else { throw QRError(.malformed, Phrase("not a card envelope (no \"format\")")) }
        guard let version = o["version"]?.integerValue, version == 2 || version == 1 else {
            guard let given = o["version"] else { throw QRError(.malformed, Phrase("the card envelope has no \"version\" (Nearcard reads version 2)")) }
            throw QRError(.malformed, Phrase("card envelope version %1$@ is not one Nearcard reads (it reads version 2)", given.compactText))
        }
        let source = value.canonicalText
        switch format {
        case "plaintext":
            guard let p = o["plaintext"]?.objectValue, let snapshot = p["snapshot"] else {
                throw QRError(.malformed, Phrase("a plaintext envelope without \"plaintext.snapshot\""))
            }
            if let exp = p["expirationDate"]?.stringValue {
                guard let date = ISO8601.date(exp) else { throw QRError(.malformed, Phrase("the envelope's expirationDate is not an ISO-8601 date")) }
                guard date > context.now else {
                    throw QRError(.expired, Phrase("this card's QR code expired on %1$@; nothing was stored", ISO8601.string(date)))
                }
            }
            let (card, cardId) = try Snapshot.card(from: snapshot)
            return .contact(
                ScannedContact(
                    format: .plaintext, card: card, cardId: cardId, did: nil, status: .unverified,
                    reason: "plaintext QR codes carry no proof of who made them", credential: nil, source: source))
        case "didSigned":
            guard let jwt = o["didSigned"]?["jwt"]?.stringValue else { throw QRError(.malformed, Phrase("a didSigned envelope without \"didSigned.jwt\"")) }
            return try scanJWT(jwt, context: context)
        case "zkProof":
            if let proof = o["sdProof"]?.objectValue { return try scanSDProof(proof, envelope: o, context: context, source: source) }
            if o["encryptedPayload"] != nil {
                throw QRError(
                    .unusable,
                    Phrase(
                        "this is the iOS app's zkProof card: it is encrypted for the sender's own devices, so no scanner can open it; ask them for a plaintext or signed QR code; nothing was stored"
                    ))
            }
            throw QRError(.malformed, Phrase("a zkProof envelope with neither sdProof nor encryptedPayload"))
        default:
            throw QRError(.malformed, Phrase("envelope format \"%1$@\" is not plaintext, zkProof or didSigned", format.prefix(32)))
        }
    }

    /// Nearcard's zkProof: an SD-JWT bound to this share, checked by anyone.
    func scanSDProof(_ proof: JSONObject, envelope: JSONObject, context: ScanContext, source: String) throws(QRError) -> ScanOutcome {
        guard let sdJwt = proof["sdJwt"]?.stringValue, let jwt = sdJwt.split(separator: "~").first,
            let shareId = envelope["shareId"]?.stringValue
        else {
            throw QRError(.malformed, Phrase("the zkProof envelope has no sdJwt or shareId"))
        }
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: String(jwt)) } catch { throw QRError(.malformed, Phrase("the zkProof's JWT: %1$@", error.phrase)) }
        guard let iss = (try? JSONParser.parse(jws.payload))?["iss"]?.stringValue, let issuer = try? DIDKey(parsing: iss), issuer.keyType == .p256 else {
            throw QRError(.malformed, Phrase("the zkProof's JWT names no P-256 did:key issuer"))
        }
        let claimed = Set((envelope["selectedFields"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(CardField.init(rawValue:)) })
        func failed(_ why: String, card: Card = Card(name: "(unverified card)")) -> ScanOutcome {
            .contact(ScannedContact(format: .zkProof, card: card, cardId: nil, did: iss, status: .failed, reason: why, credential: nil, source: source))
        }
        let disclosed: SelectiveDisclosure.Disclosed
        switch SelectiveDisclosure.verify(sdJwt, issuer: issuer) {
        case .failure(let f): return failed(f.description)
        case .success(let d): disclosed = d
        }
        if let exp = disclosed.claims["exp"]?.doubleValue, context.now.timeIntervalSince1970 >= exp {
            throw QRError(.expired, Phrase("this card's QR code expired on %1$@; nothing was stored", ISO8601.string(Date(timeIntervalSince1970: exp))))
        }
        var o = JSONObject()
        for (field, value) in disclosed.fields { o[field.rawValue] = value }
        let card: Card
        do { card = try Card(json: .object(o)) } catch { return failed("the disclosed fields do not form a card: \(error.message)") }
        guard disclosed.claims["jti"]?.stringValue?.uppercased() == "URN:UUID:" + shareId.uppercased() else {
            return failed("the proof was made for another QR code (its jti is not this shareId)", card: card)
        }
        let missing = claimed.subtracting(disclosed.fields.keys)
        guard missing.isEmpty else {
            return failed("the code claims \(missing.map(\.rawValue).sorted().joined(separator: ", ")) but the proof does not disclose it", card: card)
        }
        // One rule for every signed code (docs/QR.md "Verified"): the signature checks, and the signer is
        // someone you trust — met in person, a trust anchor, or a proven member of a group you trust.
        let signerTrusted = context.isTrustedIssuer(iss)
        var status = signerTrusted ? VerificationStatus.verified : .unverified
        var memberOf: String?
        var verdictText: String?
        var reason =
            "selective-disclosure proof checks: \(disclosed.fields.count) fields disclosed, \(disclosed.hiddenCount) hidden, signed by \(iss)"
            + (signerTrusted ? ", whom you trust" : ScanRouter.unknownSigner)
        if let group = proof["issuerProof"]?.stringValue {
            if let trustedGroup = context.trustedGroup {
                let verdict = SemaphoreBinding.check(group, holderDID: iss, trusted: trustedGroup)
                // A group proof decides as it does for an exchange (PROTOCOL.md §18): a trusted group
                // vouches for an unknown signer, an untrusted one leaves the code unverified.
                status = verdict.contactStatus
                memberOf = verdict.group
                verdictText = verdict.description
                reason = status == .failed ? verdict.description : reason + "; " + verdict.description
            } else {
                status = .unverified
                verdictText = "a group proof this scanner cannot check (it keeps no list of trusted groups)"
                reason += "; it carries \(verdictText!)"
            }
        }
        return .contact(
            ScannedContact(
                format: .zkProof, card: card, cardId: nil, did: iss, status: status, reason: reason,
                memberOf: memberOf, groupVerdict: verdictText, credential: nil, source: source))
    }

    // MARK: JWTs and presentations

    func scanJWT(_ token: String, context: ScanContext) throws(QRError) -> ScanOutcome {
        let credential = try Self.importCredential(token, context: context)
        guard credential.types.contains(BusinessCardCredential.type) else { return .credentials([credential]) }
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: token) } catch { throw QRError(.malformed, error.phrase) }
        guard let subject = (try? JSONParser.parse(jws.payload))?["vc"]?["credentialSubject"]?.objectValue else {
            throw QRError(.malformed, Phrase("the BusinessCardCredential has no credentialSubject"))
        }
        let card = try BusinessCardCredential.card(from: subject)
        return .contact(
            ScannedContact(
                format: .didSigned, card: card, cardId: nil, did: credential.issuer, status: credential.status,
                reason: credential.reason, credential: credential, source: token))
    }

    /// Checks a VC-JWT: signature by the did:key in kid/iss, validity window, and whether its issuer is trusted.
    static func importCredential(_ token: String, context: ScanContext) throws(QRError) -> ImportedCredential {
        let outcome: JWTVerifier.Outcome
        let jws: CompactJWS
        do {
            jws = try CompactJWS(parsing: token)
            outcome = try JWTVerifier(now: context.now.timeIntervalSince1970, leeway: 60).verify(token)
        } catch {
            throw QRError(.malformed, Phrase("the JWT is malformed: %1$@", error.phrase))
        }
        guard let claims = (try? JSONParser.parse(jws.payload))?.objectValue, let vc = claims["vc"]?.objectValue else {
            throw QRError(.unusable, Phrase("this JWT is not a verifiable credential (it has no \"vc\" claim); nothing was stored"))
        }
        let types = (vc["type"]?.arrayValue ?? []).compactMap(\.stringValue)
        let issuer = claims["iss"]?.stringValue ?? vc["issuer"]?.stringValue ?? "(unknown)"
        let id = claims["jti"]?.stringValue ?? "sha256:" + Hex.encode(SHA256.hash(Array(token.utf8)).prefix(16))
        let iat = claims["iat"]?.doubleValue ?? claims["nbf"]?.doubleValue
        let exp = claims["exp"]?.doubleValue
        let status: VerificationStatus
        let reason: String
        switch outcome {
        case .valid(_, _, let key):
            if context.isTrustedIssuer(key.did) {
                status = .verified
                reason = "signed by \(key.did), a trusted issuer"
            } else {
                status = .unverified
                reason = "the signature checks, signed by \(key.did)" + ScanRouter.unknownSigner
            }
        case .invalid(.expired(let e, _)):
            throw QRError(.expired, Phrase("this credential expired on %1$@; nothing was stored", ISO8601.string(Date(timeIntervalSince1970: e))))
        case .invalid(let f):
            status = .failed
            reason = "\(f)"
        }
        return ImportedCredential(
            id: id, issuer: issuer, subject: claims["sub"]?.stringValue, types: types, jwt: token,
            issuedAt: iat.map { Date(timeIntervalSince1970: $0) }, expiresAt: exp.map { Date(timeIntervalSince1970: $0) },
            status: status, reason: reason)
    }

    func scanPresentation(_ value: JSONValue, context: ScanContext) throws(QRError) -> ScanOutcome {
        let vp = value["vp"] ?? value
        let list = vp["verifiableCredential"]?.arrayValue ?? []
        guard !list.isEmpty else { throw QRError(.malformed, Phrase("the presentation holds no credentials")) }
        var out: [ImportedCredential] = []
        for item in list.prefix(16) {
            guard let token = item.stringValue else {
                throw QRError(.unusable, Phrase("the presentation holds a credential that is not a JWT; Nearcard imports VC-JWTs"))
            }
            out.append(try Self.importCredential(token, context: context))
        }
        return .credentials(out)
    }
}
