import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

/// Agreement (docs/PROTOCOL.md §11, version 2): an exchange cut at any frame ends with both sides
/// holding the contact or neither — the initiator's unconfirmed contact settled by the responder's
/// answer to its confirmation query ("held" exactly when the responder stored it).
@Suite struct AgreementTests {
    /// What each side holds after the session ended at a cut and the query (if any) was answered.
    struct Books: Equatable {
        var initiator: Bool
        var responder: Bool
    }

    /// Runs one exchange, delivering only the first `k` frames (both directions, in the order they were
    /// sent); then both sides lose the connection.
    func cut(after k: Int) -> (Books, unconfirmed: Bool) {
        var pair = Pair(party("Ada"), party("Grace"))
        var delivered = 0
        func pump() {
            while delivered < k, !(pair.toR.isEmpty && pair.toI.isEmpty) {
                if !pair.toR.isEmpty {
                    pair.stepToR()
                    delivered += 1
                    continue
                }
                pair.stepToI()
                delivered += 1
            }
        }
        pair.collect(pair.i.start(), fromInitiator: true)
        pump()
        if pair.r != nil, pair.r.awaitsLocalDecision { pair.collect(pair.r.decide(accept: true, message: nil, now: now), fromInitiator: false) }
        pump()
        if pair.i.awaitsLocalDecision { pair.collect(pair.i.decide(accept: true, message: nil, now: now), fromInitiator: true) }
        pump()
        let lost = ProtocolError(.connectionLost, "cut")
        pair.collect(pair.i.abort(lost), fromInitiator: true)
        if pair.r != nil { pair.collect(pair.r.abort(lost), fromInitiator: false) }
        let responderHolds = pair.rEvents.committed != nil
        let initiatorStored = pair.iEvents.committed != nil
        let confirmed = pair.iEvents.contains { if case .confirmed = $0 { true } else { false } }
        // The query, as §11 rules it: the responder answers "held" exactly when it stored the contact. (This
        // suite checks what the two machines store at every cut; the query itself — its answer from the
        // store, the withdrawal — runs for real in AgreementStoreTests and, over TCP, in FaultLabTests.)
        let initiatorHolds = initiatorStored && (confirmed || responderHolds)
        return (Books(initiator: initiatorHolds, responder: responderHolds), initiatorStored && !confirmed)
    }

    @Test func everyCutEndsWithBothBooksAgreeing() {
        var full = Pair(party("Ada"), party("Grace"))
        full.start()
        full.decide(initiator: false, accept: true)
        full.decide(initiator: true, accept: true)
        let frames = full.transcript.count
        #expect(frames == 13, "message 1–3, hello, nonce, sas-reveal, two decisions, two cards, done, done, confirm")
        var unsettled = 0
        for k in 0...frames {
            let (books, unconfirmed) = cut(after: k)
            #expect(books.initiator == books.responder, "cut after \(k) frames: \(books)")
            if unconfirmed { unsettled += 1 }
            if k == frames { #expect(books == Books(initiator: true, responder: true) && !unconfirmed) }
        }
        // Only the last round trip leaves the initiator in doubt (done or confirm lost).
        #expect(unsettled == 2)
    }

    /// A store that fails ends the exchange as a failure on that side, and the peer is told: an initiator
    /// whose store failed holds nothing and the responder never stores; a responder whose store refused
    /// (the exchange was withdrawn) leaves the initiator unconfirmed, to ask and withdraw.
    @Test func aFailedStoreFailsTheExchangeAndTellsThePeer() {
        var i = Pair(party("Ada"), party("Grace"))
        i.holdCommits = [true]
        i.start()
        i.decide(initiator: false, accept: true)
        i.decide(initiator: true, accept: true)
        i.collect(i.i.storeFailed(ProtocolError(.internalError, "disk full")), fromInitiator: true)
        i.pump()
        #expect(i.iEvents.failure?.code == .internalError && i.iEvents.unconfirmed == nil)
        #expect(i.rEvents.failure?.code == .internalError && i.rEvents.committed == nil, "the responder is told and stores nothing")

        var r = Pair(party("Ada"), party("Grace"))
        r.holdCommits = [false]
        r.start()
        r.decide(initiator: false, accept: true)
        r.decide(initiator: true, accept: true)
        r.collect(r.r.storeFailed(ProtocolError(.internalError, "withdrawn")), fromInitiator: false)
        r.pump()
        #expect(r.rEvents.failure != nil && r.iEvents.unconfirmed != nil, "the initiator stays unconfirmed until its query")
    }

    /// The responder stores on the initiator's `done`, not before: a responder that sent its own `done`
    /// and heard nothing stores nothing.
    @Test func theResponderStoresOnlyOnTheInitiatorsDone() {
        var pair = Pair(party("Ada"), party("Grace"))
        pair.holdCommits = [true]
        pair.start()
        pair.decide(initiator: false, accept: true)
        pair.decide(initiator: true, accept: true)
        #expect(pair.iEvents.committed != nil && pair.rEvents.committed == nil, "Ada's store is writing; Grace waits for her done")
        pair.commit(initiator: true)
        pair.pump()
        #expect(pair.rEvents.completed != nil && pair.iEvents.completed != nil)
    }
}

/// The private common-contacts step (docs/PROTOCOL.md §22) inside an exchange: it runs only when both
/// acceptances offer it, between the acceptances and the cards, and each side learns exactly which of
/// its own contacts the other holds.
@Suite struct CommonContactsExchangeTests {
    static func dids(_ names: [String]) -> [String] { names.map { "did:key:zDnae\($0)" } }

    func run(_ mine: [String]?, _ theirs: [String]?) -> Pair {
        var a = party("Ada")
        var b = party("Grace")
        a.localCard.commonContacts = mine
        b.localCard.commonContacts = theirs
        var pair = Pair(a, b)
        pair.start()
        pair.decide(initiator: false, accept: true)
        pair.decide(initiator: true, accept: true)
        return pair
    }

    @Test(
        arguments: [
            (["A", "B", "C"], ["C", "D"], ["C"]),
            (["A", "B"], ["C", "D"], []),
            (["A", "B"], ["B", "A"], ["A", "B"]),
            ([], ["A"], []),
        ] as [([String], [String], [String])])
    func eachSideLearnsTheIntersection(mine: [String], theirs: [String], common: [String]) throws {
        let pair = run(Self.dids(mine), Self.dids(theirs))
        let oi = try #require(pair.iEvents.completed)
        let or = try #require(pair.rEvents.completed)
        #expect(oi.commonContacts?.common == Set(Self.dids(common)) && or.commonContacts?.common == Set(Self.dids(common)))
        #expect(oi.commonContacts?.peerSetBound == 8 && or.commonContacts?.peerSetBound == 8, "sizes only up to the bucket")
        #expect(pair.transcript.count == 17, "13 frames and psi-1 … psi-4")
    }

    /// Off on either side: no PSI message at all, and the exchange completes as usual.
    @Test func offOnEitherSideTheExchangeGoesOnWithoutIt() throws {
        for (mine, theirs) in [(Self.dids(["A"]), nil), (nil, Self.dids(["A"])), (nil, nil)] as [([String]?, [String]?)] {
            let pair = run(mine, theirs)
            #expect(pair.iEvents.completed?.commonContacts == nil && pair.rEvents.completed?.commonContacts == nil)
            #expect(pair.transcript.count == 13)
        }
    }

    /// Past the rate with a peer (§22.3) the node withholds the step once it knows the peer: that side's
    /// acceptance does not offer it, so it does not run, and the exchange completes without it.
    @Test(arguments: [true, false]) func aWithheldStepIsNotOffered(withheldByInitiator: Bool) throws {
        var a = party("Ada")
        var b = party("Grace")
        a.localCard.commonContacts = Self.dids(["A", "B"])
        b.localCard.commonContacts = Self.dids(["B"])
        var pair = Pair(a, b)
        pair.start()
        // Each side knows the peer when its `identified` comes: the responder after the reveal, the
        // initiator once the responder accepted (and showed itself).
        if !withheldByInitiator { pair.r.withholdCommonContacts() }
        pair.decide(initiator: false, accept: true)
        if withheldByInitiator { pair.i.withholdCommonContacts() }
        pair.decide(initiator: true, accept: true)
        #expect(pair.iEvents.completed != nil && pair.rEvents.completed != nil)
        #expect(pair.iEvents.completed?.commonContacts == nil && pair.rEvents.completed?.commonContacts == nil)
        #expect(pair.transcript.count == 13, "no PSI message")
    }

    /// A PSI message nobody negotiated is a protocol error.
    @Test func anUnnegotiatedPSIMessageIsRefused() throws {
        var s = try RawInitiatorSession()
        _ = s.sendHello()
        _ = s.send(.sasReveal(nonce: s.nonce, identity: nil))
        _ = s.responder.decide(accept: true, message: nil, now: now)
        _ = s.send(.decision(accept: true, reason: nil, identity: nil))
        var psi = PSI.Session(role: .initiator, mine: ["did:key:zDnaeX"], randomness: .fresh())
        #expect(s.send(.psi(psi.start())).failure?.code == .protocolError)
    }
}
