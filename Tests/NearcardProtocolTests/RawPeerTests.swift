import NearcardCrypto
import NearcardModel
@testable import NearcardProtocol
import Testing

/// A peer that speaks Noise correctly but sends whatever messages a test asks for: for the tests that
/// every message is refused in every state where it does not belong, and for a dishonest peer.
struct RawPeer {
    let party: Party
    var noise: NoiseXXHandshake
    var transport: NoiseTransport?
    let role: NoiseXXHandshake.Role
    var h: [UInt8] { noise.handshakeHash }

    init(role: NoiseXXHandshake.Role, party: Party) {
        self.role = role
        self.party = party
        noise = NoiseXXHandshake(role: role, prologue: SessionKind.prologue, staticKey: party.keys.x25519, ephemeralKey: X25519.PrivateKey())
    }

    mutating func encrypt(_ m: ExchangeMessage) -> [UInt8] { try! transport!.encrypt(m.encoded) }

    mutating func decrypt(_ frames: [[UInt8]]) -> [ExchangeMessage] {
        frames.compactMap { f in (try? transport!.decrypt(f)).flatMap { try? ExchangeMessage(decoding: $0) } }
    }

    func hello(commit: [UInt8]? = nil, nonce: [UInt8]? = nil, signer: IdentityKeys? = nil, did: String? = nil) -> ExchangeMessage {
        var hello = ExchangeMessage.Hello(did: did ?? party.identity.did, name: party.name, signPubKey: party.keys.ed25519.publicKey.rawRepresentation,
                                          sasCommit: commit, sasNonce: nonce, signature: [])
        hello.signature = try! (signer ?? party.keys).p256.signature(for: ExchangeMessage.Hello.signingInput(hello.signedObject(role: role, handshakeHash: h)))
        return .hello(hello)
    }
}

func sends(_ actions: [ExchangeStateMachine.Action]) -> [[UInt8]] {
    actions.compactMap { if case .send(let b) = $0 { b } else { nil } }
}

/// Runs a real responder against a raw initiator up to the point where the responder has sent its hello.
struct RawInitiatorSession {
    var raw: RawPeer
    var responder: ExchangeStateMachine
    var nonce = Sodium.randomBytes(32)
    var responderNonce: [UInt8] = []
    /// The responder's party (its identity, for a card addressed to it).
    let grace: Party

    init() throws {
        raw = RawPeer(role: .initiator, party: party("Mallory"))
        grace = party("Grace")
        let opened = try NearcardProtocolTests.responder(grace, reading: try raw.noise.writeMessage(payload: SessionKind.exchange.tag))
        responder = opened.0
        // The card the machine asked for, handed over as the node does.
        _ = responder.cardLoaded(grace.localCard, now: now)
        let m2 = sends(opened.1)
        _ = try raw.noise.readMessage(m2[0])
        let m3 = try raw.noise.writeMessage()
        raw.transport = try raw.noise.split()
        // (Mutating inside #expect's autoclosure in an initializer crashed the test process.)
        let afterM3 = responder.receive(m3, now: now)
        #expect(sends(afterM3).isEmpty)
    }

    mutating func sendHello(_ m: ExchangeMessage? = nil) -> [ExchangeStateMachine.Action] {
        let actions = responder.receive(raw.encrypt(m ?? raw.hello(commit: SAS.commitment(handshakeHash: raw.h, nonce: nonce))), now: now)
        if case .hello(let h)? = raw.decrypt(sends(actions)).first { responderNonce = h.sasNonce ?? [] }
        return actions
    }

    mutating func send(_ m: ExchangeMessage) -> [ExchangeStateMachine.Action] { responder.receive(raw.encrypt(m), now: now) }
}

@Suite struct RawPeerTests {
    static let outOfPlace: [ExchangeMessage] = [
        .sasReveal(nonce: Array(repeating: 1, count: 32)), .decision(accept: true, reason: nil),
        .card(payload: ["x": 1], message: nil), .done,
    ]

    /// Before the hello, every other message is a protocol error.
    @Test(arguments: outOfPlace)
    func refusedBeforeHello(message: ExchangeMessage) throws {
        var s = try RawInitiatorSession()
        let actions = s.send(message)
        #expect(actions.failure?.code == .protocolError, "\(message.typeName)")
        #expect(actions.identified == nil)
    }

    /// After the hello and before the reveal, anything but sas-reveal is refused.
    @Test(arguments: [ExchangeMessage.decision(accept: true, reason: nil), .card(payload: ["x": 1], message: nil), .done])
    func refusedBeforeReveal(message: ExchangeMessage) throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        #expect(s.send(message).failure?.code == .protocolError)
    }

    /// While deciding, a card or done is refused (no card before both consent).
    @Test(arguments: [ExchangeMessage.card(payload: ["x": 1], message: nil), .done, .sasReveal(nonce: Array(repeating: 1, count: 32))])
    func refusedWhileDeciding(message: ExchangeMessage) throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        #expect(s.send(.sasReveal(nonce: s.nonce)).identified != nil)
        #expect(s.send(message).failure?.code == .protocolError)
    }

    @Test func helloTwiceIsRefused() throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        #expect(s.sendHello().failure?.code == .protocolError)
    }

    /// The initiator reveals a nonce other than the one it committed to (a grinding attempt).
    @Test func revealNotMatchingTheCommitmentIsRefused() throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        let actions = s.send(.sasReveal(nonce: Sodium.randomBytes(32)))
        #expect(actions.failure?.code == .badCommitment)
        #expect(actions.identified == nil, "no SAS is shown")
    }

    /// A hello signed by another key than its DID's, or for another session: refused.
    @Test func helloWithoutAValidDIDProofIsRefused() throws {
        var s = try RawInitiatorSession()
        let forged = s.raw.hello(commit: Sodium.randomBytes(32), signer: IdentityKeys.generate())
        #expect(s.sendHello(forged).failure?.code == .badIdentity)

        var t = try RawInitiatorSession()
        let someoneElse = party("Grace").identity.did
        #expect(t.sendHello(t.raw.hello(commit: Sodium.randomBytes(32), did: someoneElse)).failure?.code == .badIdentity)
    }

    /// A dishonest initiator consents, then sends a card signed for another session.
    @Test func cardBoundToAnotherSessionIsRefused() throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        _ = s.send(.sasReveal(nonce: s.nonce))
        _ = s.responder.decide(accept: true, message: nil, now: now)
        _ = s.send(.decision(accept: true, reason: nil))
        let grace = s.responder.identifiedPeer
        #expect(grace?.did == s.raw.party.identity.did)
        let wrongBinding = try ProximityPayload.make(card: s.raw.party.card, policy: s.raw.party.policy, keys: s.raw.party.keys,
                                                     receiver: nil, sessionBinding: Sodium.randomBytes(32), ephemeralMessage: nil,
                                                     sealedRoute: nil, now: now)
        let actions = s.send(.card(payload: wrongBinding.json, message: nil))
        #expect(actions.failure?.code == .badCard)
        #expect(actions.completed == nil)
    }

    @Test func unknownAndMalformedMessagesAreRefused() throws {
        for text in ["{\"type\":\"hello\"}", "{\"type\":\"gossip\"}", "[1]", "{\"type\":\"done\",\"extra\":1}", "not json"] {
            var s = try RawInitiatorSession()
            let actions = s.responder.receive(try s.raw.transport!.encrypt(Array(text.utf8)), now: now)
            #expect(actions.failure?.code == .protocolError, "\(text): \(actions.failure?.message ?? "accepted")")
        }
    }
}
