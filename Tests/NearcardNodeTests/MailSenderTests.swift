import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import Testing

@testable import NearcardNode

/// Finding a contact's node for a follow-up message (docs/PROTOCOL.md §3, §15): the announcement whose
/// presence tag the contact's presence key made, whatever its name says; then the route's hints.
@Suite struct MailSenderTests {
    static func target(presenceKey: [UInt8]?) -> MailSender.Target {
        let x = X25519.PrivateKey()
        let e = Ed25519.PrivateKey()
        let route = RouteRecord(
            did: "did:key:zDnaeGrace", pubKey: x.publicKey, signPubKey: e.publicKey, fingerprint: "0123456789abcdef",
            mailboxToken: Array(repeating: 7, count: 32), recipient: "did:key:zDnaeAda", issuedAt: 0, expiresAt: 1,
            hints: [RouteRecord.Hint(host: "192.0.2.50", port: 7447)])
        let contact = Contact(
            card: Card(name: "Grace Hopper"), source: .proximity, verificationStatus: .verified, receivedAt: Date(),
            didPublicKey: "did:key:zDnaeGrace")
        return MailSender.Target(route: route, contact: contact, presenceKey: presenceKey)
    }

    static func peer(_ instance: String, tag: String, ip: String) -> DiscoveredPeer {
        DiscoveredPeer(
            instanceName: instance, hostName: "nc-0000000000000000.local", port: 7447, txt: TXTRecord(tag: tag, name: nil),
            addresses: [PeerAddress(ip: ip, port: 7447, interfaceName: "eth0", interfaceIndex: 2)])
    }

    @Test func theContactsNodeIsFoundByItsTagThenTheHints() {
        let key = Presence.makeKey()
        let graces = Self.peer("nearcard-1a2b3c4d", tag: Presence.makeTag(key: key), ip: "192.0.2.7")
        let other = Self.peer("Grace Hopper", tag: Presence.makeTag(key: Presence.makeKey()), ip: "192.0.2.8")
        let target = Self.target(presenceKey: key)
        #expect(target.isAnnounced(by: graces) && !target.isAnnounced(by: other))
        #expect(
            MailSender.addresses(for: target, discovered: [other, graces]).map(\.ip) == ["192.0.2.7", "192.0.2.50"],
            "the announcement her key made, not the one with her name; then the hints")
        // A contact who handed over no presence key is reached at the hints only.
        #expect(MailSender.addresses(for: Self.target(presenceKey: nil), discovered: [other, graces]).map(\.ip) == ["192.0.2.50"])
    }
}
