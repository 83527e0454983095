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
        a.promote(t1)
        a.promote(t2)
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
        let fifth = try #require(ticket(a.admit(address: "10.0.0.9", now: 10, evict: { evicted.add(9) })))
        #expect(evicted.all == [1], "the oldest idle one, not the session in progress")
        #expect(a.openSessions == 4 && a.evictedConnections == 1)
        #expect(!a.holds(tickets[1]) && a.holds(fifth))
        a.release(tickets[1]) // its close arrives later: harmless
        #expect(a.openSessions == 4)
        for t in [tickets[2], tickets[3], fifth] { a.promote(t) }
        guard case .refuse(let reason, _) = a.admit(address: "10.0.0.8", now: 11) else {
            Issue.record("cap not applied")
            return
        }
        #expect(reason.contains("limit of 4"))
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
