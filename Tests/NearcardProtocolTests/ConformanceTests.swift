import NearcardCrypto
import NearcardModel
@testable import NearcardProtocol
import Testing

/// The rules docs/PROTOCOL.md states for what a receiver does with text, JSON form, handshake payloads
/// and the selective-disclosure proof, each checked against the real state machines (its conformance
/// table names these tests).
@Suite struct ConformanceTests {
    /// One combining mark repeated: a single grapheme ("character" to a person) of `scalars` code points.
    static func oneGrapheme(_ scalars: Int) -> String { "e" + String(repeating: "\u{0301}", count: scalars - 1) }

    /// A responder that got this far: the raw initiator's hello, reveal and acceptance are in.
    static func atCards() throws -> RawInitiatorSession {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        _ = s.send(.sasReveal(nonce: s.nonce))
        _ = s.responder.decide(accept: true, message: nil, now: now)
        _ = s.send(.decision(accept: true, reason: nil))
        return s
    }

    /// A card from the raw initiator, signed and bound to the session, with this card and message.
    static func card(_ s: RawInitiatorSession, _ card: Card, message: String? = nil) throws -> ExchangeMessage {
        let payload = try ProximityPayload.make(card: card, policy: SharingPolicy(fields: Set(CardField.allCases)), keys: s.raw.party.keys,
                                                receiver: s.grace.identity.did, sessionBinding: s.raw.h, ephemeralMessage: message,
                                                sealedRoute: nil, now: now)
        return .card(payload: payload.json, message: message)
    }

    // MARK: §1 JSON form

    /// Every message is sent in its JCS form; a receiver refuses any other spelling of the same JSON
    /// (whitespace, member order, a number written `1.0`) with protocol_error, and stores nothing.
    @Test(arguments: [
        "{\"type\": \"done\"}",
        "{ \"type\":\"sas-reveal\",\"nonce\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}",
        "{\"nonce\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"type\":\"sas-reveal\"}\n",
        "{\"type\":\"sas-reveal\",\"nonce\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}",
        "{\"type\":\"decision\",\"accept\":true,\"reason\":\"\\u0041\"}",
    ])
    func nonCanonicalJSONIsRefused(text: String) throws {
        var s = try RawInitiatorSession()
        let actions = s.responder.receive(try s.raw.transport!.encrypt(Array(text.utf8)), now: now)
        #expect(actions.failure?.code == .protocolError, "\(text)")
        #expect(actions.failure?.message.contains("canonical") == true, "\(actions.failure?.message ?? "")")
    }

    /// The same check, positively: the canonical form of a hello with a pretty-printed twin; only the
    /// canonical one is read.
    @Test func aPrettyPrintedHelloIsRefusedAndItsCanonicalFormAccepted() throws {
        var pretty = try RawInitiatorSession()
        let hello = pretty.raw.hello(commit: SAS.commitment(handshakeHash: pretty.raw.h, nonce: pretty.nonce))
        let spaced = Array(hello.json.prettyText.utf8)
        #expect(spaced != hello.encoded)
        let refused = pretty.responder.receive(try pretty.raw.transport!.encrypt(spaced), now: now)
        #expect(refused.failure?.code == .protocolError)
        #expect(sends(refused).count == 1, "an abort is sent (transport keys exist)")

        var canonical = try RawInitiatorSession()
        #expect(canonical.sendHello().failure == nil)
    }

    // MARK: §5 handshake payloads

    /// Message 3's payload is empty; a responder that reads one refuses the session before transport
    /// keys exist, so it closes without sending an abort, and shows nothing.
    @Test func aPayloadInMessage3IsRefusedWithoutAnAbort() throws {
        var raw = RawPeer(role: .initiator, party: party("Mallory"))
        let grace = party("Grace")
        var (responder, opened) = try NearcardProtocolTests.responder(grace, reading: try raw.noise.writeMessage(payload: SessionKind.exchange.tag))
        _ = try raw.noise.readMessage(sends(opened)[0])
        let m3 = try raw.noise.writeMessage(payload: Array("surprise".utf8))
        let actions = responder.receive(m3, now: now)
        #expect(actions.failure?.code == .protocolError)
        #expect(actions.failure?.message.contains("must be empty") == true)
        #expect(sends(actions).isEmpty, "no abort before transport keys")
        #expect(responder.isFinished)
    }

    /// Message 2's payload is empty too: an initiator that reads one closes without message 3 (its
    /// static key never leaves) and without an abort.
    @Test func aPayloadInMessage2IsRefusedWithoutMessage3() throws {
        let ada = party("Ada")
        var i = initiator(ada)
        let m1 = sends(i.start())[0]
        var raw = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: party("Mallory").keys.x25519,
                                   ephemeralKey: X25519.PrivateKey())
        _ = try raw.readMessage(m1)
        let m2 = try raw.writeMessage(payload: [1, 2, 3])
        let actions = i.receive(m2, now: now)
        #expect(actions.failure?.code == .protocolError)
        #expect(sends(actions).isEmpty, "neither message 3 nor an abort")
    }

    // MARK: §1 characters, §13 codes

    /// Limits count characters as Unicode scalar values: one grapheme of many combining marks is
    /// many characters. Over a limit is too_large; at the limit is accepted.
    @Test func aHelloNameIsCountedInScalars() throws {
        var over = try RawInitiatorSession()
        var hello = over.raw.hello(commit: SAS.commitment(handshakeHash: over.raw.h, nonce: over.nonce))
        if case .hello(var h) = hello {
            h.name = Self.oneGrapheme(65)
            h.signature = try over.raw.party.keys.p256.signature(for: ExchangeMessage.Hello.signingInput(h.signedObject(role: .initiator, handshakeHash: over.raw.h)))
            hello = .hello(h)
        }
        let refused = over.sendHello(hello)
        #expect(refused.failure?.code == .tooLarge)
        #expect(refused.failure?.message.contains("65 characters; at most 64") == true, "\(refused.failure?.message ?? "")")
    }

    /// The fault → code table of §13, for text: over a limit is too_large wherever it is; a control
    /// character where none is allowed is protocol_error (outside the payload) or bad_card (inside it).
    @Test(arguments: [
        (Card(name: ConformanceTests.oneGrapheme(257)), nil, ProtocolError.Code.tooLarge, "257 characters; at most 256"),
        (Card(name: "Ada", title: String(repeating: "é", count: 257)), nil, .tooLarge, "\"title\" is 257 characters"),
        (Card(name: "Ada", company: "Tab\tCo"), nil, .badCard, "control character"),
        (Card(name: "Ada"), ConformanceTests.oneGrapheme(141), .tooLarge, "141 characters; at most 140"),
        (Card(name: "Ada"), "line one\r\nline two", .protocolError, "control character U+000D"),
        (Card(name: "Ada"), "bell\u{7F}", .protocolError, "control character U+007F"),
    ] as [(Card, String?, ProtocolError.Code, String)])
    func textFaultsGetTheirCode(card: Card, message: String?, code: ProtocolError.Code, reason: String) throws {
        var s = try Self.atCards()
        let actions = s.send(try Self.card(s, card, message: message))
        #expect(actions.failure?.code == code, "\(actions.failure?.message ?? "none")")
        #expect(actions.failure?.message.contains(reason) == true, "\(actions.failure?.message ?? "none")")
        #expect(actions.completed == nil)
    }

    /// At the limits, in characters of several bytes each: accepted.
    @Test func textAtTheLimitsIsAccepted() throws {
        var s = try Self.atCards()
        let card = Card(name: String(repeating: "é", count: 256), company: String(repeating: "😀", count: 256))
        let actions = s.send(try Self.card(s, card, message: String(repeating: "ß", count: 139) + "\n"))
        #expect(actions.failure?.code != .tooLarge)
        #expect(actions.failure?.message.contains("sealed route") == true, "only the missing route is left to refuse: \(actions.failure?.message ?? "")")
    }

    /// Follow-up messages: over 4096 bytes is too_large; a control character other than \n and \t is
    /// protocol_error; nothing reaches the recipient's checks.
    @Test(arguments: [
        (String(repeating: "€", count: 1366), ProtocolError.Code.tooLarge),
        ("see you\r", .protocolError),
        ("tab\tand\nnewline", nil),
    ] as [(String, ProtocolError.Code?)])
    func followUpTextFaultsGetTheirCode(text: String, code: ProtocolError.Code?) throws {
        let sender = IdentityKeys.generate(), recipient = IdentityKeys.generate()
        let envelope = MessageEnvelope.make(text: text, from: sender.p256.didKey.did, to: recipient.p256.didKey.did, sentAt: now, signer: sender.ed25519)
        var pair = MailPair(envelope: envelope, token: Sodium.randomBytes(32), senderKey: sender.x25519, recipientKey: recipient.x25519,
                            pinned: recipient.x25519.publicKey)
        var authorized = false
        pair.run { _ in authorized = true; return .success(false) }
        let failure = pair.recipientEvents.compactMap { if case .failed(let e, _) = $0 { e } else { nil } }.first
        #expect(failure?.code == code, "\(failure?.message ?? "none")")
        #expect(authorized == (code == nil))
    }

    // MARK: §9 the SD-JWT

    /// A proof that attaches a disclosure of null is refused, and the reason says so (not "differs").
    @Test func aNullDisclosureIsRefusedByName() throws {
        let keys = IdentityKeys.generate()
        let (proof, _) = try Self.sdJWT(keys: keys, card: Card(name: "Ada"), attachNullFor: .email)
        guard case .failure(let f) = Self.verifyPayload(keys: keys, card: Card(name: "Ada"), sdProof: proof) else {
            Issue.record("a null disclosure was accepted"); return
        }
        #expect(f.description.contains("discloses email as null"), "\(f)")
    }

    /// `iat` must be an integer; `typ` must be nearcard-card+sd-jwt; the order of `_sd` is not relied on.
    @Test func theSDJWTClaimsAndHeaderAreChecked() throws {
        let keys = IdentityKeys.generate()
        let card = Card(name: "Ada", company: "Engines")
        let (noIat, _) = try Self.sdJWT(keys: keys, card: card, iat: nil)
        #expect(SelectiveDisclosure.verify(noIat, issuer: keys.p256.didKey) == .failure(.malformed("iat must be an integer (Unix seconds)")))
        let (wrongTyp, _) = try Self.sdJWT(keys: keys, card: card, typ: "JWT")
        #expect(SelectiveDisclosure.verify(wrongTyp, issuer: keys.p256.didKey) == .failure(.malformed("the JWT's typ is not nearcard-card+sd-jwt")))
        let (unsorted, digests) = try Self.sdJWT(keys: keys, card: card, sortDigests: false)
        #expect(digests != digests.sorted(), "the test's digests are out of order")
        guard case .success(let d) = SelectiveDisclosure.verify(unsorted, issuer: keys.p256.didKey) else {
            Issue.record("an unsorted _sd was refused"); return
        }
        #expect(d.fields[.company] == "Engines" && d.hiddenCount == 5)
        // iss must be the payload's senderDID: another key's proof fails against this sender.
        let other = IdentityKeys.generate()
        let (foreign, _) = try Self.sdJWT(keys: other, card: card)
        if case .success = SelectiveDisclosure.verify(foreign, issuer: keys.p256.didKey) { Issue.record("another DID's proof verified") }
    }

    /// Builds an SD-JWT by hand, as another implementation might, with the variations the tests need.
    static func sdJWT(keys: IdentityKeys, card: Card, attachNullFor nullField: CardField? = nil, iat: Int64? = now, typ: String = SelectiveDisclosure.typ,
                      sortDigests: Bool = true) throws -> (String, [String]) {
        var digests: [String] = [], attached: [String] = []
        for field in CardField.allCases {
            let value = card.value(of: field)
            let d = SelectiveDisclosure.makeDisclosure(salt: Base64.urlEncode(Sodium.randomBytes(16)), field: field, value: value ?? .null)
            digests.append(SelectiveDisclosure.digest(of: d))
            if value != nil || field == nullField { attached.append(d) }
        }
        if sortDigests { digests.sort() } else {
            digests.sort(by: >)
        }
        var claims: JSONObject = ["iss": .string(keys.p256.didKey.did), "_sd_alg": "sha-256", "_sd": .array(digests.map { .string($0) })]
        if let iat { claims["iat"] = .number(Double(iat)) }
        let jwt = try CompactJWS.sign(payload: JCS.canonicalize(.object(claims)), header: ["typ": .string(typ)], signer: keys.p256)
        return (([jwt] + attached).joined(separator: "~") + "~", digests)
    }

    static func verifyPayload(keys: IdentityKeys, card: Card, sdProof: String) -> Result<ProximityPayload.Verified, PayloadFailure> {
        var p = try! ProximityPayload.make(card: card, policy: SharingPolicy(fields: Set(CardField.allCases)), keys: keys, receiver: nil,
                                           sessionBinding: nil, ephemeralMessage: nil, sealedRoute: nil, now: now)
        p.sdProof = sdProof
        p.payloadSignature = Base64.encode(try! keys.p256.signature(for: ProximityPayload.signingInput(unsigned: p.unsignedJSON)))
        return ProximityPayload.verify(json: p.json, context: PayloadVerificationContext(now: now))
    }
}
