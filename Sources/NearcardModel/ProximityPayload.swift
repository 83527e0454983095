public import NearcardCrypto
import NearcardImage

/// The signed card each side sends in an exchange (docs/PROTOCOL.md "ProximityPayload").
///
/// JSON members (absent optionals are omitted):
/// `version` (1), `cardFields` (the disclosed card), `senderDID`, `timestamp` (Unix seconds),
/// `issuerCommitment`?, `issuerProof`?, `sdProof`? (SD-JWT, `SelectiveDisclosure`), `sealedRoute`?
/// (base64), `pubKey`? (X25519, base64), `signPubKey`? (Ed25519, base64), `receiver`? (the intended
/// receiver's DID), `nonce` (16 random bytes, base64url), `sessionBinding`? (base64url, the session's
/// channel binding), `ephemeralMessageHash`? (hex SHA-256 of the UTF-8 message), and
/// `payloadSignature`: ECDSA P-256 raw r‖s, base64, over
/// `"nearcard/proximity-payload/v1" ‖ 0x00 ‖ JCS(the payload without payloadSignature)`.
public struct ProximityPayload: Sendable, Equatable {
    public static let version = 1
    public static let signatureDomain = "nearcard/proximity-payload/v1"
    public static let nonceByteCount = 16
    /// Ephemeral messages: at most 140 characters (Unicode scalar values, docs/PROTOCOL.md §1).
    public static let maximumMessageLength = 140

    public var cardFields: Card
    public var senderDID: String
    public var timestamp: Int64
    public var issuerCommitment: String?
    public var issuerProof: String?
    public var sdProof: String?
    public var sealedRoute: String?
    public var pubKey: String?
    public var signPubKey: String?
    public var receiver: String?
    public var nonce: String
    public var sessionBinding: String?
    public var ephemeralMessageHash: String?
    public var payloadSignature: String

    static let members: Set<String> = [
        "version", "cardFields", "senderDID", "timestamp", "issuerCommitment", "issuerProof",
        "sdProof", "sealedRoute", "pubKey", "signPubKey", "receiver", "nonce",
        "sessionBinding", "ephemeralMessageHash", "payloadSignature",
    ]

    /// Hex SHA-256 of the message's UTF-8 bytes (what `ephemeralMessageHash` carries).
    public static func messageHash(_ message: String) -> String { Hex.encode(SHA256.hash(Array(message.utf8))) }

    /// Checks an ephemeral message against the limit; nil when acceptable.
    public static func messageProblem(_ message: String) -> String? { messageProblemPhrase(message)?.english }

    /// `messageProblem` as a sentence to say in a person's language.
    public static func messageProblemPhrase(_ message: String) -> Phrase? {
        let length = message.unicodeScalars.count
        if length > maximumMessageLength {
            return Phrase(
                "an ephemeral message is %1$@ characters; at most %2$@ (Unicode code points)", String(length), String(maximumMessageLength))
        }
        if message.unicodeScalars.contains(where: { $0.isControl && $0 != "\n" }) {
            return Phrase("an ephemeral message must not contain control characters")
        }
        return nil
    }

    /// Everything but the signature, in member order for people; JCS orders it for signing.
    public var unsignedJSON: JSONObject {
        var o = JSONObject()
        o["version"] = .number(Double(Self.version))
        o["cardFields"] = cardFields.json
        o["senderDID"] = .string(senderDID)
        o["timestamp"] = .number(Double(timestamp))
        if let issuerCommitment { o["issuerCommitment"] = .string(issuerCommitment) }
        if let issuerProof { o["issuerProof"] = .string(issuerProof) }
        if let sdProof { o["sdProof"] = .string(sdProof) }
        if let sealedRoute { o["sealedRoute"] = .string(sealedRoute) }
        if let pubKey { o["pubKey"] = .string(pubKey) }
        if let signPubKey { o["signPubKey"] = .string(signPubKey) }
        if let receiver { o["receiver"] = .string(receiver) }
        o["nonce"] = .string(nonce)
        if let sessionBinding { o["sessionBinding"] = .string(sessionBinding) }
        if let ephemeralMessageHash { o["ephemeralMessageHash"] = .string(ephemeralMessageHash) }
        return o
    }

    public var json: JSONValue {
        var o = unsignedJSON
        o["payloadSignature"] = .string(payloadSignature)
        return .object(o)
    }

    /// The bytes the signature covers.
    public static func signingInput(unsigned: JSONObject) -> [UInt8] {
        Array(signatureDomain.utf8) + [0] + JCS.canonicalize(.object(unsigned))
    }

    /// Builds and signs a payload: the card reduced to the sharing policy, a fresh SD-JWT over the whole
    /// card, and the bindings to this session, receiver and message.
    /// `sdProof`: the selective-disclosure proof of exactly this card and policy, when the caller made it
    /// ahead (`disclosureProof`, fresh for this one payload); else one is made here.
    /// `version`: the exchange version of the session; a peer of an older one is sent only the fields it knows.
    public static func make(
        card: Card, policy: SharingPolicy, keys: IdentityKeys, receiver: String?, sessionBinding: [UInt8]?,
        ephemeralMessage: String?, sealedRoute: String?, issuerProof: String? = nil, sdProof: String? = nil,
        now: Int64, version: Int = ExchangeVersions.lowest
    ) throws(CryptoError) -> ProximityPayload {
        let disclosed = disclosedCard(card, policy: policy, version: version)
        let proof: String
        if let sdProof {
            proof = sdProof
        } else {
            proof = try SelectiveDisclosure.issue(card: card, disclosing: disclosed.presentFields, signer: keys.p256, issuedAt: now, version: version)
        }
        var payload = ProximityPayload(
            cardFields: disclosed, senderDID: keys.p256.didKey.did, timestamp: now, issuerProof: issuerProof,
            sdProof: proof,
            sealedRoute: sealedRoute,
            pubKey: Base64.encode(keys.x25519.publicKey.rawRepresentation),
            signPubKey: Base64.encode(keys.ed25519.publicKey.rawRepresentation),
            receiver: receiver, nonce: Base64.urlEncode(Sodium.randomBytes(nonceByteCount)),
            sessionBinding: sessionBinding.map { Base64.urlEncode($0) },
            ephemeralMessageHash: ephemeralMessage.map(messageHash), payloadSignature: "")
        payload.payloadSignature = Base64.encode(try keys.p256.signature(for: signingInput(unsigned: payload.unsignedJSON)))
        return payload
    }

    /// The selective-disclosure proof a payload of `card` under `policy` carries: independent of the
    /// session and the receiver, so a sender may make it before it knows them (fresh salts each time:
    /// one proof per payload).
    public static func disclosureProof(
        card: Card, policy: SharingPolicy, signer: P256.PrivateKey, now: Int64, version: Int = ExchangeVersions.lowest
    ) throws(CryptoError) -> String {
        try SelectiveDisclosure.issue(
            card: card, disclosing: disclosedCard(card, policy: policy, version: version).presentFields, signer: signer, issuedAt: now,
            version: version)
    }

    /// What a payload of exchange `version` discloses of `card`: the fields the policy shares that the
    /// version carries.
    public static func disclosedCard(_ card: Card, policy: SharingPolicy, version: Int) -> Card {
        card.filtered(to: policy.fields.intersection(CardField.fields(ofVersion: version)))
    }

    public init(
        cardFields: Card, senderDID: String, timestamp: Int64, issuerCommitment: String? = nil, issuerProof: String? = nil,
        sdProof: String? = nil, sealedRoute: String? = nil, pubKey: String? = nil, signPubKey: String? = nil,
        receiver: String? = nil, nonce: String, sessionBinding: String? = nil, ephemeralMessageHash: String? = nil,
        payloadSignature: String
    ) {
        self.cardFields = cardFields
        self.senderDID = senderDID
        self.timestamp = timestamp
        self.issuerCommitment = issuerCommitment
        self.issuerProof = issuerProof
        self.sdProof = sdProof
        self.sealedRoute = sealedRoute
        self.pubKey = pubKey
        self.signPubKey = signPubKey
        self.receiver = receiver
        self.nonce = nonce
        self.sessionBinding = sessionBinding
        self.ephemeralMessageHash = ephemeralMessageHash
        self.payloadSignature = payloadSignature
    }

    /// Version 3: the members of `cardFields` that name no field this node knows (a newer peer's). The
    /// disclosure proof must open each with the same value (`verify`); nothing else reads them.
    public var unknownCardFields: JSONObject = [:]

    /// Decodes a payload of exchange `version` strictly: unknown members, wrong types and over-long
    /// values are refused — but for the card's fields of a newer peer in version 3, which are set aside
    /// (`unknownCardFields`).
    public init(json: JSONValue, version: Int = ExchangeVersions.lowest) throws(ModelError) {
        guard let o = json.objectValue else { throw ModelError(.malformedPayload, Phrase("a payload must be a JSON object")) }
        for key in o.keys where !Self.members.contains(key) {
            throw ModelError(.malformedPayload, Phrase("unknown member \"%1$@\" in the payload", key))
        }
        guard o["version"]?.integerValue == Int64(Self.version) else {
            guard let v = o["version"] else { throw ModelError(.malformedPayload, Phrase("payload version missing is not %1$@", String(Self.version))) }
            throw ModelError(.malformedPayload, Phrase("payload version %1$@ is not %2$@", v.compactText, String(Self.version)))
        }
        func string(_ key: String, required: Bool) throws(ModelError) -> String? {
            guard let v = o[key] else {
                if required { throw ModelError(.malformedPayload, Phrase("the payload has no \"%1$@\"", key)) }
                return nil
            }
            guard let s = v.stringValue else { throw ModelError(.malformedPayload, Phrase("\"%1$@\" must be a string", key)) }
            return s
        }
        guard var card = o["cardFields"] else { throw ModelError(.malformedPayload, Phrase("the payload has no \"%1$@\"", "cardFields")) }
        if version >= 3, let members = card.objectValue {
            let known = Set(CardField.fields(ofVersion: version).map(\.rawValue))
            unknownCardFields = JSONObject(members.members.filter { !known.contains($0.key) }.map { ($0.key, $0.value) })
            card = .object(JSONObject(members.members.filter { known.contains($0.key) }.map { ($0.key, $0.value) }))
        } else if let members = card.objectValue, let newer = members.keys.first(where: { CardField(rawValue: $0).map { $0.row.since > version } ?? false }) {
            throw ModelError(.malformedPayload, Phrase("%1$@: \"%2$@\" is not a field of version %3$@", "cardFields", newer, String(version)))
        }
        do { cardFields = try Card(json: card) } catch {
            // A value over a limit stays that (too_large on the wire), not "malformed".
            throw ModelError(error.kind == .limitExceeded ? .limitExceeded : .malformedPayload, Phrase("%1$@: %2$@", "cardFields", error.phrase))
        }
        senderDID = try string("senderDID", required: true)!
        guard let ts = o["timestamp"]?.integerValue else {
            throw ModelError(.malformedPayload, Phrase("\"%1$@\" must be an integer (Unix seconds)", "timestamp"))
        }
        timestamp = ts
        issuerCommitment = try string("issuerCommitment", required: false)
        issuerProof = try string("issuerProof", required: false)
        sdProof = try string("sdProof", required: false)
        sealedRoute = try string("sealedRoute", required: false)
        pubKey = try string("pubKey", required: false)
        signPubKey = try string("signPubKey", required: false)
        receiver = try string("receiver", required: false)
        nonce = try string("nonce", required: true)!
        sessionBinding = try string("sessionBinding", required: false)
        ephemeralMessageHash = try string("ephemeralMessageHash", required: false)
        payloadSignature = try string("payloadSignature", required: true)!
    }
}

/// What the verifier knows independently of the payload.
public struct PayloadVerificationContext: Sendable {
    /// The DID the sender proved in the session (nil for a payload read outside a session).
    public var expectedSenderDID: String?
    /// My DID: the payload must name me as its receiver (nil: the payload must name no receiver).
    public var receiverDID: String?
    /// The session's channel binding; the payload must carry exactly this.
    public var sessionBinding: [UInt8]?
    /// The peer's long-term X25519 key, as its identity proved it (version 2 runs each session on a
    /// fresh Noise static key, so this is not the handshake's); the payload's pubKey must equal it.
    public var peerStaticKey: X25519.PublicKey?
    /// The ephemeral message that arrived with the payload, if any; its hash must match.
    public var ephemeralMessage: String?
    /// Unix seconds now, and how far the payload's timestamp may be from it.
    public var now: Int64
    public var maximumSkew: Int64
    /// Whether a payload without a selective-disclosure proof is refused.
    public var requireDisclosureProof: Bool
    /// The session's exchange version (docs/PROTOCOL.md §9): which fields the card may carry and how
    /// its disclosure proof is built.
    public var version: Int = ExchangeVersions.lowest

    public init(
        expectedSenderDID: String? = nil, receiverDID: String? = nil, sessionBinding: [UInt8]? = nil,
        peerStaticKey: X25519.PublicKey? = nil, ephemeralMessage: String? = nil, now: Int64,
        maximumSkew: Int64 = 300, requireDisclosureProof: Bool = true, version: Int = ExchangeVersions.lowest
    ) {
        self.version = version
        self.expectedSenderDID = expectedSenderDID
        self.receiverDID = receiverDID
        self.sessionBinding = sessionBinding
        self.peerStaticKey = peerStaticKey
        self.ephemeralMessage = ephemeralMessage
        self.now = now
        self.maximumSkew = maximumSkew
        self.requireDisclosureProof = requireDisclosureProof
    }
}

/// Why a payload failed; each case is a reason a person can read.
public enum PayloadFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Binding: String, Sendable { case receiver, session, messageHash }

    case malformed(String)
    /// A value over one of §9's limits (the message names it): `too_large` on the wire.
    case tooLarge(String)
    case wrongDID(String)
    case badSignature
    case staleTimestamp(timestamp: Int64, now: Int64)
    case fieldNotDisclosed(CardField)
    case disclosureMismatch(CardField)
    case disclosureProof(SDProofFailure)
    case missingDisclosureProof
    case bindingMismatch(Binding)
    case keyMismatch(String)
    /// The card's photo is not one a card may carry (§9): the reason says why.
    case badPhoto(String)

    /// A short, stable code for logs and the JSON-lines interface.
    public var code: String {
        switch self {
        case .malformed: "malformed"
        case .tooLarge: "too_large"
        case .wrongDID: "wrong_did"
        case .badSignature: "bad_signature"
        case .staleTimestamp: "stale_timestamp"
        case .fieldNotDisclosed: "field_not_disclosed"
        case .disclosureMismatch: "disclosure_mismatch"
        case .disclosureProof: "disclosure_proof"
        case .missingDisclosureProof: "missing_disclosure_proof"
        case .bindingMismatch(let b): "binding_mismatch_\(b.rawValue)"
        case .keyMismatch: "key_mismatch"
        case .badPhoto: "bad_photo"
        }
    }

    public var description: String { phrase.english }

    /// The reason as a sentence to say in a person's language.
    package var phrase: Phrase {
        switch self {
        case .malformed(let why): Phrase("the payload is malformed: %1$@", why)
        case .tooLarge(let why): Phrase("the card is over a limit: %1$@", why)
        case .wrongDID(let why): Phrase("wrong DID: %1$@", why)
        case .badSignature: Phrase("the payload signature does not verify with the sender's DID key")
        case .staleTimestamp(let ts, let now): Phrase("the payload's timestamp %1$@ is too far from now (%2$@)", String(ts), String(now))
        case .fieldNotDisclosed(let f): Phrase("the card carries %1$@, but the disclosure proof does not open it", f.rawValue)
        case .disclosureMismatch(let f): Phrase("the card's %1$@ differs from the value the disclosure proof commits to", f.rawValue)
        case .disclosureProof(let f): f.phrase
        case .missingDisclosureProof: Phrase("the payload has no selective-disclosure proof")
        case .bindingMismatch(.receiver): Phrase("the payload is addressed to someone else")
        case .bindingMismatch(.session): Phrase("the payload was signed for another session")
        case .bindingMismatch(.messageHash): Phrase("the ephemeral message does not match the hash the payload signs")
        case .keyMismatch(let why): Phrase("key mismatch: %1$@", why)
        case .badPhoto(let why): Phrase(verbatim: "the card's photo \(why)")
        }
    }
}

extension ProximityPayload {
    /// A payload whose every check passed.
    public struct Verified: Sendable, Equatable {
        public let payload: ProximityPayload
        public let senderKey: DIDKey
        public let disclosure: SelectiveDisclosure.Disclosed?
        public let pubKey: X25519.PublicKey?
        public let signPubKey: Ed25519.PublicKey?
    }

    /// Decodes and verifies a received payload: signature over the canonical bytes as received,
    /// sender DID, bindings, timestamp, keys, and the selective-disclosure proof.
    public static func verify(json: JSONValue, context: PayloadVerificationContext) -> Result<Verified, PayloadFailure> {
        let payload: ProximityPayload
        do { payload = try ProximityPayload(json: json, version: context.version) } catch {
            return .failure(error.kind == .limitExceeded ? .tooLarge(error.message) : .malformed(error.message))
        }
        let senderKey: DIDKey
        do { senderKey = try DIDKey(parsing: payload.senderDID) } catch { return .failure(.wrongDID("senderDID: \(error.message)")) }
        guard senderKey.keyType == .p256 else { return .failure(.wrongDID("senderDID is not a P-256 did:key")) }
        if let expected = context.expectedSenderDID, expected != payload.senderDID {
            return .failure(.wrongDID("the payload names \(payload.senderDID), but the session proved \(expected)"))
        }
        // The signature covers the members exactly as received (minus the signature), canonicalised.
        var unsigned = json.objectValue!
        unsigned["payloadSignature"] = nil
        guard let signature = try? Base64.decode(payload.payloadSignature), signature.count == P256.signatureByteCount else {
            return .failure(.malformed("payloadSignature is not a base64 64-byte r‖s signature"))
        }
        guard senderKey.ecPublicKey()!.isValidRawSignature(signature, for: signingInput(unsigned: unsigned)) else {
            return .failure(.badSignature)
        }
        if payload.receiver != context.receiverDID { return .failure(.bindingMismatch(.receiver)) }
        let binding = payload.sessionBinding.flatMap { try? Base64.urlDecode($0) }
        if payload.sessionBinding != nil && binding == nil { return .failure(.malformed("sessionBinding is not base64url")) }
        if binding != context.sessionBinding { return .failure(.bindingMismatch(.session)) }
        if abs(payload.timestamp - context.now) > context.maximumSkew {
            return .failure(.staleTimestamp(timestamp: payload.timestamp, now: context.now))
        }
        guard let nonce = try? Base64.urlDecode(payload.nonce), nonce.count == nonceByteCount else {
            return .failure(.malformed("nonce is not \(nonceByteCount) bytes of base64url"))
        }
        if payload.ephemeralMessageHash != context.ephemeralMessage.map(messageHash) {
            return .failure(.bindingMismatch(.messageHash))
        }
        var pub: X25519.PublicKey?
        if let text = payload.pubKey {
            guard let bytes = try? Base64.decode(text), let key = try? X25519.PublicKey(rawRepresentation: bytes) else {
                return .failure(.malformed("pubKey is not a base64 32-byte X25519 key"))
            }
            pub = key
        }
        if let expected = context.peerStaticKey {
            guard let pub else { return .failure(.keyMismatch("the payload carries no pubKey")) }
            guard pub == expected else { return .failure(.keyMismatch("the payload's pubKey is not the long-term key the peer's identity proved")) }
        }
        var sign: Ed25519.PublicKey?
        if let text = payload.signPubKey {
            guard let bytes = try? Base64.decode(text), let key = try? Ed25519.PublicKey(rawRepresentation: bytes) else {
                return .failure(.malformed("signPubKey is not a base64 32-byte Ed25519 key"))
            }
            sign = key
        }
        var disclosure: SelectiveDisclosure.Disclosed?
        if let proof = payload.sdProof {
            switch SelectiveDisclosure.verify(proof, issuer: senderKey, version: context.version) {
            case .failure(.tooLarge(let why)): return .failure(.tooLarge(why))
            case .failure(let f): return .failure(.disclosureProof(f))
            case .success(let d): disclosure = d
            }
            for field in CardField.allCases {
                let claimed = payload.cardFields.value(of: field)
                let opened = d(disclosure, field)
                if opened == .null { return .failure(.disclosureProof(.nullDisclosure(field))) }
                if let claimed {
                    guard let opened else { return .failure(.fieldNotDisclosed(field)) }
                    guard opened == claimed else { return .failure(.disclosureMismatch(field)) }
                } else if opened != nil {
                    return .failure(.disclosureMismatch(field))
                }
            }
            // A photo must be one (§9): a square JPEG that decodes, within its limits, with no metadata.
            if let photo = payload.cardFields.photo, let why = Photo.problem(photo) { return .failure(.badPhoto(why)) }
            // A newer peer's fields: the card and the proof must agree on them too (then nothing keeps them).
            let opened = disclosure?.unknown ?? [:]
            for (name, value) in opened where value == .null { return .failure(.malformed("the proof discloses \(name) as null (absent)")) }
            if Set(opened.keys) != Set(payload.unknownCardFields.keys)
                || payload.unknownCardFields.members.contains(where: { opened[$0.key] != $0.value })
            {
                return .failure(.malformed("the card's fields this node does not know differ from those the disclosure proof opens"))
            }
        } else if context.requireDisclosureProof {
            return .failure(.missingDisclosureProof)
        }
        return .success(Verified(payload: payload, senderKey: senderKey, disclosure: disclosure, pubKey: pub, signPubKey: sign))
    }

    private static func d(_ disclosure: SelectiveDisclosure.Disclosed?, _ field: CardField) -> JSONValue? {
        disclosure?.fields[field]
    }
}
