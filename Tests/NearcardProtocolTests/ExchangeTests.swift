import NearcardCrypto
import NearcardModel
@testable import NearcardProtocol
import Testing

let now: Int64 = 1_795_000_000

func party(_ name: String, fields: Set<CardField> = [.name, .company, .title]) -> LocalParty {
    LocalParty(keys: IdentityKeys.generate(), name: name,
               card: Card(name: name, email: "\(name.lowercased())@example.org", company: "\(name) Ltd", title: "Engineer"),
               policy: SharingPolicy(fields: fields), routeHints: [RouteRecord.Hint(host: "192.0.2.1", port: 7447)])
}

func machine(_ role: NoiseXXHandshake.Role, _ p: LocalParty, expected: ExpectedPeer = ExpectedPeer()) -> ExchangeStateMachine {
    ExchangeStateMachine(role: role, local: p, expected: expected, ephemeralKey: X25519.PrivateKey(),
                         sasNonce: Sodium.randomBytes(32), mailboxToken: Sodium.randomBytes(32))
}

/// Two state machines joined in memory: frames go straight across, in order.
struct Pair {
    var i: ExchangeStateMachine
    var r: ExchangeStateMachine
    var iEvents: [ExchangeStateMachine.Action] = []
    var rEvents: [ExchangeStateMachine.Action] = []
    /// Frames in flight, for tests that tamper with or drop them.
    var toR: [[UInt8]] = []
    var toI: [[UInt8]] = []
    /// Every frame sent, in order, by direction.
    var transcript: [(toResponder: Bool, bytes: [UInt8])] = []

    init(_ a: LocalParty, _ b: LocalParty, expected: ExpectedPeer = ExpectedPeer()) {
        i = machine(.initiator, a, expected: expected)
        r = machine(.responder, b)
    }

    mutating func collect(_ actions: [ExchangeStateMachine.Action], fromInitiator: Bool) {
        for a in actions {
            if case .send(let bytes) = a {
                transcript.append((fromInitiator, bytes))
                if fromInitiator { toR.append(bytes) } else { toI.append(bytes) }
            }
            if fromInitiator { iEvents.append(a) } else { rEvents.append(a) }
        }
    }

    /// Delivers frames until both sides are quiet.
    mutating func pump() {
        while !toR.isEmpty || !toI.isEmpty {
            if !toR.isEmpty { let f = toR.removeFirst(); collect(r.receive(f, now: now), fromInitiator: false) }
            if !toI.isEmpty { let f = toI.removeFirst(); collect(i.receive(f, now: now), fromInitiator: true) }
        }
    }

    mutating func start() {
        collect(i.start(), fromInitiator: true)
        pump()
    }

    mutating func decide(initiator: Bool, accept: Bool, message: String? = nil) {
        if initiator { collect(i.decide(accept: accept, message: message, now: now), fromInitiator: true) } else {
            collect(r.decide(accept: accept, message: message, now: now), fromInitiator: false)
        }
        pump()
    }
}

extension [ExchangeStateMachine.Action] {
    var identified: PeerIdentity? { for a in self { if case .identified(let p) = a { return p } }; return nil }
    var completed: ExchangeOutcome? { for a in self { if case .completed(let o) = a { return o } }; return nil }
    var failure: ProtocolError? { for a in self { if case .failed(let e, _) = a { return e } }; return nil }
    var failedByPeer: Bool? { for a in self { if case .failed(_, let p) = a { return p } }; return nil }
}

@Suite struct ExchangeTests {
    @Test func bothSidesCompleteWithTheSameSASAndEachOthersCards() throws {
        let a = party("Ada"), b = party("Grace", fields: [.name, .email])
        var pair = Pair(a, b)
        pair.start()
        let seenByI = try #require(pair.iEvents.identified)
        let seenByR = try #require(pair.rEvents.identified)
        #expect(seenByI.sas == seenByR.sas, "both screens show the same code")
        #expect(seenByI.sas.count == 7)
        #expect(seenByI.did == b.identity.did && seenByR.did == a.identity.did)
        #expect(seenByI.fingerprint == b.identity.fingerprint && seenByR.fingerprint == a.identity.fingerprint)
        #expect(seenByI.name == "Grace")
        #expect(pair.i.awaitsLocalDecision && pair.r.awaitsLocalDecision)

        pair.decide(initiator: false, accept: true, message: "Nice to meet you")
        #expect(pair.iEvents.completed == nil, "nothing completes before both consent")
        pair.decide(initiator: true, accept: true, message: "Likewise!")
        let oi = try #require(pair.iEvents.completed)
        let or = try #require(pair.rEvents.completed)
        #expect(oi.handshakeHash == or.handshakeHash)
        #expect(oi.theirPayload.payload == or.myPayload)
        #expect(or.theirPayload.payload == oi.myPayload)
        #expect(oi.theirPayload.payload.cardFields == b.card.filtered(to: [.name, .email]))
        #expect(or.theirPayload.payload.cardFields == a.card.filtered(to: [.name, .company, .title]))
        #expect(oi.myMessage == "Likewise!" && oi.theirMessage == "Nice to meet you")
        #expect(or.myMessage == "Nice to meet you" && or.theirMessage == "Likewise!")
        #expect(oi.graphEdgeID == or.graphEdgeID)
        // Each holds the route the other issued for it, with the issuer's token.
        #expect(oi.theirRoute == or.myRoute)
        #expect(or.theirRoute == oi.myRoute)
        #expect(oi.theirRoute.hints == [RouteRecord.Hint(host: "192.0.2.1", port: 7447)])
        #expect(pair.i.isFinished && pair.r.isFinished)
    }

    /// A node starts a session with its last-read card and reads it again while waiting for the peer:
    /// the card sent is the one given last before it was made; later, or another identity's, changes nothing.
    @Test func theCardSentIsTheOneRefreshedBeforeItIsMade() throws {
        let a = party("Ada"), b = party("Grace")
        var pair = Pair(a, b)
        pair.start()
        var newer = b
        newer.card.title = "Rear Admiral"
        newer.policy = SharingPolicy(fields: [.name, .title])
        let stranger = pair.r.refreshLocal(party("Grace")), fresher = pair.r.refreshLocal(newer)
        #expect(!stranger, "another identity under the same name")
        #expect(fresher)
        pair.decide(initiator: false, accept: true)
        pair.decide(initiator: true, accept: true)
        let oi = try #require(pair.iEvents.completed)
        #expect(oi.theirPayload.payload.cardFields == newer.card.filtered(to: [.name, .title]))
        let late = pair.r.refreshLocal(b)
        #expect(!late, "the card was made and sent")
    }

    @Test func declineOnEitherSideStoresNothingAndSaysWhy() {
        for decliner in [true, false] {
            var pair = Pair(party("Ada"), party("Grace"))
            pair.start()
            pair.decide(initiator: !decliner, accept: true)
            pair.decide(initiator: decliner, accept: false)
            #expect(pair.iEvents.completed == nil && pair.rEvents.completed == nil)
            let mine = decliner ? pair.iEvents : pair.rEvents
            let theirs = decliner ? pair.rEvents : pair.iEvents
            #expect(mine.failure?.code == .declined && mine.failedByPeer == false)
            #expect(theirs.failure?.code == .declined && theirs.failedByPeer == true)
            #expect(theirs.failure?.message.contains("peer declined") == true)
        }
    }

    /// A side whose policy requires fields the peer's card does not disclose ends the session with
    /// `declined` instead of `done`: neither side completes, so neither stores anything.
    @Test func aCardWithoutRequiredFieldsIsDeclinedAndNeitherSideCompletes() throws {
        var bot = party("Bot")
        bot.requiredFields = [.email]
        var pair = Pair(party("Ada", fields: [.name, .company]), bot)
        pair.start()
        pair.decide(initiator: true, accept: true)
        pair.decide(initiator: false, accept: true)
        #expect(pair.iEvents.completed == nil && pair.rEvents.completed == nil)
        #expect(pair.rEvents.failure?.code == .declined && pair.rEvents.failedByPeer == false)
        #expect(pair.rEvents.failure?.message.contains("does not disclose email") == true)
        #expect(pair.iEvents.failure?.code == .declined && pair.iEvents.failedByPeer == true)
        // Disclosing it, the same policy completes.
        var ok = Pair(party("Ada", fields: [.name, .email]), bot)
        ok.start()
        ok.decide(initiator: true, accept: true)
        ok.decide(initiator: false, accept: true)
        #expect(ok.iEvents.completed != nil && ok.rEvents.completed != nil)
    }

    @Test func timeoutAbortReachesThePeer() {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.start()
        pair.collect(pair.r.abort(ProtocolError(.consentTimeout, "nobody answered within 60 s")), fromInitiator: false)
        pair.pump()
        #expect(pair.iEvents.failure?.code == .consentTimeout)
        #expect(pair.iEvents.failedByPeer == true)
        #expect(pair.i.isFinished && pair.r.isFinished)
    }

    /// The initiator expects a fingerprint (from discovery); someone else answers: exposed, no SAS shown.
    @Test func advertisedFingerprintMustBeProven() {
        let real = party("Grace"), impostor = party("Mallory")
        var pair = Pair(party("Ada"), impostor, expected: ExpectedPeer(fingerprint: real.identity.fingerprint))
        pair.start()
        #expect(pair.iEvents.identified == nil)
        #expect(pair.iEvents.failure?.code == .identityMismatch)
        #expect(pair.rEvents.failure?.code == .identityMismatch, "the impostor is told")
    }

    /// A man in the middle runs one session with each victim: each sees a different SAS, and the
    /// chance that the codes agree is 1 in 10^6 per attempt because of the commitment.
    @Test func manInTheMiddleSeesDifferentSAS() {
        let ada = party("Ada"), grace = party("Grace"), mallory = party("Mallory")
        var toAda = Pair(ada, mallory)    // Ada dials "Grace", Mallory answers
        var toGrace = Pair(mallory, grace) // Mallory dials Grace
        toAda.start()
        toGrace.start()
        let adaSees = toAda.iEvents.identified!, graceSees = toGrace.rEvents.identified!
        #expect(adaSees.sas != graceSees.sas)
        #expect(adaSees.did == mallory.identity.did, "and the proven DID is Mallory's, not Grace's")
    }

    @Test func replayedFramesFromAnotherSessionAreRefused() {
        var first = Pair(party("Ada"), party("Grace"))
        first.start()
        first.decide(initiator: true, accept: true)
        first.decide(initiator: false, accept: true)
        // Replay the initiator's recorded frames into a fresh responder.
        var fresh = machine(.responder, party("Grace"))
        var actions: [ExchangeStateMachine.Action] = []
        for (toResponder, bytes) in first.transcript where toResponder {
            actions += fresh.receive(bytes, now: now)
        }
        #expect(actions.completed == nil)
        #expect(actions.identified == nil)
        #expect(actions.failure != nil)
    }

    @Test func tamperedFrameEndsTheSession() {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.collect(pair.i.start(), fromInitiator: true)                                      // m1
        pair.collect(pair.r.receive(pair.toR.removeFirst(), now: now), fromInitiator: false)  // m2
        pair.collect(pair.i.receive(pair.toI.removeFirst(), now: now), fromInitiator: true)   // m3 + hello
        #expect(pair.toR.count == 2)
        var hello = pair.toR.removeLast()
        hello[hello.count / 2] ^= 0x01
        pair.toR.append(hello)
        pair.pump()
        #expect(pair.rEvents.failure?.code == .decryptFailed)
        #expect(pair.iEvents.identified == nil && pair.rEvents.identified == nil)
        #expect(pair.r.isFinished)
    }

    @Test func messagesOverTheLimitAreRefused() {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.start()
        pair.collect(pair.i.decide(accept: true, message: String(repeating: "x", count: 141), now: now), fromInitiator: true)
        #expect(pair.iEvents.failure?.code == .protocolError)
    }

    @Test func wrongVersionTagIsRefused() throws {
        var noise = NoiseXXHandshake(role: .initiator, prologue: ExchangeStateMachine.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        var r = machine(.responder, party("Grace"))
        let actions = r.receive(try noise.writeMessage(payload: Array("nearcard/9".utf8)), now: now)
        #expect(actions.failure?.code == .unsupportedVersion)
    }

    @Test func garbageIsRefusedInEveryPhase() {
        for junk: [UInt8] in [[], [0], Array(repeating: 0xAB, count: 31), Array(repeating: 0xCD, count: 200)] {
            var r = machine(.responder, party("Grace"))
            let actions = r.receive(junk, now: now)
            #expect(actions.failure != nil || junk.count >= 32)
        }
    }
}
