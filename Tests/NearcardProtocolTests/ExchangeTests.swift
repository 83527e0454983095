import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

@Suite struct ExchangeTests {
    @Test func bothSidesCompleteWithTheSameSASAndEachOthersCards() throws {
        let a = party("Ada")
        let b = party("Grace", fields: [.name, .email])
        var pair = Pair(a, b)
        pair.start()
        // v2: the responder knows who asks; the initiator has the code, not yet who answers.
        let seenByR = try #require(pair.rEvents.identified)
        #expect(pair.iEvents.identified == nil, "the responder shows itself only when it accepts")
        let early = pair.iEvents.compactMap { if case .sasKnown(let s) = $0 { s } else { nil } }.first
        #expect(early == pair.rEvents.sas, "both screens show the same code")
        #expect(pair.rEvents.sas?.count == 7)
        #expect(seenByR.did == a.identity.did && seenByR.fingerprint == a.identity.fingerprint)
        #expect(pair.r.awaitsLocalDecision && !pair.i.awaitsLocalDecision)

        pair.decide(initiator: false, accept: true, message: "Nice to meet you")
        let seenByI = try #require(pair.iEvents.identified)
        #expect(seenByI.did == b.identity.did && seenByI.fingerprint == b.identity.fingerprint && seenByI.name == "Grace")
        #expect(pair.iEvents.sas == pair.rEvents.sas)
        #expect(pair.i.awaitsLocalDecision)
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
        #expect(oi.sas == pair.iEvents.sas && or.sas == oi.sas, "the outcome keeps the code both screens showed")
        // Each holds the route the other issued for it, with the issuer's token.
        #expect(oi.theirRoute == or.myRoute)
        #expect(or.theirRoute == oi.myRoute)
        #expect(oi.theirRoute.hints == [RouteRecord.Hint(host: "192.0.2.1", port: 7447)])
        #expect(pair.i.isFinished && pair.r.isFinished)
    }

    /// The initiator chooses the version (§21): a version-3 responder answers a version-2 hello in
    /// version 2 — each side sends the other only the seven version-2 fields and a seven-digest proof —
    /// and a version-3 hello in version 3; both outcomes say which.
    @Test(arguments: ExchangeVersions.spoken) func theResponderSpeaksTheInitiatorsVersion(_ version: Int) throws {
        var a = party("Ada", fields: Set(CardField.allCases))
        var b = party("Grace", fields: Set(CardField.allCases))
        for field in CardField.allCases where field.kind == .text && field != .name {
            a.card[text: field] = a.card[text: field] ?? "Ada's \(field.rawValue)"
            b.card[text: field] = b.card[text: field] ?? "Grace's \(field.rawValue)"
        }
        var pair = Pair(a, b)
        pair.i = ExchangeStateMachine(
            initiatorFor: a.local, sessionKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey(), sasNonce: Sodium.randomBytes(32),
            mailboxToken: Sodium.randomBytes(32), sealKey: X25519.PrivateKey(), psiRandomness: .fresh(), version: version)
        pair.start()
        pair.decide(initiator: false, accept: true, message: nil)
        pair.decide(initiator: true, accept: true, message: nil)
        let oi = try #require(pair.iEvents.completed)
        let or = try #require(pair.rEvents.completed)
        #expect(oi.version == version && or.version == version && pair.r.version == version)
        let carried = Set(CardField.fields(ofVersion: version))
        #expect(oi.theirPayload.payload.cardFields == b.card.filtered(to: carried))
        #expect(or.theirPayload.payload.cardFields == a.card.filtered(to: carried))
        #expect(or.theirPayload.disclosure.map { $0.fields.count + $0.hiddenCount } == SelectiveDisclosure.digestCount(version: version))
    }

    /// The machine asks for this side's card once, after its first flight (so the store is read while
    /// the peer computes); the card it is handed is the one sent; a second one changes nothing.
    @Test func theCardIsAskedForOnceAfterTheFirstFlightAndTheOneHandedOverIsSent() throws {
        let a = party("Ada")
        let b = party("Grace")
        var first = initiator(a)
        let opening = first.start()
        guard opening.count == 3, case .send = opening[0], case .arm(.handshake) = opening[1], case .loadCard = opening[2] else {
            Issue.record("the first actions are message 1, the handshake timer, then the card request: \(opening)")
            return
        }
        var pair = Pair(a, b)
        pair.holdCards = [false]
        pair.start()
        #expect(pair.askedForCard == [true, false], "each side asked once")
        var newer = b.localCard
        newer.card.title = "Rear Admiral"
        newer.policy = SharingPolicy(fields: [.name, .title])
        pair.loadCard(initiator: false, newer)
        pair.loadCard(initiator: false, b.localCard)
        pair.decide(initiator: false, accept: true)
        pair.decide(initiator: true, accept: true)
        let oi = try #require(pair.iEvents.completed)
        #expect(oi.theirPayload.payload.cardFields == newer.card.filtered(to: [.name, .title]), "the first card handed over, not the second")
        #expect(pair.askedForCard.count == 2)
    }

    /// A responder that accepted makes its card while the initiator decides (after its acceptance is on
    /// its way, before anything more is sent) and sends that card, unchanged, once the initiator
    /// accepts: made at the earlier time, it carries that time. The initiator, which accepts second,
    /// makes its card as it accepts. A declining initiator gets nothing of it.
    @Test func theResponderMakesItsCardWhileTheInitiatorDecides() throws {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.prepareTime = now - 7
        pair.start()
        pair.decide(initiator: false, accept: true)
        #expect(pair.preparedCard == [false], "the responder, once its acceptance was out")
        let sentByR = pair.transcript.filter { !$0.toResponder }.count
        pair.decide(initiator: true, accept: true)
        #expect(pair.preparedCard == [false], "the initiator accepted second: its card left with its acceptance")
        let or = try #require(pair.rEvents.completed)
        let oi = try #require(pair.iEvents.completed)
        #expect(or.myPayload.timestamp == now - 7 && oi.theirPayload.payload.timestamp == now - 7, "the card made ahead is the one sent")
        #expect(oi.myPayload.timestamp == now)
        #expect(pair.transcript.filter { !$0.toResponder }.count > sentByR)

        var declined = Pair(party("Ada"), party("Grace"))
        declined.start()
        declined.decide(initiator: false, accept: true)
        let before = declined.transcript.filter { !$0.toResponder }.count
        declined.decide(initiator: true, accept: false)
        #expect(declined.transcript.filter { !$0.toResponder }.count == before, "no card follows a refusal")
        #expect(declined.rEvents.failure?.code == .declined)
    }

    /// A person can accept before the store answered: the acceptance waits for the card and leaves with
    /// it, so the peer never sends its card to a side that has none to send back.
    @Test func anAcceptanceBeforeTheCardIsLoadedWaitsForIt() throws {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.holdCards = [false]
        pair.start()
        let before = pair.rEvents.count
        pair.decide(initiator: false, accept: true)
        #expect(pair.rEvents.count == before && pair.toI.isEmpty, "nothing sent yet: no card to follow the decision")
        #expect(pair.iEvents.identified == nil && !pair.r.isFinished)
        pair.loadCard(initiator: false)
        pair.pump()
        pair.decide(initiator: true, accept: true)
        #expect(pair.iEvents.completed != nil && pair.rEvents.completed != nil)
    }

    /// An outage during consent is not a decision: the side that accepted waits the consent time and a
    /// short grace for the peer's own verdict, then ends with timeout ("never arrived"), not
    /// consent_timeout; only a side whose own person did not decide ends with consent_timeout.
    /// §6.1, §19 (revision 2.2): a name on the wire holding a bidirectional control — the identity's in a
    /// hello or an acceptance, an invitation's — is `bad_identity`, whatever else is right; a name
    /// without one is read as it is.
    @Test func aBidiControlInANameIsBadIdentity() throws {
        func identity(_ name: String) -> JSONValue {
            [
                "did": "did:key:zDnaexample", "name": .string(name), "pubKey": .string(Base64.encode([UInt8](repeating: 1, count: 32))),
                "signPubKey": .string(Base64.encode([UInt8](repeating: 2, count: 32))),
                "signature": .string(Base64.encode([UInt8](repeating: 3, count: 64))),
            ]
        }
        #expect(try ExchangeMessage.Identity(json: identity("Ευάγγελος 🦊"), in: "hello").name == "Ευάγγελος 🦊")
        for control: Unicode.Scalar in ["\u{202A}", "\u{202E}", "\u{2066}", "\u{2069}"] {
            #expect {
                try ExchangeMessage.Identity(json: identity("Eve\(control)gnp.exe"), in: "hello")
            } throws: { error in
                let e = error as? ProtocolError
                return e?.code == .badIdentity && e?.message.contains("bidirectional control (U+\(String(control.value, radix: 16, uppercase: true)))") == true
            }
        }
        let invitation = Invitation(
            fingerprint: "4b01d34bbfee55b5", name: "Eve\u{202E}gnp.exe", addresses: ["192.0.2.7:7447"], id: [UInt8](0..<8),
            secret: [UInt8](0..<16), expires: 1)
        #expect { try Invitation(text: invitation.text) } throws: { ($0 as? ProtocolError)?.code == .badIdentity }
    }

    @Test func silenceDuringConsentIsATimeoutNotADecision() throws {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.start()
        let accepted = pair.r.decide(accept: true, message: nil, now: now) // sent, but the network is down: never delivered
        #expect(sends(accepted).count == 1)
        let atConsentEnd = pair.r.timerFired(.consent, after: 60)
        #expect(atConsentEnd.failure == nil && atConsentEnd.armed == [.peerDecision], "a grace for the peer's verdict")
        #expect(pair.r.timerFired(.consent, after: 60).isEmpty, "the consent timer is no longer the one running")
        let silence = pair.r.timerFired(.peerDecision, after: 5)
        #expect(silence.failure?.code == .timeout && silence.failure?.message.contains("never arrived") == true)
        // Ada never heard Grace's decision (v2: the responder decides first): she waited on Grace, so
        // hers is the same grace, then timeout — not a decision of hers.
        let waiting = pair.i.timerFired(.consent, after: 60)
        #expect(waiting.failure == nil && waiting.armed == [.peerDecision])
        #expect(pair.i.timerFired(.peerDecision, after: 5).failure?.code == .timeout)
        // A person who was asked and did not decide: consent_timeout, a decision (not) made.
        var asked = Pair(party("Ada"), party("Grace"))
        asked.start()
        asked.decide(initiator: false, accept: true)
        #expect(asked.iEvents.identified != nil, "Ada is asked once Grace accepted and showed herself")
        #expect(asked.i.timerFired(.consent, after: 60).failure?.code == .consentTimeout)
    }

    /// Each phase arms its timer once, when it begins (§12: a phase's time is its total, not per step);
    /// a timer that runs out ends the session with the right code and tells the peer; a timer the state
    /// no longer runs is ignored.
    @Test func eachStateArmsItsTimerAndATimeoutEndsTheSession() throws {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.start()
        #expect(pair.iEvents.armed == [.handshake, .consent], "no step of the handshake restarts its 10 s")
        #expect(pair.rEvents.armed == [.handshake, .consent])
        #expect(pair.r.timerFired(.handshake, after: 10).isEmpty, "a handshake timer firing late, during consent, is stale")
        #expect(pair.r.timerFired(.cards, after: 30).isEmpty)
        pair.collect(pair.r.timerFired(.consent, after: 60), fromInitiator: false)
        pair.pump()
        #expect(pair.rEvents.failure?.code == .consentTimeout && pair.rEvents.failure?.message == "no decision within 60 s")
        // The peer is told no more than a person's "no" would tell it (§8, revision 2.2): declined.
        #expect(pair.iEvents.failure?.code == .declined && pair.iEvents.failedByPeer == true, "the peer is told: \(String(describing: pair.iEvents.failure))")

        var cards = Pair(party("Ada"), party("Grace"))
        cards.start()
        cards.decide(initiator: false, accept: true)
        // Ada's card goes with her acceptance; hold her frames so she waits for Grace's card.
        cards.collect(cards.i.decide(accept: true, message: nil, now: now), fromInitiator: true)
        cards.toR.removeAll()
        #expect(cards.iEvents.armed.last == .cards)
        let timedOut = cards.i.timerFired(.cards, after: 30)
        #expect(timedOut.failure?.code == .timeout && timedOut.failure?.message == "no progress within 30 s")
        #expect(cards.i.isFinished)

        var silent = initiator(party("Ada"))
        _ = silent.start()
        let noAnswer = silent.timerFired(.handshake, after: 10)
        #expect(noAnswer.failure?.code == .timeout && noAnswer.failure?.message == "no answer within 10 s during the handshake")
        #expect(noAnswer.sentCount == 0, "no channel yet to say anything on")
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
            #expect(theirs.failure?.message == "the peer declined", "no reason given, none made up")
            #expect(mine.failure?.message == "declined here")
        }
        // A reason stays on the side that declined (§8: a stranger learns nothing of who or what said
        // no): the refusal on the wire carries none, and the peer reads "the peer declined".
        for reason in ["the check codes differ", "not on the allowlist"] {
            var pair = Pair(party("Ada"), party("Grace"))
            pair.start()
            pair.collect(pair.r.decide(accept: false, message: nil, reason: reason, now: now), fromInitiator: false)
            pair.pump()
            #expect(pair.iEvents.failure?.message == "the peer declined")
            #expect(pair.rEvents.failure?.message == "declined here: \(reason)")
        }
        // An older node's reason is read and shown (receivers accept both forms); a bare "declined" is not said twice.
        #expect(ExchangeStateMachine.peerDeclined("busy day") == "the peer declined: busy day")
        #expect(ExchangeStateMachine.peerDeclined("declined") == "the peer declined")
    }

    /// A side whose policy requires fields the peer's card does not disclose ends the session with
    /// `declined` instead of `done`: neither side completes, so neither stores anything.
    @Test func aCardWithoutRequiredFieldsIsDeclinedAndNeitherSideCompletes() throws {
        var bot = party("Bot")
        bot.requiredFields = [.email]
        var pair = Pair(party("Ada", fields: [.name, .company]), bot)
        pair.start()
        pair.decide(initiator: false, accept: true)
        pair.decide(initiator: true, accept: true)
        #expect(pair.iEvents.completed == nil && pair.rEvents.completed == nil)
        #expect(pair.rEvents.failure?.code == .declined && pair.rEvents.failedByPeer == false)
        #expect(pair.rEvents.failure?.message.contains("does not disclose email") == true)
        #expect(pair.iEvents.failure?.code == .declined && pair.iEvents.failedByPeer == true)
        // Disclosing it, the same policy completes.
        var ok = Pair(party("Ada", fields: [.name, .email]), bot)
        ok.start()
        ok.decide(initiator: false, accept: true)
        ok.decide(initiator: true, accept: true)
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
        let real = party("Grace")
        let impostor = party("Mallory")
        var pair = Pair(party("Ada"), impostor, expected: ExpectedPeer(fingerprint: real.identity.fingerprint))
        pair.start()
        pair.decide(initiator: false, accept: true)
        #expect(pair.iEvents.identified == nil)
        #expect(pair.iEvents.failure?.code == .identityMismatch)
        #expect(pair.rEvents.failure?.code == .identityMismatch, "the impostor is told")
    }

    /// A man in the middle runs one session with each victim: each sees a different SAS, and the
    /// chance that the codes agree is 1 in 10^6 per attempt because of the commitment.
    @Test func manInTheMiddleSeesDifferentSAS() {
        let ada = party("Ada")
        let grace = party("Grace")
        let mallory = party("Mallory")
        var toAda = Pair(ada, mallory) // Ada dials "Grace", Mallory answers
        var toGrace = Pair(mallory, grace) // Mallory dials Grace
        toAda.start()
        toGrace.start()
        toAda.decide(initiator: false, accept: true)
        let adaSees = toAda.iEvents.identified!
        #expect(toAda.iEvents.sas != nil && toAda.iEvents.sas != toGrace.rEvents.sas)
        #expect(adaSees.did == mallory.identity.did, "and the proven DID is Mallory's, not Grace's")
    }

    @Test func replayedFramesFromAnotherSessionAreRefused() throws {
        var first = Pair(party("Ada"), party("Grace"))
        first.start()
        first.decide(initiator: false, accept: true)
        first.decide(initiator: true, accept: true)
        // Replay the initiator's recorded frames into a fresh responder (message 1 is accepted: it is
        // only an ephemeral key; the rest was bound to the first session's keys).
        let frames = first.transcript.filter(\.toResponder).map(\.bytes)
        var (fresh, actions) = try responder(party("Grace"), reading: frames[0])
        for bytes in frames.dropFirst() {
            actions += fresh.receive(bytes, now: now)
        }
        #expect(actions.completed == nil)
        #expect(actions.identified == nil)
        #expect(actions.failure != nil)
    }

    @Test func tamperedFrameEndsTheSession() {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.collect(pair.i.start(), fromInitiator: true) // m1
        pair.stepToR() // m2
        pair.stepToI() // m3 + hello
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
        pair.decide(initiator: false, accept: true)
        pair.collect(pair.i.decide(accept: true, message: String(repeating: "x", count: 141), now: now), fromInitiator: true)
        #expect(pair.iEvents.failure?.code == .protocolError)
    }

    @Test func wrongVersionTagIsRefused() throws {
        var noise = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        let m1 = try noise.writeMessage(payload: Array("nearcard/9".utf8))
        do {
            _ = try responder(party("Grace"), reading: m1)
            Issue.record("nearcard/9 was accepted")
        } catch {
            #expect(error.code == .unsupportedVersion)
        }
    }

    /// Junk as message 1 is refused by the dispatch; junk later, in every state, ends the session.
    @Test func garbageIsRefusedInEveryPhase() throws {
        for junk: [UInt8] in [[], [0], Array(repeating: 0xAB, count: 31)] {
            #expect(throws: ProtocolError.self) { _ = try responder(party("Grace"), reading: junk) }
        }
        for steps in 0..<4 {
            var pair = Pair(party("Ada"), party("Grace"))
            pair.collect(pair.i.start(), fromInitiator: true)
            for _ in 0..<steps {
                pair.stepToR()
                pair.stepToI()
            }
            let junk = pair.i.receive(Array(repeating: 0xCD, count: 200), now: now)
            #expect(junk.failure != nil, "after \(steps) steps, in the \(pair.i.phaseName)")
            #expect(pair.i.isFinished)
        }
    }

    /// A contact that recognised the responder's tag (§6.2): its hello says nothing of it; the responder
    /// proves itself first, sealed under its presence key; only then does the initiator show itself.
    /// Whoever does not hold that key, or proves another DID, is refused before the initiator shows anything.
    @Test func aRecognisedContactProvesItselfFirst() throws {
        let ada = party("Ada")
        let grace = party("Grace")
        var pair = Pair(ada, grace, expected: ExpectedPeer(did: grace.identity.did, presenceKey: grace.localCard.presenceKey))
        pair.start()
        let seenByAda = try #require(pair.iEvents.identified, "Ada knows who answers before anyone decided")
        #expect(seenByAda.did == grace.identity.did)
        #expect(pair.rEvents.identified?.did == ada.identity.did, "Grace is asked knowing who asks")
        #expect(pair.i.awaitsLocalDecision && pair.r.awaitsLocalDecision, "both decide, in any order")
        pair.decide(initiator: true, accept: true)
        pair.decide(initiator: false, accept: true)
        #expect(pair.iEvents.completed?.theirPresenceKey == grace.localCard.presenceKey)
        #expect(pair.rEvents.completed?.theirPresenceKey == ada.localCard.presenceKey)

        // Someone else at that address (it cannot open a seal for Grace's key): Ada shows nothing.
        let mallory = party("Mallory")
        var impostor = Pair(ada, mallory, expected: ExpectedPeer(did: grace.identity.did, presenceKey: grace.localCard.presenceKey))
        impostor.start()
        #expect(impostor.iEvents.failure?.code == .identityMismatch)
        #expect(impostor.rEvents.identified == nil, "Mallory never learnt who dialled")
        // Another contact of Grace's holding her key answering as itself is not Grace either.
        var other = Pair(ada, mallory, expected: ExpectedPeer(did: grace.identity.did, presenceKey: mallory.localCard.presenceKey))
        other.start()
        #expect(other.iEvents.failure?.code == .identityMismatch && other.rEvents.identified == nil)
    }
}
