public import Foundation
public import NearcardCrypto

/// How a contact came to be (the iOS app's `ContactSource`, in Nearcard's spelling).
public enum ContactSource: String, Sendable, CaseIterable {
    case qrCode, proximity, manual

    /// The iOS app's raw value ("QR Code", "Proximity", "Manual").
    public var iosName: String {
        switch self {
        case .qrCode: "QR Code"
        case .proximity: "Proximity"
        case .manual: "Manual"
        }
    }
}

/// The iOS app's `VerificationStatus`.
public enum VerificationStatus: String, Sendable, CaseIterable {
    case verified, unverified, failed, pending
}

/// A contact record: the iOS app's `ContactEntity`, with the peer's disclosed card.
public struct Contact: Sendable, Equatable {
    /// Upper-case UUID (the iOS convention).
    public var id: String
    public var cardId: String?
    public var card: Card
    public var source: ContactSource
    public var verificationStatus: VerificationStatus
    public var receivedAt: Date
    public var lastInteraction: Date?
    public var tags: [String]
    public var notes: String?
    /// The peer's sealed route to them (base64), opened only by our X25519 key.
    public var sealedRoute: String?
    public var pubKey: String?
    public var signPubKey: String?
    /// The peer's DID (`didPublicKey` in the iOS model).
    public var didPublicKey: String?
    /// Their payload signature and ours, base64 raw r‖s.
    public var exchangeSignature: String?
    public var myExchangeSignature: String?
    public var exchangeTimestamp: Date?
    public var myEphemeralMessage: String?
    public var theirEphemeralMessage: String?
    public var graphExportEdgeId: String?
    public var credentialIds: [String]
    public var declaredProofClaims: [String]
    /// The trusted group whose Semaphore proof this contact's card carried (verified and bound to its DID).
    public var memberOf: String?
    /// What the group proof this contact's card carried was found to be when it was received (trusted,
    /// not a group you trust, or failing, and why), as decided then; nil when the card carried none.
    public var groupVerdict: String?
    /// The exchange version the contact's card last came in (docs/PROTOCOL.md §21): 2 for a peer that
    /// speaks only that — its card is of the older kind, the seven version-2 fields — 3 otherwise; nil
    /// for a card from a code, a file or typed by hand.
    public var exchangeVersion: Int?

    public init(
        id: String = Sodium.randomUUIDString(), cardId: String? = nil, card: Card, source: ContactSource,
        verificationStatus: VerificationStatus, receivedAt: Date, lastInteraction: Date? = nil, tags: [String] = [],
        notes: String? = nil, sealedRoute: String? = nil, pubKey: String? = nil, signPubKey: String? = nil,
        didPublicKey: String? = nil, exchangeSignature: String? = nil, myExchangeSignature: String? = nil,
        exchangeTimestamp: Date? = nil, myEphemeralMessage: String? = nil, theirEphemeralMessage: String? = nil,
        graphExportEdgeId: String? = nil, credentialIds: [String] = [], declaredProofClaims: [String] = [],
        memberOf: String? = nil, groupVerdict: String? = nil, exchangeVersion: Int? = nil
    ) {
        self.exchangeVersion = exchangeVersion
        self.id = id
        self.cardId = cardId
        self.card = card
        self.source = source
        self.verificationStatus = verificationStatus
        self.receivedAt = receivedAt
        self.lastInteraction = lastInteraction
        self.tags = tags
        self.notes = notes
        self.sealedRoute = sealedRoute
        self.pubKey = pubKey
        self.signPubKey = signPubKey
        self.didPublicKey = didPublicKey
        self.exchangeSignature = exchangeSignature
        self.myExchangeSignature = myExchangeSignature
        self.exchangeTimestamp = exchangeTimestamp
        self.myEphemeralMessage = myEphemeralMessage
        self.theirEphemeralMessage = theirEphemeralMessage
        self.graphExportEdgeId = graphExportEdgeId
        self.credentialIds = credentialIds
        self.declaredProofClaims = declaredProofClaims
        self.memberOf = memberOf
        self.groupVerdict = groupVerdict
    }

    public var name: String { card.name }

    /// What a face says of a card that came in an older exchange version than this node's highest
    /// (nil otherwise): that it is of the older kind, and which fields such a card cannot hold.
    public var olderCardNote: String? {
        guard let version = exchangeVersion, version < ExchangeVersions.highest else { return nil }
        let missing = CardField.allCases.filter { $0.row.since > version }.map { $0.label.lowercased() }
        return "of the older kind: their Nearcard speaks exchange version \(version)"
            + (missing.isEmpty ? "" : ", whose cards carry no \(missing.joined(separator: " or "))")
    }

    /// The tag on a contact met through a QR invitation (no code was compared: the key was pinned).
    public static let invitedTag = "invited by QR"

    /// The fingerprint of the keys pinned for this contact (nil for contacts without them).
    public var fingerprint: String? {
        guard let did = didPublicKey, let key = try? DIDKey(parsing: did),
            let pub = pubKey.flatMap({ try? X25519.PublicKey(rawRepresentation: Base64.decode($0)) }),
            let sign = signPubKey.flatMap({ try? Ed25519.PublicKey(rawRepresentation: Base64.decode($0)) })
        else { return nil }
        return PublicIdentity.fingerprint(didKey: key, pubKey: pub, signPubKey: sign)
    }

    /// `nearcard contacts show --json`: every member, absent optionals as null.
    public var json: JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        func date(_ d: Date?) -> JSONValue { d.map { .string(ISO8601.string($0)) } ?? .null }
        var o = JSONObject()
        o["id"] = .string(id)
        o["cardId"] = opt(cardId)
        for field in CardField.displayOrder {
            // Every field is present: an absent list as [], any other absent field as null.
            o[field.rawValue] = card.value(of: field) ?? ([.socialProfiles, .skills].contains(field.kind) ? .array([]) : .null)
        }
        o["source"] = .string(source.rawValue)
        o["verificationStatus"] = .string(verificationStatus.rawValue)
        o["receivedAt"] = .string(ISO8601.string(receivedAt))
        o["lastInteraction"] = date(lastInteraction)
        o["tags"] = .array(tags.map { .string($0) })
        o["notes"] = opt(notes)
        o["didPublicKey"] = opt(didPublicKey)
        o["pubKey"] = opt(pubKey)
        o["signPubKey"] = opt(signPubKey)
        o["sealedRoute"] = opt(sealedRoute)
        o["exchangeSignature"] = opt(exchangeSignature)
        o["myExchangeSignature"] = opt(myExchangeSignature)
        o["exchangeTimestamp"] = date(exchangeTimestamp)
        o["myEphemeralMessage"] = opt(myEphemeralMessage)
        o["theirEphemeralMessage"] = opt(theirEphemeralMessage)
        o["graphExportEdgeId"] = opt(graphExportEdgeId)
        o["credentialIds"] = .array(credentialIds.map { .string($0) })
        o["declaredProofClaims"] = .array(declaredProofClaims.map { .string($0) })
        o["memberOf"] = opt(memberOf)
        o["groupVerdict"] = opt(groupVerdict)
        o["exchangeVersion"] = exchangeVersion.map { .number(Double($0)) } ?? .null
        o["olderCard"] = opt(olderCardNote)
        return .object(o)
    }

    /// The edge id both sides of an exchange compute alike: the first 16 bytes of
    /// SHA-256("nearcard/graph-edge/v1" ‖ 0x00 ‖ lower DID ‖ 0x0A ‖ higher DID ‖ 0x0A ‖ session binding), hex.
    public static func graphEdgeID(_ a: String, _ b: String, sessionBinding: [UInt8]) -> String {
        let (lo, hi) = a < b ? (a, b) : (b, a)
        let input = Array("nearcard/graph-edge/v1".utf8) + [0] + Array(lo.utf8) + [0x0A] + Array(hi.utf8) + [0x0A] + sessionBinding
        return Hex.encode(SHA256.hash(input).prefix(16))
    }

    /// The social-graph entry: hex SHA-256 of the DID.
    public static func socialGraphHash(did: String) -> String { Hex.encode(SHA256.hash(Array(did.utf8))) }
}
