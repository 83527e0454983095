/// How a node finds peers and is found: DNS-SD through avahi-daemon (`AvahiDiscovery`) on a LAN, or a
/// fixed list (`StaticDiscovery`) where multicast is not wanted. The node and its faces use only this.
public protocol Discovery: Sendable {
    /// Peers as they come, change and go. Stop iterating to stop browsing.
    func browse(filter: InterfaceFilter) -> AsyncStream<DiscoveryEvent>
    /// Announces this node until the returned announcement is withdrawn or released. With `host`, the
    /// service points at that host name and its address records are published with it (nil: the
    /// machine's own host name, for probes that identify nothing).
    func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String], host: PublishedHost?) throws(DiscoveryError) -> any Announcement
}

extension Discovery {
    /// Announces a service on the machine's own host name.
    public func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String]) throws(DiscoveryError) -> any Announcement {
        try publish(instanceName: instanceName, port: port, txt: txt, interfaces: interfaces, host: nil)
    }
}

/// A node's announcement on the network.
public protocol Announcement: AnyObject, Sendable {
    /// Waits until the announcement is settled (a name collision may change it); returns the name used.
    func established() async throws -> String
    /// Takes the node off the network (a goodbye, where the mechanism has one).
    func withdraw()
}
