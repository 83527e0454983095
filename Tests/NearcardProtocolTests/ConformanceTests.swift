import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

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
        _ = s.send(.sasReveal(nonce: s.nonce, identity: nil))
        _ = s.responder.decide(accept: true, message: nil, now: now)
        _ = s.send(.decision(accept: true, reason: nil, identity: nil))
        return s
    }

    /// A card from the raw initiator, signed and bound to the session, with this card and message.
    static func card(_ s: RawInitiatorSession, _ card: Card, message: String? = nil) throws -> ExchangeMessage {
        let payload = try ProximityPayload.make(
            card: card, policy: SharingPolicy(fields: Set(CardField.allCases)), keys: s.raw.party.keys,
            receiver: s.grace.identity.did, sessionBinding: s.raw.h, ephemeralMessage: message,
            sealedRoute: nil, now: now)
        return .card(payload: payload.json, message: message, presenceKey: Sodium.randomBytes(16))
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
        var raw = NoiseXXHandshake(
            role: .responder, prologue: SessionKind.prologue, staticKey: party("Mallory").keys.x25519,
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
        var identity = over.raw.identity()
        identity.name = Self.oneGrapheme(65)
        identity.signature = try over.raw.party.keys.p256.signature(
            for: ExchangeMessage.Identity.signingInput(identity.signedObject(role: .initiator, handshakeHash: over.raw.h)))
        let refused = over.sendHello(.hello(.init(sasCommit: SAS.commitment(handshakeHash: over.raw.h, nonce: over.nonce), identity: identity)))
        #expect(refused.failure?.code == .tooLarge)
        #expect(refused.failure?.message.contains("65 characters; at most 64") == true, "\(refused.failure?.message ?? "")")
    }

    /// The fault → code table of §13, for text: over a limit is too_large wherever it is; a control
    /// character where none is allowed is protocol_error (outside the payload) or bad_card (inside it).
    @Test(
        arguments: [
            (Card(name: ConformanceTests.oneGrapheme(257)), nil, ProtocolErrorCode.tooLarge, "257 characters; at most 256"),
            (Card(name: "Ada", title: String(repeating: "é", count: 257)), nil, .tooLarge, "\"title\" is 257 characters"),
            (Card(name: "Ada", company: "Tab\tCo"), nil, .badCard, "control character"),
            (Card(name: "Ada"), ConformanceTests.oneGrapheme(141), .tooLarge, "141 characters; at most 140"),
            (Card(name: "Ada"), "line one\r\nline two", .protocolError, "control character U+000D"),
            (Card(name: "Ada"), "bell\u{7F}", .protocolError, "control character U+007F"),
        ] as [(Card, String?, ProtocolErrorCode, String)])
    func textFaultsGetTheirCode(card: Card, message: String?, code: ProtocolErrorCode, reason: String) throws {
        var s = try Self.atCards()
        let actions = s.send(try Self.card(s, card, message: message))
        #expect(actions.failure?.code == code, "\(actions.failure?.message ?? "none")")
        #expect(actions.failure?.message.contains(reason) == true, "\(actions.failure?.message ?? "none")")
        #expect(actions.committed == nil)
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
    @Test(
        arguments: [
            (String(repeating: "€", count: 1366), ProtocolErrorCode.tooLarge),
            ("see you\r", .protocolError),
            ("tab\tand\nnewline", nil),
        ] as [(String, ProtocolErrorCode?)])
    func followUpTextFaultsGetTheirCode(text: String, code: ProtocolErrorCode?) throws {
        let sender = IdentityKeys.generate()
        let recipient = IdentityKeys.generate()
        let envelope = MessageEnvelope.make(text: text, from: sender.p256.didKey.did, to: recipient.p256.didKey.did, sentAt: now, signer: sender.ed25519)
        var pair = MailPair(
            envelope: envelope, token: Sodium.randomBytes(32), senderKey: sender.x25519, recipientKey: recipient.x25519,
            pinned: recipient.x25519.publicKey)
        var authorized = false
        pair.run { _ in
            authorized = true
            return .success(false)
        }
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
            Issue.record("a null disclosure was accepted")
            return
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
            Issue.record("an unsorted _sd was refused")
            return
        }
        #expect(d.fields[.company] == "Engines" && d.hiddenCount == 5)
        // iss must be the payload's senderDID: another key's proof fails against this sender.
        let other = IdentityKeys.generate()
        let (foreign, _) = try Self.sdJWT(keys: other, card: card)
        if case .success = SelectiveDisclosure.verify(foreign, issuer: keys.p256.didKey) { Issue.record("another DID's proof verified") }
    }

    // MARK: §6 hello and decision, decoded strictly

    static func decode(_ o: JSONObject) -> ProtocolError? {
        do {
            _ = try ExchangeMessage(decoding: JCS.canonicalize(.object(o)))
            return nil
        } catch { return error }
    }

    static func helloObject(_ change: (inout JSONObject) -> Void = { _ in }, identity: (inout JSONObject) -> Void = { _ in }) -> JSONObject {
        var i: JSONObject = [
            "did": .string(party("Ada").identity.did), "pubKey": .string(Base64.encode(Array(repeating: 6, count: 32))),
            "signPubKey": .string(Base64.encode(Array(repeating: 7, count: 32))),
            "signature": .string(Base64.encode(Array(repeating: 2, count: 64))),
        ]
        identity(&i)
        var o: JSONObject = ["type": "hello", "version": 2, "sasCommit": .string(Base64.urlEncode(Array(repeating: 1, count: 32))), "identity": .object(i)]
        change(&o)
        return o
    }

    /// Another `version` is unsupported_version; a missing one, wrong sizes, a member that does not
    /// belong, a non-boolean `accept`, an identity in a refusal are protocol_error; values over their
    /// byte limits too_large.
    @Test func helloAndDecisionMembersAreCheckedWithTheirCodes() {
        #expect(Self.decode(Self.helloObject()) == nil, "the baseline decodes")
        #expect(Self.decode(Self.helloObject { $0["identity"] = nil }) == nil, "a hello without identity (a recall) decodes")
        #expect(Self.decode(Self.helloObject { $0["version"] = 1 })?.code == .unsupportedVersion)
        #expect(Self.decode(Self.helloObject { $0["version"] = 4 })?.code == .unsupportedVersion)
        #expect(Self.decode(Self.helloObject { $0["version"] = "3" })?.code == .protocolError)
        for version in ExchangeVersions.spoken {
            let decoded = try? ExchangeMessage(decoding: JCS.canonicalize(.object(Self.helloObject { $0["version"] = .number(Double(version)) })))
            guard case .hello(let h)? = decoded else {
                Issue.record("a hello of version \(version) is refused")
                continue
            }
            #expect(h.version == version)
        }
        #expect(Self.decode(Self.helloObject { $0["version"] = nil })?.code == .protocolError)
        #expect(Self.decode(Self.helloObject(identity: { $0["did"] = .string("did:key:z" + String(repeating: "a", count: 300)) }))?.code == .tooLarge)
        #expect(Self.decode(Self.helloObject(identity: { $0["signPubKey"] = .string(Base64.encode(Array(repeating: 7, count: 31))) }))?.code == .protocolError)
        #expect(Self.decode(Self.helloObject(identity: { $0["pubKey"] = nil }))?.code == .protocolError)
        #expect(Self.decode(Self.helloObject(identity: { $0["signature"] = .string(Base64.encode(Array(repeating: 2, count: 63))) }))?.code == .protocolError)
        #expect(Self.decode(Self.helloObject(identity: { $0["name"] = "Ada\u{0}" }))?.code == .protocolError)
        #expect(Self.decode(Self.helloObject(identity: { $0["role"] = "initiator" }))?.code == .protocolError)
        #expect(Self.decode(Self.helloObject { $0["sasNonce"] = .string(Base64.urlEncode(Array(repeating: 1, count: 32))) })?.code == .protocolError)
        #expect(Self.decode(Self.helloObject { $0["sasCommit"] = nil })?.code == .protocolError)
        #expect(Self.decode(["type": "decision", "accept": false, "identity": .object(Self.helloObject()["identity"]!.objectValue!)])?.code == .protocolError)
        #expect(
            Self.decode(["type": "nonce", "sasNonce": .string(Base64.urlEncode(Array(repeating: 1, count: 32))), "sealedIdentity": "!"])?.code == .protocolError
        )
        #expect(
            Self.decode(["type": "card", "payload": ["x": 1], "presenceKey": .string(Base64.urlEncode(Array(repeating: 1, count: 15)))])?.code == .protocolError
        )
        #expect(Self.decode(["type": "decision", "accept": "yes"])?.code == .protocolError)
        #expect(Self.decode(["type": "decision", "accept": false, "reason": .string(String(repeating: "x", count: 513))])?.code == .tooLarge)
        #expect(Self.decode(["type": "abort", "code": "declined", "reason": .string(String(repeating: "x", count: 513))])?.code == .tooLarge)
        #expect(Self.decode(["type": "abort", "code": "declined", "reason": .string(String(repeating: "x", count: 512))]) == nil)
    }

    /// JSON nested deeper than 16 levels inside a session is refused before anything reads it.
    @Test func nestingDeeperThanSixteenIsRefused() throws {
        var deep: JSONValue = 1
        for _ in 0..<17 { deep = .array([deep]) }
        var s = try RawInitiatorSession()
        let actions = s.responder.receive(try s.raw.transport!.encrypt(JCS.canonicalize(["type": "done", "x": deep])), now: now)
        #expect(actions.failure?.code == .protocolError)
        #expect(actions.failure?.message.contains("not JSON") == true, "\(actions.failure?.message ?? "")")
    }

    /// The DID proof: a DID that is not P-256, the receiver's own DID, a proof for another session or
    /// reflected from the other role: each bad_identity, and no SAS is shown.
    @Test func didProofsThatMustNotVerify() throws {
        var ed = try RawInitiatorSession()
        let edDID = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
        let a1 = ed.sendHello(ed.raw.hello(commit: Sodium.randomBytes(32), did: edDID))
        #expect(a1.failure?.code == .badIdentity && a1.failure?.message.contains("P-256") == true, "\(a1.failure?.message ?? "")")

        var own = try RawInitiatorSession()
        let a2 = own.sendHello(own.raw.hello(commit: Sodium.randomBytes(32), signer: own.grace.keys, did: own.grace.identity.did))
        #expect(a2.failure?.code == .badIdentity && a2.failure?.message.contains("own identity") == true, "\(a2.failure?.message ?? "")")

        for (role, otherSession) in [(NoiseXXHandshake.Role.responder, false), (.initiator, true)] {
            var t = try RawInitiatorSession()
            var identity = ExchangeMessage.Identity(
                did: t.raw.party.identity.did, name: "Mallory", pubKey: t.raw.party.keys.x25519.publicKey.rawRepresentation,
                signPubKey: t.raw.party.keys.ed25519.publicKey.rawRepresentation)
            let h = otherSession ? Sodium.randomBytes(32) : t.raw.h
            identity.signature = try t.raw.party.keys.p256.signature(
                for: ExchangeMessage.Identity.signingInput(identity.signedObject(role: role, handshakeHash: h)))
            let a = t.sendHello(.hello(.init(sasCommit: Sodium.randomBytes(32), identity: identity)))
            #expect(a.failure?.code == .badIdentity, "role \(role), other session \(otherSession)")
            #expect(a.identified == nil)
        }
    }

    // MARK: §9 and §10: the card's route and keys

    /// A route as the raw initiator would seal it to Grace, with one thing changed.
    static func route(
        _ s: RawInitiatorSession, did: String? = nil, recipient: String? = nil, pubKey: X25519.PublicKey? = nil,
        fingerprint: String? = nil, expiresAt: Int64 = now + 3600, signer: Ed25519.PrivateKey? = nil,
        sealTo: X25519.PublicKey? = nil
    ) -> String {
        let p = s.raw.party.identity
        let record = RouteRecord(
            did: did ?? p.did, pubKey: pubKey ?? p.pubKey, signPubKey: (signer ?? s.raw.party.keys.ed25519).publicKey,
            fingerprint: fingerprint ?? p.fingerprint, mailboxToken: Sodium.randomBytes(32),
            recipient: recipient ?? s.grace.identity.did, issuedAt: now, expiresAt: expiresAt, hints: [])
        return SealedRoute.seal(record, signer: signer ?? s.raw.party.keys.ed25519, to: sealTo ?? s.grace.keys.x25519.publicKey)
    }

    static func card(_ s: RawInitiatorSession, route: String?, keys: IdentityKeys? = nil) throws -> ExchangeMessage {
        var payload = try ProximityPayload.make(
            card: Card(name: "Mallory"), policy: SharingPolicy(fields: [.name]), keys: keys ?? s.raw.party.keys,
            receiver: s.grace.identity.did, sessionBinding: s.raw.h, ephemeralMessage: nil, sealedRoute: route, now: now)
        if keys != nil { // another Ed25519/X25519 key in the payload, still signed by the session's DID
            payload.senderDID = s.raw.party.identity.did
            payload.sdProof = try SelectiveDisclosure.issue(card: Card(name: "Mallory"), disclosing: [.name], signer: s.raw.party.keys.p256, issuedAt: now)
            payload.payloadSignature = Base64.encode(try s.raw.party.keys.p256.signature(for: ProximityPayload.signingInput(unsigned: payload.unsignedJSON)))
        }
        return .card(payload: payload.json, message: nil, presenceKey: Sodium.randomBytes(16))
    }

    @Test func anHonestRouteIsAcceptedAndEachBrokenOneRefused() throws {
        var ok = try Self.atCards()
        let accepted = ok.send(try Self.card(ok, route: Self.route(ok)))
        #expect(accepted.failure == nil, "\(accepted.failure?.message ?? "")")
        #expect(sends(accepted).count == 1, "done is sent")

        let broken: [(String, (RawInitiatorSession) -> String?, ProtocolErrorCode, String)] = [
            ("no route", { _ in nil }, .badCard, "carries no sealed route"),
            ("another issuer", { Self.route($0, did: party("Eve").identity.did) }, .badCard, "issued by someone other"),
            ("another recipient", { Self.route($0, recipient: party("Eve").identity.did) }, .badCard, "another recipient"),
            ("another key", { Self.route($0, pubKey: X25519.PrivateKey().publicKey) }, .badCard, "other keys than the session's"),
            ("another fingerprint", { Self.route($0, fingerprint: "0000000000000000") }, .badCard, "other keys than the session's"),
            ("expired", { Self.route($0, expiresAt: now - 1) }, .badCard, "expired"),
            ("another signer", { Self.route($0, signer: Ed25519.PrivateKey()) }, .badCard, "signed by a key other"),
            ("sealed to someone else", { Self.route($0, sealTo: X25519.PrivateKey().publicKey) }, .badCard, "does not open"),
            ("over 4096 bytes", { _ in Base64.encode(Sodium.randomBytes(3100)) }, .tooLarge, "at most 4096"),
            // §10: a route lives at most 365 days from its issue.
            ("valid for 400 days", { Self.route($0, expiresAt: now + 400 * 86400) }, .tooLarge, "valid for 400 days; at most 365"),
        ]
        for (what, make, code, reason) in broken {
            var s = try Self.atCards()
            let a = s.send(try Self.card(s, route: make(s)))
            #expect(a.failure?.code == code, "\(what): \(a.failure?.message ?? "accepted")")
            #expect(a.failure?.message.contains(reason) == true, "\(what): \(a.failure?.message ?? "accepted") [\(reason)]")
            #expect(a.committed == nil)
        }
    }

    /// The card's signPubKey must be the identity's.
    @Test func aCardWithAnotherSigningKeyThanTheHelloIsRefused() throws {
        var s = try Self.atCards()
        let a = s.send(try Self.card(s, route: Self.route(s), keys: IdentityKeys.generate()))
        #expect(a.failure?.code == .badCard, "\(a.failure?.message ?? "accepted")")
    }

    /// `_sd` holds exactly 7 distinct digests under sha-256; a disclosure names a card field.
    @Test func theDigestListAndDisclosureNamesAreChecked() throws {
        let keys = IdentityKeys.generate()
        func jwt(_ claims: JSONObject, attached: [String] = []) throws -> String {
            ([try CompactJWS.sign(payload: JCS.canonicalize(.object(claims)), header: ["typ": .string(SelectiveDisclosure.typ)], signer: keys.p256)] + attached)
                .joined(separator: "~") + "~"
        }
        let digests = (0..<7).map { _ in Base64.urlEncode(Sodium.randomBytes(32)) }.sorted()
        let base: JSONObject = ["iss": .string(keys.p256.didKey.did), "iat": .number(Double(now)), "_sd_alg": "sha-256"]
        func with(_ sd: [String], alg: String = "sha-256", attached: [String] = []) throws -> Result<SelectiveDisclosure.Disclosed, SDProofFailure> {
            var c = base
            c["_sd"] = .array(sd.map { .string($0) })
            c["_sd_alg"] = .string(alg)
            return SelectiveDisclosure.verify(try jwt(c, attached: attached), issuer: keys.p256.didKey)
        }
        if case .failure(let f) = try with(digests) { Issue.record("the baseline fails: \(f)") }
        if case .success = try with(Array(digests.prefix(6))) { Issue.record("6 digests accepted") }
        if case .success = try with(Array(digests.prefix(6)) + [digests[0]]) { Issue.record("a repeated digest accepted") }
        if case .success = try with(digests, alg: "sha-512") { Issue.record("_sd_alg sha-512 accepted") }
        let nickname = Base64.urlEncode(JCS.canonicalize([.string(Base64.urlEncode(Sodium.randomBytes(16))), "nickname", "Ada"]))
        let withNickname = Array(digests.prefix(6)) + [SelectiveDisclosure.digest(of: nickname)]
        #expect(try with(withNickname.sorted(), attached: [nickname]) == .failure(.malformed("a disclosure names \"nickname\", which is not a card field")))
    }

    /// An abort with a code this side does not know still ends the session, reported as protocol_error.
    @Test func anUnknownAbortCodeEndsTheSessionAsAProtocolError() throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        let a = s.send(.abort(code: "solar_flare", reason: "the sun"))
        #expect(a.failure?.code == .protocolError && a.failedByPeer == true, "\(a.failure?.message ?? "")")
        #expect(s.responder.isFinished)
    }

    /// Builds an SD-JWT by hand, as another implementation might, with the variations the tests need.
    static func sdJWT(
        keys: IdentityKeys, card: Card, attachNullFor nullField: CardField? = nil, iat: Int64? = now, typ: String = SelectiveDisclosure.typ,
        sortDigests: Bool = true
    ) throws -> (String, [String]) {
        var digests: [String] = []
        var attached: [String] = []
        // A version-2 proof: one digest for each of the seven version-2 fields.
        for field in CardField.fields(ofVersion: 2) {
            let value = card.value(of: field)
            let d = SelectiveDisclosure.makeDisclosure(salt: Base64.urlEncode(Sodium.randomBytes(16)), field: field, value: value ?? .null)
            digests.append(SelectiveDisclosure.digest(of: d))
            if value != nil || field == nullField { attached.append(d) }
        }
        if sortDigests {
            digests.sort()
        } else {
            digests.sort(by: >)
        }
        var claims: JSONObject = ["iss": .string(keys.p256.didKey.did), "_sd_alg": "sha-256", "_sd": .array(digests.map { .string($0) })]
        if let iat { claims["iat"] = .number(Double(iat)) }
        let jwt = try CompactJWS.sign(payload: JCS.canonicalize(.object(claims)), header: ["typ": .string(typ)], signer: keys.p256)
        return (([jwt] + attached).joined(separator: "~") + "~", digests)
    }

    static func verifyPayload(keys: IdentityKeys, card: Card, sdProof: String) -> Result<ProximityPayload.Verified, PayloadFailure> {
        var p = try! ProximityPayload.make(
            card: card, policy: SharingPolicy(fields: Set(CardField.allCases)), keys: keys, receiver: nil,
            sessionBinding: nil, ephemeralMessage: nil, sealedRoute: nil, now: now)
        p.sdProof = sdProof
        p.payloadSignature = Base64.encode(try! keys.p256.signature(for: ProximityPayload.signingInput(unsigned: p.unsignedJSON)))
        return ProximityPayload.verify(json: p.json, context: PayloadVerificationContext(now: now))
    }
}
