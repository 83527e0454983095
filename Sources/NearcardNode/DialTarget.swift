import NearcardDiscovery
import NearcardProtocol

/// Where to dial, and who we expect to find there.
public struct DialTarget: Sendable {
    public var addresses: [PeerAddress]
    public var expected: ExpectedPeer
    public var label: String
    /// The DNS-SD instance it was found as (nil: dialled by address).
    public var instanceName: String?

    public init(addresses: [PeerAddress], expected: ExpectedPeer, label: String, instanceName: String? = nil) {
        self.addresses = addresses
        self.expected = expected
        self.label = label
        self.instanceName = instanceName
    }
}

extension DialTarget {
    /// HOST:PORT: whoever answers there (it proves an identity, but none is expected of it).
    public static func address(host: String, port: Int) throws(NodeError) -> DialTarget {
        DialTarget(addresses: try PeerQuery.resolve(host: host, port: port), expected: ExpectedPeer(),
                   label: PeerQuery.address(host: host, port: port).description)
    }

    /// A peer discovery showed: its addresses in dial order; it must prove the fingerprint it advertises.
    public init(discovered peer: DiscoveredPeer) {
        self.init(addresses: peer.dialOrder, expected: ExpectedPeer(fingerprint: peer.txt.fingerprint),
                  label: "\(peer.instanceName) (\(peer.dialOrder.map(\.description).joined(separator: ", ")))", instanceName: peer.instanceName)
    }
}
