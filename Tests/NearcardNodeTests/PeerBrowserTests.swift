import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardProtocol
import NearcardStore
import Testing

@testable import NearcardNode

/// Finding a peer by what a person calls it, over a `Discovery` that reports a fixed list: the answer
/// comes when the events say so, not on a polling tick; a name that several peers show, or none, is
/// refused with a reason and a kind the faces map. No upper bound on wall time is asserted (the rest of the
/// suite may hold the cooperative pool for a minute): a browse that waited for its limit instead of the
/// events would run into the 600 s limits below and fail at the suite's five-minute time limit.
@Suite(.timeLimit(.minutes(5))) struct PeerBrowserTests {
    static func peer(_ name: String?, tag: String, ip: String, instance: String? = nil) -> DiscoveredPeer {
        DiscoveredPeer(
            instanceName: instance ?? name ?? "nearcard-\(tag.prefix(8))", hostName: "nc-\(tag.suffix(16)).local", port: 7447,
            txt: TXTRecord(tag: tag, name: name), addresses: [PeerAddress(ip: ip, port: 7447, interfaceName: "lo", interfaceIndex: 1)])
    }

    let ada = Self.peer("Ada", tag: "4b01d34bbfee55b5" + "0000000000000001", ip: "192.0.2.1")
    let grace = Self.peer("Grace", tag: "9c2e11aa00ff1234" + "0000000000000002", ip: "192.0.2.2")
    let graceAgain = Self.peer("Grace (2)", tag: "0123456789abcdef" + "0000000000000003", ip: "192.0.2.3")

    @Test func aNameOrAPeerIdFindsItsPeerAsSoonAsItIsSeen() async throws {
        let lan = StaticDiscovery(peers: [ada, grace])
        let byName = try await PeerBrowser.find(.name("ada"), in: lan, filter: InterfaceFilter(deny: []), seconds: 600, settle: 0.05)
        #expect(byName.txt.tag == ada.txt.tag)
        let byPrefix = try await PeerBrowser.find(.name("9c2e"), in: lan, filter: InterfaceFilter(deny: []), seconds: 600, settle: 0.05)
        #expect(byPrefix.instanceName == "Grace")
        let target = DialTarget(discovered: byPrefix)
        #expect(
            target.expected == ExpectedPeer() && target.addresses.map(\.ip) == ["192.0.2.2"],
            "a stranger chosen by name gets no expectation: the check code settles who it is")
    }

    /// A private node's tag made with a contact's presence key: found by the contact's name or DID,
    /// shown as the contact, and the dial must reach that contact's DID.
    @Test func aRecognisedContactIsFoundByNameAndMustProveTheirDID() async throws {
        let key = Presence.makeKey()
        let did = "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169"
        let hidden = Self.peer(nil, tag: Presence.makeTag(key: key), ip: "192.0.2.9")
        let stranger = Self.peer(nil, tag: Presence.makeTag(key: Presence.makeKey()), ip: "192.0.2.10")
        let resolver = PresenceResolver(contacts: [.init(did: did, name: "Ada Lovelace", presenceKey: key)])
        let lan = StaticDiscovery(peers: [hidden, stranger, grace])
        let all = try await PeerBrowser.collect(lan, filter: InterfaceFilter(deny: []), seconds: 0.2, resolver: resolver)
        #expect(Set(all.map(\.displayName)) == ["Ada Lovelace (contact)", "someone nearby (private)", "Grace"])
        for name in ["ada lovelace", did] {
            let found = try await PeerBrowser.find(.name(name), in: lan, filter: InterfaceFilter(deny: []), seconds: 600, settle: 0.05, resolver: resolver)
            #expect(found.instanceName == hidden.instanceName && found.contact?.did == did)
            let target = DialTarget(discovered: found)
            #expect(target.expected == ExpectedPeer(did: did, presenceKey: key))
        }
        // Without the key (a stranger's node), the same announcement is nobody in particular.
        let unknown = try await PeerBrowser.collect(lan, filter: InterfaceFilter(deny: []), seconds: 0.2)
        #expect(unknown.filter { $0.contact != nil }.isEmpty)
        #expect(DialTarget(discovered: try #require(unknown.first { $0.instanceName == hidden.instanceName })).expected == ExpectedPeer())
    }

    @Test func aNameSeveralPeersShowIsAmbiguousAndNoneIsNotFound() async throws {
        let lan = StaticDiscovery(peers: [ada, grace, Self.peer("Grace", tag: "0123456789abcdef" + "0000000000000004", ip: "192.0.2.3").renamed("Grace.2")])
        do throws(NodeError) {
            _ = try await PeerBrowser.find(.name("Grace"), in: lan, filter: InterfaceFilter(deny: []), seconds: 2, settle: 0.05)
            Issue.record("two peers show the name Grace")
        } catch {
            #expect(error.kind == .ambiguous)
            #expect(error.message.contains("9c2e11aa") && error.message.contains("01234567"), "both peer ids: \(error.message)")
        }
        let started = Date()
        do throws(NodeError) {
            _ = try await PeerBrowser.find(.name("Lin"), in: lan, filter: InterfaceFilter(deny: []), seconds: 0.3)
            Issue.record("nobody is called Lin")
        } catch {
            #expect(error.kind == .notFound && error.message.contains("Lin"))
            #expect(Date().timeIntervalSince(started) >= 0.3, "waits for its limit before giving up")
        }
    }

    @Test func collectingStopsWhenEnoughIsSeen() async throws {
        let lan = StaticDiscovery(peers: [ada, grace, graceAgain])
        let all = try await PeerBrowser.collect(lan, filter: InterfaceFilter(deny: []), seconds: 0.2)
        #expect(Set(all.map(\.instanceName)) == ["Ada", "Grace", "Grace (2)"])
        let some = try await PeerBrowser.collect(lan, filter: InterfaceFilter(deny: []), seconds: 600) { peers in
            peers.contains { $0.id == "4b01d34b" }
        }
        #expect(some.contains { $0.instanceName == "Ada" })
    }

    /// The kind of a failed session decides what a face does with it (the CLI's exit code).
    @Test func aFailedSessionHasTheKindItsCodeMeans() {
        // Distinct kinds (and exit codes) for a decision, a failed check, silence and a dropped connection.
        #expect(NodeError(session: ProtocolError(.declined, "the peer declined")).kind == .declined)
        #expect(NodeError(session: ProtocolError(.consentTimeout, "no decision")).kind == .declined)
        #expect(NodeError(session: ProtocolError(.identityMismatch, "someone else")).kind == .refused)
        #expect(NodeError(session: ProtocolError(.timeout, "no answer")).kind == .timedOut)
        #expect(NodeError(session: ProtocolError(.connectionLost, "gone")).kind == .connectionLost)
        #expect(NodeError(session: ProtocolError(.busy, "full")).kind == .unreachable)
        #expect(NodeError(session: ProtocolError(.internalError, "bug")).kind == .internalError)
        let declined = NodeError(session: ProtocolError(.consentTimeout, "no decision within 60 s"))
        #expect(declined.code == "consent_timeout" && declined.message.contains("nothing was stored"))
    }
}

extension DiscoveredPeer {
    func renamed(_ instance: String) -> DiscoveredPeer {
        var p = self
        p.instanceName = instance
        return p
    }
}
