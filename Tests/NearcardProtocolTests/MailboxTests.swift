import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

/// A sender and a recipient mail session in memory; the recipient's checks are the test's closure.
struct MailPair {
    var sender: MailboxStateMachine
    var recipient: MailboxStateMachine?
    var senderEvents: [MailboxStateMachine.Action] = []
    var recipientEvents: [MailboxStateMachine.Action] = []
    var transcript: [[UInt8]] = []
    let recipientKey: X25519.PrivateKey

    init(envelope: MessageEnvelope, token: [UInt8], senderKey: X25519.PrivateKey, recipientKey: X25519.PrivateKey, pinned: X25519.PublicKey) {
        self.recipientKey = recipientKey
        sender = MailboxStateMachine(sending: envelope, token: token, to: pinned, staticKey: senderKey, ephemeralKey: X25519.PrivateKey())
    }

    /// Runs the session; `decide` answers the recipient's authorization request.
    mutating func run(decide: (MailboxStateMachine.Delivery) -> Result<Bool, ProtocolError>) {
        var toR = sends(sender.start())
        var toI: [[UInt8]] = []
        func sends(_ a: [MailboxStateMachine.Action]) -> [[UInt8]] { a.compactMap { if case .send(let b) = $0 { b } else { nil } } }
        while !toR.isEmpty || !toI.isEmpty {
            if !toR.isEmpty {
                let f = toR.removeFirst()
                transcript.append(f)
                var actions: [MailboxStateMachine.Action]
                if recipient == nil {
                    do {
                        let first = try SessionDispatch.readFirstMessage(
                            f, ephemeralKey: X25519.PrivateKey(), sessionKey: X25519.PrivateKey(),
                            longTermKey: recipientKey)
                        guard case .mail(let noise) = first else { throw ProtocolError(.protocolError, "not a mail session") }
                        recipient = MailboxStateMachine(receivingAfter: noise)
                        actions = recipient!.start()
                    } catch let error as ProtocolError {
                        recipientEvents.append(.failed(error, byPeer: false))
                        return
                    } catch {
                        return
                    }
                } else {
                    actions = recipient!.receive(f)
                }
                for case .authorize(let d) in actions {
                    switch decide(d) {
                    case .success(let dup): actions += recipient!.authorized(duplicate: dup)
                    case .failure(let e): actions += recipient!.refused(e)
                    }
                }
                recipientEvents += actions
                toI += sends(actions)
            }
            if !toI.isEmpty {
                let a = sender.receive(toI.removeFirst())
                senderEvents += a
                toR += sends(a)
            }
        }
    }
}

extension [MailboxStateMachine.Action] {
    var delivered: (String, Bool)? {
        for a in self { if case .delivered(let id, let d) = a { return (id, d) } }
        return nil
    }
    var failure: ProtocolError? {
        for a in self { if case .failed(let e, _) = a { return e } }
        return nil
    }
}

@Suite struct MailboxTests {
    let ada = IdentityKeys.generate(), grace = IdentityKeys.generate()
    let token = Sodium.randomBytes(32)

    func envelope(_ text: String = "Hello, Grace") -> MessageEnvelope {
        MessageEnvelope.make(text: text, from: ada.publicIdentity(name: nil).did, to: grace.publicIdentity(name: nil).did, sentAt: 1000, signer: ada.ed25519)
    }

    @Test func deliveryIsAuthorizedThenAcknowledged() {
        let e = envelope()
        var pair = MailPair(envelope: e, token: token, senderKey: ada.x25519, recipientKey: grace.x25519, pinned: grace.x25519.publicKey)
        var seen: MailboxStateMachine.Delivery?
        pair.run { d in
            seen = d
            return .success(false)
        }
        #expect(pair.senderEvents.delivered?.0 == e.id && pair.senderEvents.delivered?.1 == false)
        #expect(seen?.mailboxToken == token)
        #expect(seen?.envelope == e)
        #expect(seen?.senderStatic == ada.x25519.publicKey, "the recipient learns the sender's proven key")
        #expect(seen?.envelope.isSigned(by: ada.ed25519.publicKey) == true)
    }

    @Test func duplicateIsAcknowledgedAsSuch() {
        var pair = MailPair(envelope: envelope(), token: token, senderKey: ada.x25519, recipientKey: grace.x25519, pinned: grace.x25519.publicKey)
        pair.run { _ in .success(true) }
        #expect(pair.senderEvents.delivered?.1 == true)
    }

    /// The node that answers is not the contact (it lacks the pinned key): message 1 does not open for
    /// it, so it cannot answer; nothing but message 1 (sealed to the contact's key) ever left the sender.
    @Test func senderRefusesANodeWithoutThePinnedKey() throws {
        let impostor = X25519.PrivateKey()
        var pair = MailPair(envelope: envelope(), token: token, senderKey: ada.x25519, recipientKey: impostor, pinned: grace.x25519.publicKey)
        var asked = false
        pair.run { _ in
            asked = true
            return .success(false)
        }
        #expect(pair.recipientEvents.failure?.code == .protocolError, "the impostor cannot read message 1")
        #expect(!asked && pair.transcript.count == 1, "the message never left the sender")
        // An impostor that answers anyway (a made-up message 2): the sender stops there, identity_mismatch.
        var sender = MailboxStateMachine(
            sending: envelope(), token: token, to: grace.x25519.publicKey, staticKey: ada.x25519, ephemeralKey: X25519.PrivateKey())
        _ = sender.start()
        let madeUp = X25519.PrivateKey().publicKey.rawRepresentation + Sodium.randomBytes(16)
        let after = sender.receive(madeUp)
        #expect(after.failure?.code == .identityMismatch && sends(after).isEmpty)
    }

    @Test func refusalReachesTheSender() {
        var pair = MailPair(envelope: envelope(), token: token, senderKey: ada.x25519, recipientKey: grace.x25519, pinned: grace.x25519.publicKey)
        pair.run { _ in .failure(ProtocolError(.badIdentity, "unknown mailbox token")) }
        #expect(pair.senderEvents.failure?.code == .badIdentity)
        #expect(pair.senderEvents.failure?.message.contains("unknown mailbox token") == true)
    }

    /// Frames recorded from one delivery do not deliver again: Noise refuses them in a new session.
    @Test func replayedDeliveryIsRefused() {
        var first = MailPair(envelope: envelope(), token: token, senderKey: ada.x25519, recipientKey: grace.x25519, pinned: grace.x25519.publicKey)
        first.run { _ in .success(false) }
        var recipient: MailboxStateMachine?
        var asked = false
        var failed = false
        for f in first.transcript {
            if recipient == nil {
                guard
                    case .mail(let noise)? = try? SessionDispatch.readFirstMessage(
                        f, ephemeralKey: X25519.PrivateKey(), sessionKey: X25519.PrivateKey(),
                        longTermKey: grace.x25519)
                else {
                    failed = true
                    break
                }
                recipient = MailboxStateMachine(receivingAfter: noise)
                _ = recipient!.start()
                continue
            }
            let actions = recipient!.receive(f)
            if actions.contains(where: { if case .authorize = $0 { true } else { false } }) { asked = true }
            if actions.failure != nil {
                failed = true
                break
            }
        }
        #expect(failed && !asked)
    }

    @Test func dispatchKnowsBothKindsAndRefusesOthers() throws {
        let longTerm = X25519.PrivateKey()
        func dispatch(_ frame: [UInt8]) throws(ProtocolError) -> SessionDispatch.FirstMessage {
            try SessionDispatch.readFirstMessage(frame, ephemeralKey: X25519.PrivateKey(), sessionKey: X25519.PrivateKey(), longTermKey: longTerm)
        }
        // An exchange: XX with the tag in the clear.
        var xx = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        #expect(try dispatch(try xx.writeMessage(payload: SessionKind.exchange.tag)).kind == .exchange)
        // Mail: IK made for our long-term key.
        var ik = NoiseIKHandshake(
            initiatorTo: longTerm.publicKey, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        #expect(try dispatch(try ik.writeMessage(payload: SessionKind.mail.tag)).kind == .mail)
        // Another protocol altogether is protocol_error (a probe, not a peer); another Nearcard version is
        // unsupported_version (a peer worth telling a person about).
        var noise = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        #expect { try dispatch(try noise.writeMessage(payload: Array("gopher/1".utf8))) } throws: { ($0 as? ProtocolError)?.code == .protocolError }
        for old in ["nearcard/1", "nearcard-mail/1", "nearcard-mail/2"] {
            // (version 1's mail, and version 2's mail tag in the clear: an XX message 1 never gets our static key)
            var other = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
            #expect { try dispatch(try other.writeMessage(payload: Array(old.utf8))) } throws: {
                ($0 as? ProtocolError)?.code == .unsupportedVersion && ($0 as? ProtocolError)?.message.contains(old) == true
            }
        }
    }

    /// A mail message 1 made for another key (a stranger guessing, or an old route) opens nothing: the
    /// node answers nothing, so nobody learns its long-term key by asking (§15).
    @Test func mailForAnotherKeyGetsNoAnswer() throws {
        var ik = NoiseIKHandshake(
            initiatorTo: X25519.PrivateKey().publicKey, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(),
            ephemeralKey: X25519.PrivateKey())
        let m1 = try ik.writeMessage(payload: SessionKind.mail.tag)
        #expect {
            try SessionDispatch.readFirstMessage(m1, ephemeralKey: X25519.PrivateKey(), sessionKey: X25519.PrivateKey(), longTermKey: X25519.PrivateKey())
        } throws: {
            ($0 as? ProtocolError)?.code == .protocolError
        }
    }

    /// The confirmation query (§11, §15): asked over the same pinned session, answered by the store.
    @Test func aQueryIsAnsweredWithWhatTheStoreHolds() throws {
        for held in [true, false] {
            let edge = String(repeating: "ab", count: 16)
            var sender = MailboxStateMachine(asking: edge, to: grace.x25519.publicKey, staticKey: ada.x25519, ephemeralKey: X25519.PrivateKey())
            let m1 = sends(sender.start())
            guard
                case .mail(let noise) = try SessionDispatch.readFirstMessage(
                    m1[0], ephemeralKey: X25519.PrivateKey(), sessionKey: X25519.PrivateKey(),
                    longTermKey: grace.x25519)
            else {
                Issue.record("not mail")
                return
            }
            var recipient = MailboxStateMachine(receivingAfter: noise)
            var toI = sends(recipient.start())
            var asked: (String, X25519.PublicKey)?
            var answer: Bool?
            while !toI.isEmpty {
                for action in sender.receive(toI.removeFirst()) {
                    if case .send(let f) = action {
                        for r in recipient.receive(f) {
                            if case .answerQuery(let e, let from) = r { asked = (e, from) }
                        }
                        toI += sends(recipient.answered(held: held))
                    }
                    if case .answered(_, let h) = action { answer = h }
                }
            }
            #expect(asked?.0 == edge && asked?.1 == ada.x25519.publicKey, "the recipient learns which exchange, and who asks")
            #expect(answer == held)
        }
    }
}

@Suite struct MessageEnvelopeTests {
    /// `expiresAt` is signed with the rest, after `sentAt`, at most 365 days later (§15).
    @Test func expiryIsSignedAndBounded() throws {
        let k = IdentityKeys.generate()
        let e = MessageEnvelope.make(text: "gone in a week", from: "did:key:zA", to: "did:key:zB", sentAt: 1000, expiresAt: 1000 + 7 * 86400, signer: k.ed25519)
        let back = try MessageEnvelope(json: JSONParser.parse(e.json.canonicalText))
        #expect(back.expiresAt == 1000 + 7 * 86400 && back.isSigned(by: k.ed25519.publicKey))
        #expect(!back.hasExpired(now: 1000 + 7 * 86400 - 1) && back.hasExpired(now: 1000 + 7 * 86400))
        var stretched = back
        stretched.expiresAt = 1000 + 8 * 86400
        #expect(!stretched.isSigned(by: k.ed25519.publicKey), "the lifetime cannot be changed on the way")
        // §15/§13: over 365 days is over a limit (too_large on the wire); at or before sentAt is malformed.
        for (bad, kind): (Int64, ModelError.Kind) in [(1000, .malformedPayload), (999, .malformedPayload), (1000 + 366 * 86400, .limitExceeded)] {
            var o = e.json.objectValue!
            o["expiresAt"] = .number(Double(bad))
            let error = #expect(throws: ModelError.self) { try MessageEnvelope(json: .object(o)) }
            #expect(error?.kind == kind, "expiresAt \(bad): \(String(describing: error))")
        }
    }

    @Test func signsAndRefusesTampering() throws {
        let k = IdentityKeys.generate()
        let e = MessageEnvelope.make(text: "line one\nline two", from: "did:key:zA", to: "did:key:zB", sentAt: 5, signer: k.ed25519)
        let back = try MessageEnvelope(json: JSONParser.parse(e.json.canonicalText))
        #expect(back == e && back.isSigned(by: k.ed25519.publicKey))
        var changed = e
        changed.text = "line one\nline 2"
        #expect(!changed.isSigned(by: k.ed25519.publicKey))
        #expect(!e.isSigned(by: IdentityKeys.generate().ed25519.publicKey))
    }

    @Test func limits() {
        #expect(MessageEnvelope.textProblem("") != nil)
        #expect(MessageEnvelope.textProblem(String(repeating: "x", count: 4097)) != nil)
        #expect(MessageEnvelope.textProblem(String(repeating: "x", count: 4096)) == nil)
        #expect(MessageEnvelope.textProblem("esc\u{1B}[2J") != nil)
    }
}

func sends(_ a: [MailboxStateMachine.Action]) -> [[UInt8]] { a.compactMap { if case .send(let b) = $0 { b } else { nil } } }
