import Foundation
import NearcardCrypto
import NearcardModel
import Testing

let ada = Card(
    name: "Ada Lovelace", email: "ada@example.org", phone: "+44 20 7946 0000", company: "Analytical Engines",
    title: "Programmer", socialNetworks: [SocialProfile(platform: "mastodon", username: "ada", url: "https://example.social/@ada")],
    skills: [Skill(name: "Mathematics", category: "science", proficiency: "expert")])

/// A sender, a receiver and one session's binding, with a valid payload between them.
struct Exchange {
    let sender = IdentityKeys.generate()
    let receiver = IdentityKeys.generate()
    let binding = Sodium.randomBytes(32)
    let now: Int64 = 1_795_000_000
    let policy = SharingPolicy(fields: [.name, .company, .title])

    var receiverDID: String { receiver.publicIdentity(name: nil).did }

    func payload(message: String? = "see you at the talk") throws -> ProximityPayload {
        try ProximityPayload.make(
            card: ada, policy: policy, keys: sender, receiver: receiverDID, sessionBinding: binding,
            ephemeralMessage: message, sealedRoute: nil, now: now)
    }

    func context(message: String? = "see you at the talk") -> PayloadVerificationContext {
        PayloadVerificationContext(
            expectedSenderDID: sender.publicIdentity(name: nil).did, receiverDID: receiverDID,
            sessionBinding: binding, peerStaticKey: sender.x25519.publicKey, ephemeralMessage: message, now: now)
    }

    /// Re-signs a (tampered) payload object with `keys`, as a dishonest sender would.
    func resign(_ object: JSONObject, with keys: IdentityKeys? = nil) throws -> JSONValue {
        var o = object
        o["payloadSignature"] = nil
        let sig = try (keys ?? sender).p256.signature(for: ProximityPayload.signingInput(unsigned: o))
        o["payloadSignature"] = .string(Base64.encode(sig))
        return .object(o)
    }
}

func failure(_ r: Result<ProximityPayload.Verified, PayloadFailure>) -> PayloadFailure? {
    if case .failure(let f) = r { return f }
    return nil
}

@Suite struct PayloadTests {
    @Test func validPayloadVerifiesAndDisclosesOnlyThePolicy() throws {
        let x = Exchange()
        let p = try x.payload()
        #expect(p.cardFields == ada.filtered(to: x.policy.fields))
        #expect(p.cardFields.email == nil && p.cardFields.phone == nil)
        let verified = try ProximityPayload.verify(json: p.json, context: x.context()).get()
        #expect(verified.payload == p)
        #expect(verified.disclosure?.hiddenCount == 4, "7 committed fields, 3 disclosed")
        #expect(verified.pubKey == x.sender.x25519.publicKey)
        #expect(verified.signPubKey == x.sender.ed25519.publicKey)
    }

    @Test func roundTripsThroughCanonicalJSON() throws {
        let p = try Exchange().payload()
        let text = p.json.canonicalText
        let back = try ProximityPayload(json: JSONParser.parse(text))
        #expect(back == p)
        #expect(back.json.canonicalText == text)
        #expect(try Card(json: JSONParser.parse(ada.json.canonicalText)) == ada)
    }

    /// Each member changed without re-signing: the signature fails.
    @Test(arguments: [
        "cardFields", "senderDID", "timestamp", "sdProof", "pubKey", "signPubKey", "receiver", "nonce",
        "sessionBinding", "ephemeralMessageHash", "version",
    ])
    func unsignedChangeBreaksTheSignature(member: String) throws {
        let x = Exchange()
        var o = try x.payload().json.objectValue!
        switch member {
        case "cardFields": o[member] = ["name": "Mallory"]
        case "timestamp": o[member] = .number(Double(x.now - 1))
        case "senderDID": o[member] = .string(IdentityKeys.generate().publicIdentity(name: nil).did)
        case "version": o[member] = 2
        case "nonce": o[member] = .string(Base64.urlEncode(Sodium.randomBytes(16)))
        default: o[member] = .string("AAAA")
        }
        let f = failure(ProximityPayload.verify(json: .object(o), context: x.context()))
        #expect(f != nil)
        if member == "senderDID" {
            #expect(f == .wrongDID("the payload names \(o["senderDID"]!.stringValue!), but the session proved \(x.sender.publicIdentity(name: nil).did)"))
        } else if member == "version" {
            #expect(f?.code == "malformed")
        } else {
            #expect(f == .badSignature, "\(member): \(String(describing: f))")
        }
    }

    @Test func alteredSignatureFails() throws {
        let x = Exchange()
        var o = try x.payload().json.objectValue!
        var sig = try Base64.decode(o["payloadSignature"]!.stringValue!)
        sig[5] ^= 0x40
        o["payloadSignature"] = .string(Base64.encode(sig))
        #expect(failure(ProximityPayload.verify(json: .object(o), context: x.context())) == .badSignature)
    }

    /// A dishonest sender re-signs its changes: each gives its own specific reason.
    @Test func resignedTamperingGivesTheSpecificReason() throws {
        let x = Exchange()
        let base = try x.payload().json.objectValue!
        func check(_ change: (inout JSONObject) -> Void, context: PayloadVerificationContext? = nil) throws -> PayloadFailure? {
            var o = base
            change(&o)
            return failure(ProximityPayload.verify(json: try x.resign(o), context: context ?? x.context()))
        }
        // The card says something the disclosure proof does not commit to.
        #expect(
            try check { $0["cardFields"] = .object(["name": "Ada Lovelace", "company": "Evil Corp", "title": "Programmer"]) } == .disclosureMismatch(.company))
        // The card carries a field the proof does not open.
        #expect(
            try check {
                $0["cardFields"] = .object(["name": "Ada Lovelace", "company": "Analytical Engines", "title": "Programmer", "email": "ada@example.org"])
            } == .fieldNotDisclosed(.email))
        // A field the proof opens is missing from the card.
        #expect(try check { $0["cardFields"] = .object(["name": "Ada Lovelace", "company": "Analytical Engines"]) } == .disclosureMismatch(.title))
        #expect(try check { $0["timestamp"] = .number(Double(x.now - 3600)) } == .staleTimestamp(timestamp: x.now - 3600, now: x.now))
        #expect(try check { $0["receiver"] = .string(IdentityKeys.generate().publicIdentity(name: nil).did) } == .bindingMismatch(.receiver))
        #expect(try check { $0["receiver"] = nil } == .bindingMismatch(.receiver))
        #expect(try check { $0["sessionBinding"] = .string(Base64.urlEncode(Sodium.randomBytes(32))) } == .bindingMismatch(.session))
        #expect(try check { $0["ephemeralMessageHash"] = .string(ProximityPayload.messageHash("something else")) } == .bindingMismatch(.messageHash))
        #expect(
            try check { $0["pubKey"] = .string(Base64.encode(X25519.PrivateKey().publicKey.rawRepresentation)) }
                == .keyMismatch("the payload's pubKey is not the long-term key the peer's identity proved"))
        #expect(try check { $0["pubKey"] = nil } == .keyMismatch("the payload carries no pubKey"))
        #expect(try check { $0["sdProof"] = nil } == .missingDisclosureProof)
        #expect(try check { $0["nonce"] = "short" }?.code == "malformed")
        #expect(try check { $0["extra"] = 1 }?.code == "malformed")
        // A disclosure proof made by someone else.
        let other = try SelectiveDisclosure.issue(card: ada, disclosing: [.name, .company, .title], signer: IdentityKeys.generate().p256, issuedAt: x.now)
        #expect(try check { $0["sdProof"] = .string(other) }?.code == "disclosure_proof")
        // Signed by a key that is not the sender's DID.
        var o = base
        o["timestamp"] = .number(Double(x.now))
        #expect(failure(ProximityPayload.verify(json: try x.resign(o, with: IdentityKeys.generate()), context: x.context())) == .badSignature)
    }

    @Test func messageBindingAndLimits() throws {
        let x = Exchange()
        let p = try x.payload(message: nil)
        #expect(p.ephemeralMessageHash == nil)
        #expect(failure(ProximityPayload.verify(json: p.json, context: x.context(message: "late addition"))) == .bindingMismatch(.messageHash))
        #expect(ProximityPayload.messageProblem(String(repeating: "é", count: 140)) == nil)
        #expect(ProximityPayload.messageProblem(String(repeating: "a", count: 141)) != nil)
        #expect(ProximityPayload.messageProblem("bell\u{07}") != nil)
    }

    @Test func replayedIntoAnotherSessionFails() throws {
        let x = Exchange()
        let p = try x.payload()
        var ctx = x.context()
        ctx.sessionBinding = Sodium.randomBytes(32)
        #expect(failure(ProximityPayload.verify(json: p.json, context: ctx)) == .bindingMismatch(.session))
    }
}

@Suite struct SelectiveDisclosureTests {
    /// RFC 9901's published disclosure: our digest function reproduces its digest.
    @Test func rfc9901DigestVector() throws {
        let v =
            (try JSONParser.parse(
                String(
                    contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                        .deletingLastPathComponent().appendingPathComponent("Vectors/jws/rfc-vectors.json"), encoding: .utf8)))["sd_jwt_rfc9901_disclosure"]!
        #expect(SelectiveDisclosure.digest(of: v["disclosure_b64url"]!.stringValue!) == v["digest_sha256_b64url"]!.stringValue!)
    }

    @Test func recipientRecomputesDisclosedAndLearnsOnlyTheHiddenCount() throws {
        let keys = IdentityKeys.generate()
        let proof = try SelectiveDisclosure.issue(card: ada, disclosing: [.name, .email], signer: keys.p256, issuedAt: 1)
        let parts = proof.split(separator: "~", omittingEmptySubsequences: false)
        #expect(parts.count == 4, "JWT, two disclosures, trailing empty part")
        // The hidden values appear nowhere in the proof.
        let decodedAll =
            parts.dropFirst().compactMap { try? Base64.urlDecode(String($0)) }.map { String(decoding: $0, as: UTF8.self) }.joined()
            + String(decoding: (try? Base64.urlDecode(String(parts[0].split(separator: ".")[1]))) ?? [], as: UTF8.self)
        #expect(!decodedAll.contains("Analytical") && !decodedAll.contains("+44"))
        let d = try SelectiveDisclosure.verify(proof, issuer: DIDKey(keys.p256.publicKey)).get()
        #expect(d.fields == [.name: "Ada Lovelace", .email: "ada@example.org"])
        #expect(d.hiddenCount == 5)
        // A card with fewer fields still commits to 7: absent fields are hidden like present ones.
        let sparse = try SelectiveDisclosure.issue(card: Card(name: "X"), disclosing: [.name], signer: keys.p256, issuedAt: 1)
        #expect(try SelectiveDisclosure.verify(sparse, issuer: DIDKey(keys.p256.publicKey)).get().hiddenCount == 6)
    }

    @Test func forgedOrSwappedDisclosuresFail() throws {
        let keys = IdentityKeys.generate()
        let issuer = DIDKey(keys.p256.publicKey)
        let proof = try SelectiveDisclosure.issue(card: ada, disclosing: [.name], signer: keys.p256, issuedAt: 1)
        // A disclosure the issuer never committed to.
        let forged = proof + SelectiveDisclosure.makeDisclosure(salt: "AAAAAAAAAAAAAAAAAAAAAA", field: .title, value: "CEO") + "~"
        #expect(SelectiveDisclosure.verify(forged, issuer: issuer) == .failure(.unknownDisclosure))
        // Another issuer's DID.
        #expect(SelectiveDisclosure.verify(proof, issuer: DIDKey(P256.PrivateKey().publicKey)).isFailure)
        // Repeating a disclosure.
        let disclosure = proof.split(separator: "~")[1]
        #expect(SelectiveDisclosure.verify(proof + disclosure + "~", issuer: issuer).isFailure)
        // No trailing ~.
        #expect(SelectiveDisclosure.verify(String(proof.dropLast()), issuer: issuer).isFailure)
    }
}

extension Result {
    var isFailure: Bool { if case .failure = self { true } else { false } }
}
