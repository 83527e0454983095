import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

/// A peer that speaks Noise correctly but sends whatever messages a test asks for: for the tests that
/// every message is refused in every state where it does not belong, and for a dishonest peer.
struct RawPeer {
    let party: Party
    var noise: NoiseXXHandshake
    var transport: NoiseTransport?
    let role: NoiseXXHandshake.Role
    /// The exchange version its hello speaks: 2, as the peers these tests were written for.
    var version = 2
    var h: [UInt8] { noise.handshakeHash }

    init(role: NoiseXXHandshake.Role, party: Party) {
        self.role = role
        self.party = party
        // A per-session static key, as §5 asks.
        noise = NoiseXXHandshake(role: role, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
    }

    mutating func encrypt(_ m: ExchangeMessage) -> [UInt8] { try! transport!.encrypt(m.encoded) }

    mutating func decrypt(_ frames: [[UInt8]]) -> [ExchangeMessage] {
        frames.compactMap { f in (try? transport!.decrypt(f)).flatMap { try? ExchangeMessage(decoding: $0) } }
    }

    /// This party's identity for the session, signed by `signer` (default its own DID key) in `role`.
    func identity(signer: IdentityKeys? = nil, did: String? = nil, role: NoiseXXHandshake.Role? = nil) -> ExchangeMessage.Identity {
        var identity = ExchangeMessage.Identity(
            did: did ?? party.identity.did, name: party.name, pubKey: party.keys.x25519.publicKey.rawRepresentation,
            signPubKey: party.keys.ed25519.publicKey.rawRepresentation)
        identity.signature = try! (signer ?? party.keys).p256.signature(
            for: ExchangeMessage.Identity.signingInput(identity.signedObject(role: role ?? self.role, handshakeHash: h)))
        return identity
    }

    func hello(commit: [UInt8], signer: IdentityKeys? = nil, did: String? = nil) -> ExchangeMessage {
        .hello(.init(sasCommit: commit, identity: identity(signer: signer, did: did), version: version))
    }
}

/// Runs a real responder against a raw initiator up to the point where the responder has sent its nonce.
struct RawInitiatorSession {
    var raw: RawPeer
    var responder: ExchangeStateMachine
    var nonce = Sodium.randomBytes(32)
    var responderNonce: [UInt8] = []
    /// What the responder sealed for a contact (a hello without identity).
    var sealedIdentity: [UInt8]?
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
        if case .nonce(let n, let sealed)? = raw.decrypt(sends(actions)).first {
            responderNonce = n
            sealedIdentity = sealed
        }
        return actions
    }

    mutating func send(_ m: ExchangeMessage) -> [ExchangeStateMachine.Action] { responder.receive(raw.encrypt(m), now: now) }
}

@Suite struct RawPeerTests {
    static let outOfPlace: [ExchangeMessage] = [
        .nonce(sasNonce: Array(repeating: 1, count: 32), sealedIdentity: nil), .sasReveal(nonce: Array(repeating: 1, count: 32), identity: nil),
        .decision(accept: true, reason: nil, identity: nil), .card(payload: ["x": 1], message: nil, presenceKey: Array(repeating: 2, count: 16)),
        .done, .confirm,
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
    @Test(arguments: [
        ExchangeMessage.decision(accept: true, reason: nil, identity: nil),
        .card(payload: ["x": 1], message: nil, presenceKey: Array(repeating: 2, count: 16)), .done, .confirm,
    ])
    func refusedBeforeReveal(message: ExchangeMessage) throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        #expect(s.send(message).failure?.code == .protocolError)
    }

    /// While deciding, a card or done is refused (no card before both consent); so is the initiator's
    /// decision before the responder accepted and showed itself (§6: whom would it accept?).
    @Test(arguments: [
        ExchangeMessage.card(payload: ["x": 1], message: nil, presenceKey: Array(repeating: 2, count: 16)), .done,
        .sasReveal(nonce: Array(repeating: 1, count: 32), identity: nil), .decision(accept: true, reason: nil, identity: nil),
    ])
    func refusedWhileDeciding(message: ExchangeMessage) throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        #expect(s.send(.sasReveal(nonce: s.nonce, identity: nil)).identified != nil)
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
        let actions = s.send(.sasReveal(nonce: Sodium.randomBytes(32), identity: nil))
        #expect(actions.failure?.code == .badCommitment)
        #expect(actions.identified == nil, "no SAS is shown")
    }

    /// An identity signed by another key than its DID's, for another session, or in the other role: refused.
    @Test func helloWithoutAValidDIDProofIsRefused() throws {
        var s = try RawInitiatorSession()
        let forged = s.raw.hello(commit: Sodium.randomBytes(32), signer: IdentityKeys.generate())
        #expect(s.sendHello(forged).failure?.code == .badIdentity)

        var t = try RawInitiatorSession()
        let someoneElse = party("Grace").identity.did
        #expect(t.sendHello(t.raw.hello(commit: Sodium.randomBytes(32), did: someoneElse)).failure?.code == .badIdentity)

        var u = try RawInitiatorSession()
        let reflected = ExchangeMessage.hello(.init(sasCommit: Sodium.randomBytes(32), identity: u.raw.identity(role: .responder)))
        #expect(u.sendHello(reflected).failure?.code == .badIdentity)
    }

    /// §6's "exactly once": an identity twice, or never, is refused.
    @Test func anIdentityComesExactlyOnce() throws {
        var twice = try RawInitiatorSession()
        _ = twice.sendHello()
        #expect(twice.send(.sasReveal(nonce: twice.nonce, identity: twice.raw.identity())).failure?.code == .protocolError)

        var never = try RawInitiatorSession()
        _ = never.sendHello(.hello(.init(sasCommit: SAS.commitment(handshakeHash: never.raw.h, nonce: never.nonce), identity: nil)))
        #expect(never.sealedIdentity != nil, "asked to prove itself, the responder sealed its identity")
        #expect(never.send(.sasReveal(nonce: never.nonce, identity: nil)).failure?.code == .protocolError)
    }

    /// A stranger who asks the responder to prove itself first gets a sealed identity it cannot open
    /// (it does not hold the presence key), and nothing else identifying (§6.2).
    @Test func aSealedIdentityOpensOnlyWithThePresenceKey() throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello(.hello(.init(sasCommit: SAS.commitment(handshakeHash: s.raw.h, nonce: s.nonce), identity: nil)))
        let sealed = try #require(s.sealedIdentity)
        #expect(try Recall.open(sealed, presenceKey: Sodium.randomBytes(16), handshakeHash: s.raw.h) == nil, "a stranger's guess opens nothing")
        let opened = try #require(try Recall.open(sealed, presenceKey: s.grace.localCard.presenceKey, handshakeHash: s.raw.h))
        #expect(opened.did == s.grace.identity.did, "a contact holding Grace's presence key reads who answers")
        #expect(
            try Recall.open(sealed, presenceKey: s.grace.localCard.presenceKey, handshakeHash: Sodium.randomBytes(32)) == nil,
            "bound to this session's h")
    }

    /// A dishonest initiator consents, then sends a card signed for another session.
    @Test func cardBoundToAnotherSessionIsRefused() throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        _ = s.send(.sasReveal(nonce: s.nonce, identity: nil))
        _ = s.responder.decide(accept: true, message: nil, now: now)
        _ = s.send(.decision(accept: true, reason: nil, identity: nil))
        let mallory = s.responder.identifiedPeer
        #expect(mallory?.did == s.raw.party.identity.did)
        let wrongBinding = try ProximityPayload.make(
            card: s.raw.party.card, policy: s.raw.party.policy, keys: s.raw.party.keys,
            receiver: nil, sessionBinding: Sodium.randomBytes(32), ephemeralMessage: nil,
            sealedRoute: nil, now: now)
        let actions = s.send(.card(payload: wrongBinding.json, message: nil, presenceKey: Sodium.randomBytes(16)))
        #expect(actions.failure?.code == .badCard)
        #expect(actions.committed == nil)
    }

    @Test func unknownAndMalformedMessagesAreRefused() throws {
        for text in ["{\"type\":\"hello\"}", "{\"type\":\"gossip\"}", "[1]", "{\"type\":\"done\",\"extra\":1}", "not json", "{\"type\":\"confirm\",\"x\":1}"] {
            var s = try RawInitiatorSession()
            let actions = s.responder.receive(try s.raw.transport!.encrypt(Array(text.utf8)), now: now)
            #expect(actions.failure?.code == .protocolError, "\(text): \(actions.failure?.message ?? "accepted")")
        }
    }
}
