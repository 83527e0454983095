import Foundation
import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

/// docs/PROTOCOL.md's worked example: fixed keys → handshake bytes → hashes → signed bytes.
/// The test recomputes every value from the fixed inputs and compares it with the JSON block in the
/// document, so the document cannot drift from the code. (ECDSA signatures are randomised: for
/// those the document gives one valid example, and the test checks that it verifies.)
@Suite struct WorkedExampleTests {
    static let docURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md")

    /// 32 fixed bytes: SHA-256 of a label.
    static func fixed(_ label: String) -> [UInt8] { SHA256.hash(Array("nearcard worked example: \(label)".utf8)) }

    struct Side {
        let keys: IdentityKeys
        /// This session's Noise static key (§5: per session, not the long-term `pubKey`).
        let sessionStatic: X25519.PrivateKey
        let ephemeral: X25519.PrivateKey
        /// 16 bytes: the presence key (§3), which seals a responder's identity for its contacts (§6.2).
        let presenceKey: [UInt8]
        let sasNonce: [UInt8]
        let name: String

        init(_ role: String, name: String) throws {
            keys = IdentityKeys(
                p256: try P256.PrivateKey(rawRepresentation: SecureBytes(WorkedExampleTests.fixed("\(role) p256"))),
                x25519: try X25519.PrivateKey(secret: SecureBytes(WorkedExampleTests.fixed("\(role) x25519"))),
                ed25519: try Ed25519.PrivateKey(seed: SecureBytes(WorkedExampleTests.fixed("\(role) ed25519"))))
            sessionStatic = try X25519.PrivateKey(secret: SecureBytes(WorkedExampleTests.fixed("\(role) session static")))
            ephemeral = try X25519.PrivateKey(secret: SecureBytes(WorkedExampleTests.fixed("\(role) ephemeral")))
            presenceKey = Array(WorkedExampleTests.fixed("\(role) presence key").prefix(16))
            sasNonce = WorkedExampleTests.fixed("\(role) sas nonce")
            self.name = name
        }

        var identity: PublicIdentity { keys.publicIdentity(name: name) }

        /// The identity, unsigned (§6.1).
        var sessionIdentity: ExchangeMessage.Identity {
            ExchangeMessage.Identity(
                did: identity.did, name: name, pubKey: keys.x25519.publicKey.rawRepresentation,
                signPubKey: keys.ed25519.publicKey.rawRepresentation)
        }
    }

    /// Everything the worked example states, computed.
    static func compute() throws -> (JSONValue, Side, Side) {
        let ada = try Side("initiator", name: "Ada")
        let grace = try Side("responder", name: "Grace")
        var i = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: ada.sessionStatic, ephemeralKey: ada.ephemeral)
        var r = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: grace.sessionStatic, ephemeralKey: grace.ephemeral)
        let m1 = try i.writeMessage(payload: SessionKind.exchange.tag)
        _ = try r.readMessage(m1)
        let m2 = try r.writeMessage()
        _ = try i.readMessage(m2)
        let m3 = try i.writeMessage()
        _ = try r.readMessage(m3)
        let h = i.handshakeHash
        var ti = try i.split()
        let firstTransport = try ti.encrypt(ExchangeMessage.done.encoded)

        let commit = SAS.commitment(handshakeHash: h, nonce: ada.sasNonce)
        let signedI = ada.sessionIdentity.signedObject(role: .initiator, handshakeHash: h)
        let signedR = grace.sessionIdentity.signedObject(role: .responder, handshakeHash: h)
        let recallKey = Recall.key(presenceKey: grace.presenceKey, handshakeHash: h).withUnsafeBytes { Array($0) }
        let sas = SAS.value(handshakeHash: h, initiatorNonce: ada.sasNonce, responderNonce: grace.sasNonce)

        // A payload from Grace to Ada without the randomised parts (SD-JWT, sealed route), fixed nonce.
        let payload = ProximityPayload(
            cardFields: Card(name: "Grace", company: "US Navy"), senderDID: grace.identity.did, timestamp: 1_795_000_000,
            pubKey: Base64.encode(grace.keys.x25519.publicKey.rawRepresentation), signPubKey: Base64.encode(grace.keys.ed25519.publicKey.rawRepresentation),
            receiver: ada.identity.did, nonce: Base64.urlEncode(fixed("payload nonce").prefix(16)), sessionBinding: Base64.urlEncode(h),
            ephemeralMessageHash: ProximityPayload.messageHash("Hello, Ada"), payloadSignature: "")
        let payloadInput = ProximityPayload.signingInput(unsigned: payload.unsignedJSON)

        // A disclosure with a fixed salt, and a route record with its (deterministic) Ed25519 signature.
        let disclosure = SelectiveDisclosure.makeDisclosure(salt: Base64.urlEncode(fixed("salt").prefix(16)), field: .company, value: "US Navy")
        let route = RouteRecord(
            did: grace.identity.did, pubKey: grace.keys.x25519.publicKey, signPubKey: grace.keys.ed25519.publicKey,
            fingerprint: grace.identity.fingerprint, mailboxToken: fixed("mailbox token"), recipient: ada.identity.did,
            issuedAt: 1_795_000_000, expiresAt: 1_795_000_000 + RouteRecord.defaultValidity,
            hints: [RouteRecord.Hint(host: "192.0.2.10", port: 7447)])
        let routeSignature = grace.keys.ed25519.signature(for: SealedRoute.signingInput(route))

        // Version 3 (§21): the hello says 3 (here without identity: a contact asking Grace to prove
        // herself first), sent as the first transport message; Grace's card's proof holds 16 digests, two
        // real ones (name and company, fixed salts) and 14 decoys (fixed here, random in practice).
        let helloV3 = ExchangeMessage.hello(.init(sasCommit: commit, identity: nil, version: 3))
        var ti3 = try i.split()
        let helloV3Frame = try ti3.encrypt(helloV3.encoded)
        let v3Card = Card(name: "Grace", company: "US Navy")
        let v3Disclosures = [CardField.name, .company].map { field in
            SelectiveDisclosure.makeDisclosure(
                salt: Base64.urlEncode(fixed("salt \(field.rawValue)").prefix(16)), field: field, value: v3Card.value(of: field)!)
        }
        let v3Digests = v3Disclosures.map(SelectiveDisclosure.digest(of:)) + (1...14).map { Base64.urlEncode(fixed("decoy \($0)")) }
        let v3Claims: JSONValue = [
            "iss": .string(grace.identity.did), "iat": 1_795_000_000, "_sd_alg": "sha-256", "_sd": .array(v3Digests.sorted().map { .string($0) }),
        ]

        func party(_ s: Side) -> JSONValue {
            [
                "did": .string(s.identity.did), "pubKey": .string(Base64.encode(s.identity.pubKey.rawRepresentation)),
                "signPubKey": .string(Base64.encode(s.identity.signPubKey.rawRepresentation)), "fingerprint": .string(s.identity.fingerprint),
            ]
        }
        let example: JSONValue = [
            "initiator": party(ada),
            "responder": party(grace),
            "noise": [
                "message1": .string(Hex.encode(m1)), "message2": .string(Hex.encode(m2)), "message3": .string(Hex.encode(m3)),
                "handshakeHash": .string(Hex.encode(h)), "firstTransportMessage({\"type\":\"done\"})": .string(Hex.encode(firstTransport)),
            ],
            "identity": ["initiatorSignedObject": .string(signedI.canonicalText), "responderSignedObject": .string(signedR.canonicalText)],
            "recall": ["responderPresenceKey": .string(Base64.urlEncode(grace.presenceKey)), "sealingKey": .string(Hex.encode(recallKey))],
            "sas": ["initiatorCommitment": .string(Hex.encode(commit)), "value": .number(Double(sas)), "display": .string(SAS.display(sas))],
            "payload": [
                "signingInput": .string(String(decoding: payloadInput, as: UTF8.self).replacingOccurrences(of: "\u{0}", with: "\\u0000")),
                "signingInputSHA256": .string(Hex.encode(SHA256.hash(payloadInput))),
            ],
            "disclosure": ["disclosure": .string(disclosure), "digest": .string(SelectiveDisclosure.digest(of: disclosure))],
            "route": ["signedRecord": .string(route.json.canonicalText), "signature": .string(Base64.encode(routeSignature))],
            "graphEdgeID": .string(Contact.graphEdgeID(ada.identity.did, grace.identity.did, sessionBinding: h)),
            "version3": [
                "hello": .string(String(decoding: helloV3.encoded, as: UTF8.self)), "helloFrame": .string(Hex.encode(helloV3Frame)),
                "cardFields": v3Card.json, "disclosures": .array(v3Disclosures.map { .string($0) }),
                "sdClaims": .string(v3Claims.canonicalText),
            ],
        ]
        return (example, ada, grace)
    }

    /// The JSON block between <!-- worked-example --> and the end of its code fence.
    static func documented() throws -> JSONValue {
        let text = try String(contentsOf: docURL, encoding: .utf8)
        guard let marker = text.range(of: "<!-- worked-example -->"),
            let open = text.range(of: "```json\n", range: marker.upperBound..<text.endIndex),
            let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex)
        else {
            throw LabeledError("docs/PROTOCOL.md has no worked-example JSON block")
        }
        return try JSONParser.parse(String(text[open.upperBound..<close.lowerBound]))
    }

    struct LabeledError: Error {
        let m: String
        init(_ m: String) { self.m = m }
    }

    @Test func documentMatchesTheCode() throws {
        let (computed, ada, grace) = try Self.compute()
        if let path = ProcessInfo.processInfo.environment["NEARCARD_PRINT_WORKED_EXAMPLE"] {
            try (computed.prettyText + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        var doc = try Self.documented()
        // Example ECDSA signatures in the document: they must verify over the documented objects.
        let exampleSigs = doc["exampleSignatures"]
        if var o = doc.objectValue {
            o["exampleSignatures"] = nil
            doc = .object(o)
        }
        for (key, value) in computed.objectValue! {
            #expect(doc[key] == value, "docs/PROTOCOL.md worked example: \"\(key)\" differs from the code")
        }
        let h = try Hex.decode(computed["noise"]!["handshakeHash"]!.stringValue!)
        let signedI = ExchangeMessage.Identity.signingInput(try JSONParser.parse(computed["identity"]!["initiatorSignedObject"]!.stringValue!))
        let signedR = ExchangeMessage.Identity.signingInput(try JSONParser.parse(computed["identity"]!["responderSignedObject"]!.stringValue!))
        // The signed objects carry this session's h (§6.1), as the document shows it.
        #expect(try JSONParser.parse(computed["identity"]!["initiatorSignedObject"]!.stringValue!)["handshakeHash"] == .string(Base64.urlEncode(h)))
        #expect(try JSONParser.parse(computed["identity"]!["responderSignedObject"]!.stringValue!)["handshakeHash"] == .string(Base64.urlEncode(h)))
        let sigI = try Base64.decode(try #require(exampleSigs?["initiatorIdentity"]?.stringValue))
        let sigR = try Base64.decode(try #require(exampleSigs?["responderIdentity"]?.stringValue))
        #expect(ada.keys.p256.publicKey.isValidRawSignature(sigI, for: signedI))
        #expect(grace.keys.p256.publicKey.isValidRawSignature(sigR, for: signedR))
        let payloadHash = try Hex.decode(computed["payload"]!["signingInputSHA256"]!.stringValue!)
        let input = computed["payload"]!["signingInput"]!.stringValue!.replacingOccurrences(of: "\\u0000", with: "\u{0}")
        #expect(SHA256.hash(Array(input.utf8)) == payloadHash, "the documented hash is the documented signing input's")
        let sigP = try Base64.decode(try #require(exampleSigs?["payload"]?.stringValue))
        #expect(grace.keys.p256.publicKey.isValidRawSignature(sigP, for: Array(input.utf8)))
        // Version 3: Grace's claims, signed, with the two disclosures, are a proof a receiver accepts —
        // two fields opened, 14 digests it cannot tell from hidden fields.
        let v3 = try #require(computed["version3"])
        let jwt = try CompactJWS.sign(
            payload: Array(try #require(v3["sdClaims"]?.stringValue).utf8), header: ["typ": .string(SelectiveDisclosure.typ)], signer: grace.keys.p256)
        let proof = ([jwt] + (v3["disclosures"]?.arrayValue ?? []).compactMap(\.stringValue)).joined(separator: "~") + "~"
        let opened = try SelectiveDisclosure.verify(proof, issuer: grace.keys.p256.didKey, version: 3).get()
        #expect(opened.fields == [.name: "Grace", .company: "US Navy"] && opened.hiddenCount == 14)
        #expect(try JSONParser.parse(Array(try #require(v3["hello"]?.stringValue).utf8))["version"] == 3)
    }

    /// Writes example signatures for the document (a tool, not a check: it runs only with
    /// NEARCARD_PRINT_WORKED_EXAMPLE=PATH; documentMatchesTheCode checks the ones the document shows).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["NEARCARD_PRINT_WORKED_EXAMPLE"] != nil))
    func exampleSignaturesCanBeMade() throws {
        let (computed, ada, grace) = try Self.compute()
        let signedI = ExchangeMessage.Identity.signingInput(try JSONParser.parse(computed["identity"]!["initiatorSignedObject"]!.stringValue!))
        let signedR = ExchangeMessage.Identity.signingInput(try JSONParser.parse(computed["identity"]!["responderSignedObject"]!.stringValue!))
        let input = Array(computed["payload"]!["signingInput"]!.stringValue!.replacingOccurrences(of: "\\u0000", with: "\u{0}").utf8)
        let sigs: JSONValue = [
            "initiatorIdentity": .string(Base64.encode(try ada.keys.p256.signature(for: signedI))),
            "responderIdentity": .string(Base64.encode(try grace.keys.p256.signature(for: signedR))),
            "payload": .string(Base64.encode(try grace.keys.p256.signature(for: input))),
        ]
        let path = try #require(ProcessInfo.processInfo.environment["NEARCARD_PRINT_WORKED_EXAMPLE"])
        try (sigs.prettyText + "\n").write(toFile: path + ".sigs", atomically: true, encoding: .utf8)
    }
}
