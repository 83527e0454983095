package import NearcardDiscovery
import NearcardModel
package import NearcardProtocol

/// Where to dial, and who we expect to find there.
public struct DialTarget: Sendable {
    package var addresses: [PeerAddress]
    package var expected: ExpectedPeer
    public var label: String
    /// The DNS-SD instance it was found as (nil: dialled by address).
    package var instanceName: String?
    /// The QR invitation the session presents (§19).
    package var invitation: Invitation.Claim?
    /// The exchange version to speak (§21): the highest this node speaks, or the peer's announced
    /// highest when lower. A peer dialled by address that answers `unsupported_version` is dialled
    /// again in version 2 (`Dialer`).
    package var version: Int = ExchangeMessage.version

    package init(addresses: [PeerAddress], expected: ExpectedPeer, label: String, instanceName: String? = nil, invitation: Invitation.Claim? = nil) {
        self.addresses = addresses
        self.expected = expected
        self.label = label
        self.instanceName = instanceName
        self.invitation = invitation
    }
}

extension DialTarget {
    /// HOST:PORT: whoever answers there (it proves an identity, but none is expected of it).
    package static func address(host: String, port: Int) throws(NodeError) -> DialTarget {
        DialTarget(
            addresses: try PeerQuery.resolve(host: host, port: port), expected: ExpectedPeer(),
            label: PeerQuery.address(host: host, port: port).description)
    }

    /// A QR invitation's node: its addresses in the order given, the fingerprint it must prove, and the
    /// secret to present. An address that is not HOST:PORT is an invalid-input error naming it.
    package init(invitation: Invitation) throws(NodeError) {
        var addresses: [PeerAddress] = []
        for text in invitation.addresses {
            guard case .address(let host, let port) = PeerQuery(parsing: text) else {
                throw NodeError(.invalidInput, Phrase("the invitation's address \"%1$@\" is not HOST:PORT", text.prefix(64)))
            }
            addresses += try PeerQuery.resolve(host: host, port: port)
        }
        self.init(
            addresses: addresses, expected: ExpectedPeer(fingerprint: invitation.fingerprint),
            label: "\(invitation.name ?? invitation.fingerprint) (\(invitation.addresses.joined(separator: ", ")))",
            invitation: Invitation.Claim(id: invitation.id, secret: invitation.secret))
    }

    /// A peer discovery showed: its addresses in dial order. A peer whose presence tag resolved to a
    /// contact must prove that contact's DID (a tag can be replayed); a stranger gets no expectation:
    /// its identity is settled by the check code.
    package init(discovered peer: DiscoveredPeer) {
        let expected = peer.contact.map { ExpectedPeer(did: $0.did, presenceKey: $0.presenceKey) } ?? ExpectedPeer()
        self.init(
            addresses: peer.dialOrder, expected: expected,
            label: "\(peer.displayName) (\(peer.dialOrder.map(\.description).joined(separator: ", ")))", instanceName: peer.instanceName)
        // A node that announces no `vmax` speaks version 2 only.
        version = Self.version(announced: peer.txt.highestVersion)
    }

    /// The version to speak to a peer that announced `highest` (nil: nothing, a version-2 node).
    static func version(announced highest: Int?) -> Int {
        ExchangeVersions.spoken.last { $0 <= (highest ?? ExchangeVersions.lowest) } ?? ExchangeVersions.lowest
    }
}
