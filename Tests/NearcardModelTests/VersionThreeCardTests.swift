import Foundation
import NearcardCrypto
import NearcardImage
import NearcardModel
import Testing

/// Exchange version 3's card (docs/PROTOCOL.md §9, §21): a disclosure proof of a fixed number of
/// digests, so the count tells nothing of what is shared; a newer peer's field is checked and set
/// aside, not refused; version 2 stays exactly what version-2 peers require.
@Suite struct VersionThreeCardTests {
    let sender = IdentityKeys.generate()
    let receiver = IdentityKeys.generate()
    let binding = Sodium.randomBytes(32)
    let now: Int64 = 1_795_000_000

    func context(version: Int) -> PayloadVerificationContext {
        PayloadVerificationContext(
            expectedSenderDID: sender.publicIdentity(name: nil).did, receiverDID: receiver.publicIdentity(name: nil).did,
            sessionBinding: binding, peerStaticKey: sender.x25519.publicKey, ephemeralMessage: nil, now: now, version: version)
    }

    static func digests(_ proof: String) throws -> [String] {
        let jwt = String(proof.split(separator: "~")[0])
        let claims = try JSONParser.parse(try Base64.urlDecode(String(jwt.split(separator: ".")[1])))
        return (claims["_sd"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// Whatever a person shares — the name alone or every field — a version-3 proof holds 16 distinct
    /// digests; version 2 holds 7, one a version-2 field.
    @Test func theDigestCountSaysNothingOfWhatIsShared() throws {
        var shares: [Set<CardField>] = [[.name], [.name, .email], Set(CardField.allCases)]
        shares += CardField.allCases.map { [.name, $0] }
        for fields in shares {
            let proof = try SelectiveDisclosure.issue(card: ada, disclosing: fields, signer: sender.p256, issuedAt: now, version: 3)
            let digests = try Self.digests(proof)
            #expect(digests.count == SelectiveDisclosure.slots && Set(digests).count == digests.count, "\(fields)")
            #expect(digests.allSatisfy { $0.utf8.count == 43 })
            let opened = try SelectiveDisclosure.verify(proof, issuer: sender.p256.didKey, version: 3).get()
            #expect(Set(opened.fields.keys) == fields.filter { ada.value(of: $0) != nil })
            #expect(opened.hiddenCount == SelectiveDisclosure.slots - opened.fields.count)
            // The same proof is not a version-2 one, nor the reverse.
            guard case .failure = SelectiveDisclosure.verify(proof, issuer: sender.p256.didKey, version: 2) else {
                Issue.record("a version-3 proof passed as version 2")
                continue
            }
        }
        let v2 = try SelectiveDisclosure.issue(card: ada, disclosing: [.name], signer: sender.p256, issuedAt: now)
        #expect(try Self.digests(v2).count == 7)
        guard case .failure(.malformed(let why)) = SelectiveDisclosure.verify(v2, issuer: sender.p256.didKey, version: 3) else {
            Issue.record("a version-2 proof passed as version 3")
            return
        }
        #expect(why.contains("exactly 16 digests"))
    }

    /// A payload made for a version-2 session carries only the seven version-2 fields, whatever is
    /// shared; one for version 3 carries every shared field.
    @Test func aVersionTwoPeerIsSentOnlyTheFieldsItKnows() throws {
        let all = SharingPolicy(fields: Set(CardField.allCases))
        for version in ExchangeVersions.spoken {
            let p = try ProximityPayload.make(
                card: ada, policy: all, keys: sender, receiver: receiver.publicIdentity(name: nil).did, sessionBinding: binding,
                ephemeralMessage: nil, sealedRoute: nil, now: now, version: version)
            #expect(p.cardFields.presentFields.allSatisfy { $0.row.since <= version })
            #expect(try Self.digests(p.sdProof!).count == SelectiveDisclosure.digestCount(version: version))
            let verified = try ProximityPayload.verify(json: p.json, context: context(version: version)).get()
            #expect(verified.payload.cardFields == ada.filtered(to: Set(CardField.fields(ofVersion: version))))
        }
    }

    /// A proof and card from a newer peer, disclosing `extra` beside the name: signed like any other.
    func newerPeersPayload(extra: [String: JSONValue], inCard: [String: JSONValue]? = nil, digests: Int = 16) throws -> JSONValue {
        let did = sender.publicIdentity(name: nil).did
        var disclosures: [String] = []
        for (name, value) in [("name", JSONValue.string("Nova Newer"))] + extra.sorted(by: { $0.key < $1.key }) {
            disclosures.append(Base64.urlEncode(JCS.canonicalize([.string(Base64.urlEncode(Sodium.randomBytes(16))), .string(name), value])))
        }
        var sd = disclosures.map(SelectiveDisclosure.digest(of:))
        while sd.count < digests { sd.append(Base64.urlEncode(Sodium.randomBytes(32))) }
        let claims: JSONValue = [
            "iss": .string(did), "iat": .number(Double(now)), "_sd_alg": "sha-256", "_sd": .array(sd.sorted().map { .string($0) }),
        ]
        let jwt = try CompactJWS.sign(payload: JCS.canonicalize(claims), header: ["typ": .string(SelectiveDisclosure.typ)], signer: sender.p256)
        var card: JSONObject = ["name": "Nova Newer"]
        for (k, v) in inCard ?? extra { card[k] = v }
        var o: JSONObject = [
            "version": 1, "cardFields": .object(card), "senderDID": .string(did), "timestamp": .number(Double(now)),
            "sdProof": .string(([jwt] + disclosures).joined(separator: "~") + "~"),
            "pubKey": .string(Base64.encode(sender.x25519.publicKey.rawRepresentation)),
            "signPubKey": .string(Base64.encode(sender.ed25519.publicKey.rawRepresentation)),
            "receiver": .string(receiver.publicIdentity(name: nil).did), "nonce": .string(Base64.urlEncode(Sodium.randomBytes(16))),
            "sessionBinding": .string(Base64.urlEncode(binding)),
        ]
        o["payloadSignature"] = .string(Base64.encode(try sender.p256.signature(for: ProximityPayload.signingInput(unsigned: o))))
        return .object(o)
    }

    /// Version 3: a field this node does not know is checked against the proof, then set aside (the
    /// card keeps nothing of it); version 2 refuses it as it always did.
    @Test func aNewerPeersFieldIsIgnoredInVersionThreeAndRefusedInVersionTwo() throws {
        let json = try newerPeersPayload(extra: ["favouriteColour": "teal"])
        let verified = try ProximityPayload.verify(json: json, context: context(version: 3)).get()
        #expect(verified.payload.cardFields == Card(name: "Nova Newer"))
        #expect(verified.payload.cardFields.json.objectValue?.keys == ["name"], "nothing of the unknown field is kept in the card")
        #expect(verified.disclosure?.unknown == ["favouriteColour": "teal"])
        #expect(failure(ProximityPayload.verify(json: json, context: context(version: 2))) != nil)

        // The card and the proof must still agree on it: a different value, a value the proof does not
        // open, or a disclosure the card does not carry is refused.
        for bad in [
            try newerPeersPayload(extra: ["favouriteColour": "teal"], inCard: ["favouriteColour": "red"]),
            try newerPeersPayload(extra: [:], inCard: ["favouriteColour": "teal"]),
            try newerPeersPayload(extra: ["favouriteColour": "teal"], inCard: [:]),
            try newerPeersPayload(extra: ["favouriteColour": .null], inCard: ["favouriteColour": .null]),
            try newerPeersPayload(extra: ["favouriteColour": "teal"], digests: 17),
        ] {
            #expect(failure(ProximityPayload.verify(json: bad, context: context(version: 3))) != nil, "\(bad)")
        }
    }

    /// A version-2 payload that carries a field of a later version is refused (a version-2 node would).
    @Test func aVersionTwoCardCarriesNoLaterField() throws {
        for field in CardField.allCases where field.row.since > 2 {
            var card = Card(name: "Nova")
            let photo = try JPEG.encodeRGB(width: 16, height: 16, pixels: [UInt8](repeating: 90, count: 16 * 16 * 3), quality: 80)
            try card.set(field, typed: [field.kind == .photo ? Card.dataURI(photo: photo) : "x"])
            let p = try ProximityPayload.make(
                card: card, policy: SharingPolicy(fields: Set(CardField.allCases)), keys: sender, receiver: receiver.publicIdentity(name: nil).did,
                sessionBinding: binding, ephemeralMessage: nil, sealedRoute: nil, now: now, version: 3)
            #expect(failure(ProximityPayload.verify(json: p.json, context: context(version: 2))) != nil, "\(field)")
        }
    }
}
