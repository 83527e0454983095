/// Discovery from a fixed list of peers: browsing reports each of them once and then stays open (no
/// peer comes or goes); publishing announces nothing. For nodes told their peers (a lab, a test) rather
/// than finding them by multicast.
public struct StaticDiscovery: Discovery {
    public let peers: [DiscoveredPeer]

    public init(peers: [DiscoveredPeer]) {
        self.peers = peers
    }

    public func browse(filter: InterfaceFilter = InterfaceFilter()) -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self, bufferingPolicy: .unbounded)
        for peer in peers {
            let addresses = peer.addresses.filter { $0.interfaceName.isEmpty || filter.permits($0.interfaceName) }
            guard !addresses.isEmpty || peer.addresses.isEmpty else { continue }
            var shown = peer
            shown.addresses = addresses
            continuation.yield(.found(shown))
        }
        continuation.yield(.settled)
        return stream
    }

    public func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String], host: PublishedHost?) throws(DiscoveryError) -> any Announcement
    {
        StaticAnnouncement(name: instanceName)
    }
}

/// What `StaticDiscovery` publishes: nothing on the network; the name as given.
final class StaticAnnouncement: Announcement {
    let name: String
    init(name: String) { self.name = name }
    func established() async throws -> String { name }
    func withdraw() {}
}
