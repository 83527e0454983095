import Foundation
import NearcardDiscovery
import NearcardNode
import Testing

@Suite struct AdmissionTests {
    var limits: NodeLimits {
        var l = NodeLimits()
        l.maximumSessions = 4
        l.maximumSessionsPerAddress = 2
        l.connectionsPerAddressPerMinute = 3
        return l
    }

    func ticket(_ d: Admission.Decision) -> Admission.Ticket? { if case .admit(let t) = d { t } else { nil } }

    @Test func perAddressSessionsAndRate() throws {
        let a = Admission(limits: limits)
        let t1 = try #require(ticket(a.admit(address: "10.0.0.1", now: 0)))
        let t2 = try #require(ticket(a.admit(address: "10.0.0.1", now: 0)))
        for t in [t1, t2] { #expect(a.promote(t) && a.identify(t)) }
        // Two sessions in progress from one address: the third is refused, reported the first time only.
        #expect(a.admit(address: "10.0.0.1", now: 0) == .refuse(reason: "more than 2 sessions at once from one address", report: true))
        guard case .refuse(_, false) = a.admit(address: "10.0.0.1", now: 1) else {
            Issue.record("reported twice in a minute")
            return
        }
        a.release(t1)
        // One slot free, and the bucket (3 a minute) has one token left after two admissions: used now.
        #expect(ticket(a.admit(address: "10.0.0.1", now: 1)) != nil)
        guard case .refuse(let reason, _) = a.admit(address: "10.0.0.1", now: 2) else {
            Issue.record("rate not applied")
            return
        }
        #expect(reason.contains("a minute"))
        // The bucket refills over the minute.
        a.release(t2)
        #expect(ticket(a.admit(address: "10.0.0.1", now: 40)) != nil)
    }

    /// At the node's cap the oldest idle connection (no first message yet) is closed to admit a new
    /// one; with every connection a session in progress, a new one is refused.
    @Test func atTheCapAnIdleConnectionMakesRoom() throws {
        let a = Admission(limits: limits)
        let evicted = EvictionLog()
        var tickets: [Admission.Ticket] = []
        for i in 0..<4 {
            tickets.append(try #require(ticket(a.admit(address: "10.0.0.\(i)", now: Double(i), evict: { evicted.add(i) }))))
        }
        a.promote(tickets[0])
        a.identify(tickets[0])
        let fifth = try #require(ticket(a.admit(address: "10.0.0.9", now: 4, evict: { evicted.add(9) })))
        #expect(evicted.all == [1], "the oldest idle one, not the session in progress")
        #expect(a.openSessions == 4 && a.evictedConnections == 1)
        #expect(!a.holds(tickets[1]) && a.holds(fifth))
        a.release(tickets[1]) // its close arrives later: harmless
        #expect(a.openSessions == 4)
        for t in [tickets[2], tickets[3], fifth] { #expect(a.promote(t) && a.identify(t)) }
        guard case .refuse(let reason, _) = a.admit(address: "10.0.0.8", now: 11) else {
            Issue.record("cap not applied")
            return
        }
        #expect(reason.contains("all 4 connections taken (4 exchanges under way, 0 not yet identified)"), "\(reason)")
        #expect(!a.promote(tickets[1]), "an evicted connection cannot become a session")
    }

    /// Idle sockets from one address count apart from its sessions: a ninth idle socket from an address
    /// closes its oldest idle one, and an honest connection from that address still gets in.
    @Test func idleSocketsFromOneAddressDoNotLockItOut() throws {
        var l = NodeLimits()
        l.maximumSessionsPerAddress = 8
        let a = Admission(limits: l)
        let evicted = EvictionLog()
        for i in 0..<8 { _ = try #require(ticket(a.admit(address: "10.0.0.1", now: Double(i) / 10, evict: { evicted.add(i) }))) }
        let honest = try #require(ticket(a.admit(address: "10.0.0.1", now: 1)), "an honest peer behind the same address gets in")
        #expect(evicted.all == [0])
        #expect(a.promote(honest))
        #expect(a.openSessions == 8)
    }

    /// Half-open sessions (message 1, then silence) from many addresses fill the node: a newcomer from
    /// an address holding nothing still gets in, by closing one of the heaviest address's; one from an
    /// address already holding as many as any other is refused (busy) instead.
    @Test func theCapIsSharedFairlyBetweenAddresses() throws {
        var l = NodeLimits()
        l.maximumSessions = 32
        l.maximumSessionsPerAddress = 8
        let a = Admission(limits: l)
        let evicted = EvictionLog()
        var flood: [Int: Admission.Ticket] = [:]
        // 8 flooding addresses, 4 half-open sessions each: the node is full.
        for i in 0..<32 {
            let t = try #require(ticket(a.admit(address: "10.0.1.\(i % 8)", now: 0, evict: { evicted.add(i) })))
            #expect(a.promote(t))
            flood[i] = t
        }
        #expect(a.openSessions == 32)
        let honest = try #require(ticket(a.admit(address: "10.0.2.1", now: 1)), "an honest address gets in while the flood holds the node")
        #expect(evicted.all.count == 1)
        #expect(a.promote(honest))
        // The flood goes on: each new flood connection comes from an address holding 4 (or 3), never
        // more than the heaviest; the honest one (holding 1) is never the one closed.
        for round in 0..<200 {
            _ = a.admit(address: "10.0.1.\(round % 8)", now: 2, evict: {})
            #expect(a.holds(honest))
        }
        // Once it completed the handshake it is a session: never closed to make room.
        #expect(a.identify(honest))
        #expect(a.openSessions == 32)
    }

    /// IPv6 addresses share the cap by /64 prefix: one host with a whole /64 is one source.
    @Test func ipv6AddressesShareByPrefix() throws {
        #expect(Admission.source(of: "2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(Admission.source(of: "2001:db8:1:2:bbbb::9") == Admission.source(of: "2001:db8:1:2::5"))
        #expect(Admission.source(of: "192.0.2.1") == "192.0.2.1")
        var l = NodeLimits()
        l.maximumSessions = 16
        let a = Admission(limits: l)
        // 16 half-open sessions from 16 addresses of one /64 hold the node.
        for i in 0..<16 { a.promote(try #require(ticket(a.admit(address: "2001:db8::\(i + 1)", now: 0)))) }
        // Another /64 gets in, by closing one of the first /64's.
        let other = try #require(ticket(a.admit(address: "2001:db8:0:1::1", now: 1)))
        // A new address of the first /64 displaces one of its own /64's (a LAN shares one /64: an honest
        // neighbour of a flooder still gets in), never the other /64's.
        for i in 0..<50 {
            #expect(ticket(a.admit(address: "2001:db8::\(100 + i)", now: 1)) != nil)
            #expect(a.holds(other))
        }
        // An address of it that already holds as many as any of its /64 (one) is refused.
        guard case .refuse(let reason, _) = a.admit(address: "2001:db8::7", now: 1) else {
            Issue.record("an address holding the most of its /64 took another slot")
            return
        }
        #expect(reason.contains("all 16 connections taken"), "\(reason)")
    }

    /// On a node at least half full, a connection that has not completed its handshake within
    /// `identifyTimeoutWhenCrowded` is closed when another arrives; a session never is.
    @Test func aCrowdedNodeGivesUnidentifiedConnectionsAShortDeadline() throws {
        var l = NodeLimits()
        l.maximumSessions = 4
        let a = Admission(limits: l)
        let evicted = EvictionLog()
        let slow = try #require(ticket(a.admit(address: "10.0.0.1", now: 0, evict: { evicted.add(1) })))
        let done = try #require(ticket(a.admit(address: "10.0.0.2", now: 0, evict: { evicted.add(2) })))
        a.promote(slow)
        a.promote(done)
        a.identify(done)
        _ = try #require(ticket(a.admit(address: "10.0.0.3", now: 4.9)))
        #expect(evicted.all.isEmpty, "within its time")
        _ = try #require(ticket(a.admit(address: "10.0.0.4", now: 5.1)))
        #expect(evicted.all == [1] && a.holds(done))
    }
}

final class EvictionLog: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [Int] = []
    func add(_ i: Int) { lock.withLock { ids.append(i) } }
    var all: [Int] { lock.withLock { ids } }
}

@Suite struct PeerQueryTests {
    @Test func parsesAddressesAndNames() {
        #expect(PeerQuery(parsing: "192.0.2.1:7447") == .address(host: "192.0.2.1", port: 7447))
        #expect(PeerQuery(parsing: "[fe80::1%eth0]:7447") == .address(host: "fe80::1%eth0", port: 7447))
        #expect(PeerQuery(parsing: "laptop.local:9000") == .address(host: "laptop.local", port: 9000))
        #expect(PeerQuery(parsing: "Ada Lovelace") == .name("Ada Lovelace"))
        #expect(PeerQuery(parsing: "fe80::1") == .name("fe80::1"), "an IPv6 address needs brackets and a port")
        // Shaped like HOST:PORT but not one: malformed, never looked up as a name.
        for text in ["host:99999", "host:", ":7447", "[::1]7447", "[::1]:0"] {
            guard case .malformed = PeerQuery(parsing: text) else {
                Issue.record("\(text) is not malformed")
                continue
            }
        }
        #expect(PeerQuery(parsing: "Ada: the booth") == .name("Ada: the booth"), "a name may hold a colon")
    }

    @Test func matchesInstanceDisplayNameContactOrPeerIdPrefix() {
        var p = DiscoveredPeer(
            instanceName: "Ada Lovelace #2", hostName: "a.local", port: 7447,
            txt: TXTRecord(tag: "0123456789abcdef0123456789abcdef", name: "Ada Lovelace"), addresses: [])
        #expect(PeerQuery.name("ada lovelace #2").matches(p))
        #expect(PeerQuery.name("Ada Lovelace").matches(p))
        #expect(PeerQuery.name("0123").matches(p) && PeerQuery.name("01234567").matches(p))
        #expect(!PeerQuery.name("012").matches(p), "at least 4 hex digits")
        #expect(!PeerQuery.name("0123456789").matches(p), "a peer id is 8 digits: no more of the tag is matched")
        #expect(!PeerQuery.name("Grace").matches(p))
        // A private peer recognised as a contact answers to the contact's name and DID.
        p.txt.name = nil
        p.contact = RecognisedContact(did: "did:key:zDnaeGrace", name: "Grace Hopper", presenceKey: Array(0..<16))
        #expect(PeerQuery.name("grace hopper").matches(p) && PeerQuery.name("did:key:zDnaeGrace").matches(p))
        #expect(!PeerQuery.name("Ada Lovelace").matches(p))
    }

    /// Anyone can publish "Ada Lovelace": a name two peers show is ambiguous, even when one of them
    /// holds it as its exact instance name, and the refusal lists both peer ids.
    @Test func aNameTwoPeersShowIsAmbiguous() {
        func peer(_ instance: String, _ id: String, _ name: String) -> DiscoveredPeer {
            DiscoveredPeer(instanceName: instance, hostName: "h.local", port: 7447, txt: TXTRecord(tag: id + id, name: name), addresses: [])
        }
        let real = peer("Ada Lovelace #2", "0123456789abcdef", "Ada Lovelace")
        let fake = peer("Ada Lovelace", "fedcba9876543210", "Ada Lovelace")
        let other = peer("Grace", "aaaa000011112222", "Grace")
        guard case .failure(let e) = PeerQuery.name("Ada Lovelace").select(from: [fake, real, other]) else {
            Issue.record("a name two peers show must not pick one")
            return
        }
        #expect(e.description.contains("01234567") && e.description.contains("fedcba98"))
        #expect(try! PeerQuery.name("Ada Lovelace #2").select(from: [fake, real, other]).get() == real, "an instance name only one peer shows")
        #expect(try! PeerQuery.name("0123").select(from: [fake, real, other]).get() == real)
        #expect(try! PeerQuery.name("Grace").select(from: [fake, real, other]).get() == other)
        #expect(try! PeerQuery.name("Nobody").select(from: [fake, real]).get() == nil)
    }
}

/// A liveness check is not a probe (docs/PROTOCOL.md §14): a connection its peer closes before a byte,
/// within the check window, is given back to the address's rate, within its own budget; past that budget,
/// or once it has sent a byte, it counts like any connection.
@Suite struct LivenessCheckAdmissionTests {
    func ticket(_ d: Admission.Decision) -> Admission.Ticket? { if case .admit(let t) = d { t } else { nil } }

    @Test func checksDoNotSpendTheConnectionRate() throws {
        var limits = NodeLimits()
        limits.connectionsPerAddressPerMinute = 3
        limits.checksPerAddressPerMinute = 10
        let a = Admission(limits: limits)
        // Ten checks in one second from one address: each admitted, none spends the rate of 3 a minute.
        for i in 0..<10 {
            let t = try #require(ticket(a.admit(address: "10.0.0.1", now: Double(i) / 10)), "check \(i)")
            #expect(a.closedBeforeFirstByte(t, now: Double(i) / 10 + 0.01))
            a.release(t)
        }
        #expect(a.checksAnswered == 10)
        // The check budget is spent: the next silent close counts, and so the rate applies again.
        for i in 0..<3 {
            let t = try #require(ticket(a.admit(address: "10.0.0.1", now: 1 + Double(i) / 10)))
            #expect(!a.closedBeforeFirstByte(t, now: 1.05 + Double(i) / 10), "past the check budget")
            a.release(t)
        }
        guard case .refuse(let reason, _) = a.admit(address: "10.0.0.1", now: 1.5) else {
            Issue.record("connect-and-close past the check budget is not rate-limited")
            return
        }
        #expect(reason.contains("a minute"))
        // Another address has its own budget; a connection held open past the window, or one that sent
        // its first message, is no check.
        let slow = try #require(ticket(a.admit(address: "10.0.0.2", now: 0)))
        #expect(!a.closedBeforeFirstByte(slow, now: limits.checkWindow + 0.5))
        let spoke = try #require(ticket(a.admit(address: "10.0.0.2", now: 0)))
        a.promote(spoke)
        #expect(!a.closedBeforeFirstByte(spoke, now: 0.1))
        let oneByte = try #require(ticket(a.admit(address: "10.0.0.2", now: 0)))
        a.heard(oneByte)
        #expect(!a.closedBeforeFirstByte(oneByte, now: 0.1), "a byte, even less than a frame, makes it no check")
        // The budget refills over a minute.
        let later = try #require(ticket(a.admit(address: "10.0.0.1", now: 90)))
        #expect(a.closedBeforeFirstByte(later, now: 90.1))
    }
}

/// Refusals are said like probes (issue 49): each address's first at once while an interval has room
/// for it, then one summed line per address at the interval's end, at most 64 addresses with lines of
/// their own and the rest together — a flood from 200 addresses is 65 lines, not 200.
@Suite struct RefusalSummaryTests {
    @Test func aFloodFromTwoHundredAddressesIsSixtyFiveAddressesSaid() {
        let events = EventBus()
        final class Lines: @unchecked Sendable {
            let lock = NSLock()
            var said: [(address: String?, count: Int, seconds: Int)] = []
        }
        let lines = Lines()
        _ = events.observe { event in
            if case .rateLimited(let address, _, let count, let seconds) = event { lines.lock.withLock { lines.said.append((address, count, seconds)) } }
        }
        let counter = RefusalCounter(events: events, interval: 3600)
        for _ in 0..<3 {
            for n in 0..<200 { counter.record("more than 120 connections a minute from one address", from: "10.0.\(n / 250).\(n % 250)") }
        }
        let atOnce = lines.lock.withLock { lines.said }
        #expect(atOnce.count == 64 && atOnce.allSatisfy { $0.address != nil && $0.count == 1 && $0.seconds == 0 }, "\(atOnce.count) said at once")
        counter.flush()
        let summed = lines.lock.withLock { Array(lines.said.dropFirst(64)) }
        // The 64 said: their two later refusals each; the other 136 addresses: 3 each, on one line.
        #expect(summed.count == 65, "\(summed.count) summary lines")
        #expect(summed.filter { $0.address != nil }.allSatisfy { $0.count == 2 && $0.seconds == 3600 })
        #expect(summed.last?.address == nil && summed.last?.count == 136 * 3)
        #expect(summed.map(\.count).reduce(0, +) + 64 == 600, "every refusal counted once")
    }
}
