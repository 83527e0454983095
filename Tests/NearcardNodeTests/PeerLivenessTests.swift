import Foundation
import Testing

@testable import NearcardNode

/// The one liveness rule, without the network: a peer is shown until a check fails; a check is made
/// only when due (at most every `recheck`, less jitter), one that failed is retried with back-off, and
/// never more than `maximumInFlight` run at once, however many peers a face offers.
@Suite struct PeerLivenessTests {
    @Test func aPeerIsShownUntilACheckFails() {
        let l = PeerLiveness()
        #expect(l.isShown("ada") && l.isLive("ada") == nil, "announced, not checked yet: shown")
        #expect(l.begin("ada", now: Date(timeIntervalSince1970: 0)))
        #expect(l.record("ada", live: true, now: Date(timeIntervalSince1970: 0)) == .none, "it was shown already")
        #expect(l.begin("ada", now: Date(timeIntervalSince1970: 10)) == false, "not due within the recheck time")
        #expect(l.begin("ada", now: Date(timeIntervalSince1970: PeerLiveness.recheck)))
        #expect(l.record("ada", live: false, now: Date(timeIntervalSince1970: 20)) == .becameDead)
        #expect(!l.isShown("ada"))
        // Back-off: the next check is due a whole recheck later, then twice that.
        #expect(!l.begin("ada", now: Date(timeIntervalSince1970: 20 + PeerLiveness.recheck - 1)))
        #expect(l.begin("ada", now: Date(timeIntervalSince1970: 20 + PeerLiveness.recheck)))
        #expect(l.record("ada", live: false, now: Date(timeIntervalSince1970: 40)) == .none)
        #expect(!l.begin("ada", now: Date(timeIntervalSince1970: 40 + 2 * PeerLiveness.recheck - 1)))
        #expect(l.begin("ada", now: Date(timeIntervalSince1970: 40 + 2 * PeerLiveness.recheck)))
        #expect(l.record("ada", live: true, now: Date(timeIntervalSince1970: 80)) == .becameLive)
        // Announced anew: forgotten, shown again.
        #expect(l.record("bob", live: false) == .becameDead)
        #expect(l.forget("bob") == false && l.isShown("bob"))
    }

    @Test func checksInFlightAreBounded() {
        let l = PeerLiveness()
        let now = Date()
        let begun = (0..<100).filter { l.begin("peer \($0)", now: now) }
        #expect(begun.count == PeerLiveness.maximumInFlight && l.inFlight == PeerLiveness.maximumInFlight)
        #expect(!l.begin("peer \(begun[0])", now: now, force: true), "one already under way")
        l.record("peer \(begun[0])", live: true, now: now)
        #expect(l.inFlight == PeerLiveness.maximumInFlight - 1)
        l.forget("peer \(begun[1])")
        #expect(l.inFlight == PeerLiveness.maximumInFlight - 2, "a peer gone during its check frees its place")
        #expect(l.begin("peer 99", now: now))
    }

    /// An offer keeps the sweep going a little while: each check that ends starts the next one due.
    @Test func anOfferLastsAMoment() {
        let l = PeerLiveness()
        let t = Date(timeIntervalSince1970: 1000)
        #expect(!l.isOffered(now: t), "nothing offered: no checks at all")
        l.offered(now: t)
        #expect(l.isOffered(now: t.addingTimeInterval(PeerLiveness.offerLasts - 1)))
        #expect(!l.isOffered(now: t.addingTimeInterval(PeerLiveness.offerLasts + 1)))
    }
}
