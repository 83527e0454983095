import NearcardCrypto
import NearcardModel
@testable import NearcardProtocol
import Testing

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
                        let (kind, noise) = try SessionDispatch.readFirstMessage(f, ephemeralKey: X25519.PrivateKey(), staticKey: { _ in recipientKey })
                        #expect(kind == .mail)
                        recipient = MailboxStateMachine(receivingAfter: noise)
                        actions = recipient!.start()
                    } catch {
                        recipientEvents.append(.failed(error, byPeer: false))
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
    var delivered: (String, Bool)? { for a in self { if case .delivered(let id, let d) = a { return (id, d) } }; return nil }
    var failure: ProtocolError? { for a in self { if case .failed(let e, _) = a { return e } }; return nil }
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

    /// The node that answers is not the contact (its static key differs from the pinned one): nothing is sent.
    @Test func senderRefusesANodeWithoutThePinnedKey() {
        let impostor = X25519.PrivateKey()
        var pair = MailPair(envelope: envelope(), token: token, senderKey: ada.x25519, recipientKey: impostor, pinned: grace.x25519.publicKey)
        var asked = false
        pair.run { _ in asked = true; return .success(false) }
        #expect(pair.senderEvents.failure?.code == .identityMismatch)
        #expect(!asked, "the message never left the sender")
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
                guard let (_, noise) = try? SessionDispatch.readFirstMessage(f, ephemeralKey: X25519.PrivateKey(), staticKey: { _ in grace.x25519 }) else { failed = true; break }
                recipient = MailboxStateMachine(receivingAfter: noise)
                _ = recipient!.start()
                continue
            }
            let actions = recipient!.receive(f)
            if actions.contains(where: { if case .authorize = $0 { true } else { false } }) { asked = true }
            if actions.failure != nil { failed = true; break }
        }
        #expect(failed && !asked)
    }

    @Test func dispatchKnowsBothKindsAndRefusesOthers() throws {
        for kind in SessionKind.allCases {
            var noise = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
            let (read, _) = try SessionDispatch.readFirstMessage(try noise.writeMessage(payload: kind.tag), ephemeralKey: X25519.PrivateKey(), staticKey: { _ in X25519.PrivateKey() })
            #expect(read == kind)
        }
        var noise = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        // Another protocol altogether is protocol_error (a probe, not a peer); another Nearcard version is
        // unsupported_version (a peer worth telling a person about).
        #expect { try SessionDispatch.readFirstMessage(try noise.writeMessage(payload: Array("gopher/1".utf8)), ephemeralKey: X25519.PrivateKey(), staticKey: { _ in X25519.PrivateKey() }) } throws: {
            ($0 as? ProtocolError)?.code == .protocolError
        }
        var other = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        #expect { try SessionDispatch.readFirstMessage(try other.writeMessage(payload: Array("nearcard-mail/3".utf8)), ephemeralKey: X25519.PrivateKey(), staticKey: { _ in X25519.PrivateKey() }) } throws: {
            ($0 as? ProtocolError)?.code == .unsupportedVersion && ($0 as? ProtocolError)?.message.contains("nearcard-mail/3") == true
        }
    }
}

@Suite struct MessageEnvelopeTests {
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
