import NearcardDiscovery
import NearcardModel
import Testing

@testable import NearcardNode

/// Which exchange version a dial speaks (docs/PROTOCOL.md §3 "Choosing the version", §21).
@Suite struct DialTargetTests {
    static func peer(vmax: Int?) -> DiscoveredPeer {
        DiscoveredPeer(
            instanceName: "Grace", hostName: "nc-0123456789abcdef.local", port: 7447,
            txt: TXTRecord(highestVersion: vmax, tag: nil, name: "Grace"),
            addresses: [PeerAddress(ip: "192.0.2.7", port: 7447, interfaceName: "eth0", interfaceIndex: 2)])
    }

    /// A peer announcing `vmax=3` (or more: a later node) is spoken to in 3; one announcing nothing —
    /// a version-2 node — in 2; an address or an invitation starts in the highest this node speaks
    /// (the dialler falls back on `unsupported_version`).
    @Test func theVersionFollowsTheAnnouncement() throws {
        #expect(DialTarget(discovered: Self.peer(vmax: 3)).version == 3)
        #expect(DialTarget(discovered: Self.peer(vmax: 9)).version == 3, "a later node is spoken to in our highest")
        #expect(DialTarget(discovered: Self.peer(vmax: nil)).version == 2)
        #expect(DialTarget(discovered: Self.peer(vmax: 2)).version == 2)
        #expect(try DialTarget.address(host: "127.0.0.1", port: 7447).version == ExchangeVersions.highest)
        // What a peer reads back from the announcement this node makes.
        #expect(TXTRecord(parsing: TXTRecord(tag: nil, name: nil).entries).highestVersion == ExchangeVersions.highest)
        #expect(TXTRecord.currentHighestVersion == ExchangeVersions.highest)
    }
}
