public import Foundation

/// How a node finds peers and is found: DNS-SD through avahi-daemon (`AvahiDiscovery`) on a LAN, or a
/// fixed list (`StaticDiscovery`) where multicast is not wanted. The node and its faces use only this.
public protocol Discovery: Sendable {
    /// Peers as they come, change and go, each with its addresses. Stop iterating to stop browsing.
    func browse(filter: InterfaceFilter) -> AsyncStream<DiscoveryEvent>
    /// Peers as they come, change and go, resolved to addresses only when `addresses` says so: the
    /// others are reported without them, and `addresses(of:)` resolves them when a dial needs them.
    func browse(filter: InterfaceFilter, addresses: AddressPolicy) -> AsyncStream<DiscoveryEvent>
    /// The addresses a peer is announced at now (for one reported without them); empty when they do
    /// not resolve (the peer has left).
    func addresses(of peer: DiscoveredPeer) async -> [PeerAddress]
    /// The peer with its addresses, and its records when they were pending (`recordsPending`): what a
    /// dial needs (the version it announces, the tag that may name a contact). Its addresses are
    /// empty when it no longer resolves.
    func locate(_ peer: DiscoveredPeer) async -> DiscoveredPeer
    /// Announces this node until the returned announcement is withdrawn or released. With `host`, the
    /// service points at that host name and its address records are published with it (nil: the
    /// machine's own host name, for probes that identify nothing).
    func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String], host: PublishedHost?) throws(DiscoveryError) -> any Announcement
    /// Someone is about to act on the peer announced as `name` (an exchange names it): its browse
    /// resolves it now rather than in its turn. A hint; nothing waits for it.
    func hurry(instanceNamed name: String)
}

extension Discovery {
    /// A discovery whose peers always come with their addresses browses the same way under any policy.
    public func browse(filter: InterfaceFilter, addresses: AddressPolicy) -> AsyncStream<DiscoveryEvent> {
        browse(filter: filter)
    }

    public func addresses(of peer: DiscoveredPeer) async -> [PeerAddress] { peer.addresses }

    public func locate(_ peer: DiscoveredPeer) async -> DiscoveredPeer {
        var p = peer
        p.addresses = await addresses(of: peer)
        return p
    }

    /// A discovery that reports every peer at once has nothing to hurry.
    public func hurry(instanceNamed name: String) {}

    /// Announces a service on the machine's own host name.
    public func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String]) throws(DiscoveryError) -> any Announcement {
        try publish(instanceName: instanceName, port: port, txt: txt, interfaces: interfaces, host: nil)
    }
}

/// Which peers a browse resolves to addresses before reporting them. Names and presence tags (TXT)
/// are always resolved: a peer is listed by them. Addresses are needed only to connect, and resolving
/// them for every announcement is what costs avahi-daemon most on a crowded network, so a node that
/// runs for long (`listen`, `bot`, `ui`) asks for its contacts' only (its outbox and confirmations
/// reach them without a dial by name) and resolves a stranger's when it dials.
///
/// In a crowd (more than `AvahiDiscovery.crowd` announcements) such a node does not even read every
/// announcement's records at once: one whose instance name `readsAtOnce` does not pick is listed by
/// that name (`DiscoveredPeer.recordsPending`) and its records are read later, at a pace the LAN's
/// nodes together keep constant (`AvahiDiscovery.lanReadsPerSecond`), or at once when someone acts
/// on it (`hurry`, `locate`).
public struct AddressPolicy: Sendable {
    /// Whether a peer with this TXT record is resolved to addresses before it is reported.
    public let wants: @Sendable (TXTRecord) -> Bool
    /// Whether every peer is (no TXT needs reading first).
    public let always: Bool
    /// Whether an announcement with this instance name has its records read as soon as it is seen,
    /// even in a crowd (a private node's random name, a name a contact announces, this home's own).
    public let readsAtOnce: @Sendable (String) -> Bool

    /// Every peer, with its addresses on every interface it is announced on (a one-shot listing that
    /// checks each peer answers).
    public static let always = AddressPolicy(wants: { _ in true }, always: true, readsAtOnce: { _ in true })

    /// Only the peers whose TXT record `wants` accepts; the others are reported without addresses,
    /// and in a crowd by their names alone unless `readsAtOnce` picks them.
    public static func only(
        _ wants: @escaping @Sendable (TXTRecord) -> Bool, readsAtOnce: @escaping @Sendable (String) -> Bool = { _ in true }
    ) -> AddressPolicy {
        AddressPolicy(wants: wants, always: false, readsAtOnce: readsAtOnce)
    }

    private init(wants: @escaping @Sendable (TXTRecord) -> Bool, always: Bool, readsAtOnce: @escaping @Sendable (String) -> Bool) {
        self.wants = wants
        self.always = always
        self.readsAtOnce = readsAtOnce
    }
}

/// A node's announcement on the network.
public protocol Announcement: AnyObject, Sendable {
    /// Waits until the announcement is settled (a name collision may change it); returns the name used.
    func established() async throws -> String
    /// The same, giving up after `seconds`: nil when it has not settled by then (the daemon never said
    /// so, and said no error either), so that the caller can announce again instead of waiting forever.
    func established(within seconds: TimeInterval) async throws -> String?
    /// Takes the node off the network (a goodbye, where the mechanism has one).
    func withdraw()
}

extension Announcement {
    /// By default an announcement settles at once or fails (static peers, tests' recordings).
    public func established(within seconds: TimeInterval) async throws -> String? { try await established() }
}
