public import Foundation

/// One address a peer was resolved at.
public struct PeerAddress: Sendable, Hashable, CustomStringConvertible {
    public var ip: String
    public var port: Int
    public var interfaceName: String
    public var interfaceIndex: Int32
    public var isIPv6: Bool { ip.contains(":") }
    public var isLinkLocal: Bool { ip.lowercased().hasPrefix("fe80:") || ip.hasPrefix("169.254.") }

    public init(ip: String, port: Int, interfaceName: String, interfaceIndex: Int32) {
        self.ip = ip
        self.port = port
        self.interfaceName = interfaceName
        self.interfaceIndex = interfaceIndex
    }

    /// "192.0.2.1:7447" or "[fe80::1%eth0]:7447" (IPv6 link-local with its scope).
    public var description: String {
        if isIPv6 { return "[\(ip)\(isLinkLocal ? "%" + interfaceName : "")]:\(port)" }
        return "\(ip):\(port)"
    }
}

/// A Nearcard node found on the LAN. Nothing here is authenticated.
public struct DiscoveredPeer: Sendable, Equatable {
    public var instanceName: String
    public var hostName: String
    public var port: Int
    public var txt: TXTRecord
    /// Its addresses, one per announcement; empty when the browse did not resolve them
    /// (`AddressPolicy`): `Discovery.addresses(of:)` does when they are needed.
    public var addresses: [PeerAddress]
    /// When its records were last resolved or it last answered (nil: not known).
    public var confirmedAt: Date?
    /// The contact whose presence key made its tag (docs/PROTOCOL.md §3), once the node has resolved
    /// it; nil for a stranger. A tag can be replayed: this says whom to expect, not whom a dial reaches.
    public var contact: RecognisedContact?
    /// Its tag was made with this home's own presence key: this person's own node (a `listen` or `ui`
    /// of the same home, or this node itself), not someone nearby.
    public var isThisNode = false
    /// Listed by the name it is announced under before its records were read (a browse in a crowd,
    /// `AddressPolicy.readsAtOnce`): `txt` is empty — no presence tag, name or version yet — and
    /// `hostName` and `port` are unknown. An update follows once they are read.
    public var recordsPending = false
    /// Where the browser saw it announced (interface, protocol), for resolving its addresses later
    /// when it was reported without them.
    var announcedOn: [Announced] = []

    public init(
        instanceName: String, hostName: String, port: Int, txt: TXTRecord, addresses: [PeerAddress], confirmedAt: Date? = nil,
        contact: RecognisedContact? = nil
    ) {
        self.instanceName = instanceName
        self.hostName = hostName
        self.port = port
        self.txt = txt
        self.addresses = addresses
        self.confirmedAt = confirmedAt
        self.contact = contact
    }

    /// A short id for naming it on the command line while this announcement lasts: the first 8 hex
    /// digits of its presence tag (random to all but its contacts, and renewed with every publication).
    public var id: String? { txt.tag.map { String($0.prefix(8)) } }

    /// The name it announces: its TXT `name`, or, while its records are pending, its instance name
    /// (in default mode the same name, cut to 63 bytes; a private node's instance name is read at once).
    public var announcedName: String? { txt.name ?? (recordsPending ? instanceName : nil) }

    /// How a face shows it before any session: "Ada Lovelace (contact)" for a recognised contact, the
    /// announced name for a stranger in default mode, "someone nearby (private)" otherwise.
    public var displayName: String {
        if isThisNode { return (txt.name ?? "your own node") + " (this node)" }
        if let contact { return "\(contact.name) (contact)" }
        if let name = announcedName { return name }
        return Self.privateLabel
    }

    /// What a stranger in private mode is shown as.
    public static let privateLabel = "someone nearby (private)"

    /// Preferred order for dialing: IPv4 first, then IPv6 global, then link-local.
    public var dialOrder: [PeerAddress] {
        addresses.sorted { a, b in
            func rank(_ x: PeerAddress) -> Int { x.isIPv6 ? (x.isLinkLocal ? 2 : 1) : 0 }
            return (rank(a), a.ip) < (rank(b), b.ip)
        }
    }
}

/// One announcement of a service as avahi-daemon's browser shows it: on an interface, over IPv4 or IPv6.
struct Announced: Hashable, Sendable, Comparable {
    var interface: Int32
    var proto: Int32

    static func < (a: Announced, b: Announced) -> Bool { (a.interface, a.proto) < (b.interface, b.proto) }
}

/// A contact a discovered peer's presence tag resolved to: their DID, the name they are kept under and
/// the presence key that made the tag.
public struct RecognisedContact: Sendable, Equatable {
    public var did: String
    public var name: String
    public var presenceKey: [UInt8]

    public init(did: String, name: String, presenceKey: [UInt8]) {
        self.did = did
        self.name = name
        self.presenceKey = presenceKey
    }
}

/// The host a publication's SRV record points at (docs/PROTOCOL.md §3): a random name of its own, with
/// the addresses published under it (each on its interface), instead of the machine's host name.
public struct PublishedHost: Sendable, Equatable {
    /// A fully qualified mDNS name, `nc-<16 hex>.local`.
    public var name: String
    /// Each address with the interface it is published on (`port` is not used).
    public var addresses: [PeerAddress]

    public init(name: String, addresses: [PeerAddress]) {
        self.name = name
        self.addresses = addresses
    }
}
