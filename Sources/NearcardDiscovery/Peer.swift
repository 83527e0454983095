import Foundation
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
    public var addresses: [PeerAddress]
    /// When its records were last resolved or it last answered (nil: not known).
    public var confirmedAt: Date?

    public init(instanceName: String, hostName: String, port: Int, txt: TXTRecord, addresses: [PeerAddress], confirmedAt: Date? = nil) {
        self.instanceName = instanceName
        self.hostName = hostName
        self.port = port
        self.txt = txt
        self.addresses = addresses
        self.confirmedAt = confirmedAt
    }

    /// Preferred order for dialing: IPv4 first, then IPv6 global, then link-local.
    public var dialOrder: [PeerAddress] {
        addresses.sorted { a, b in
            func rank(_ x: PeerAddress) -> Int { x.isIPv6 ? (x.isLinkLocal ? 2 : 1) : 0 }
            return (rank(a), a.ip) < (rank(b), b.ip)
        }
    }
}

/// What discovery reports.
public enum DiscoveryEvent: Sendable, Equatable {
    case found(DiscoveredPeer)
    case updated(DiscoveredPeer)
    case lost(instanceName: String)
    case failed(DiscoveryError)
}

/// Which network interfaces to use. VPN tunnels and container bridges are left out by default:
/// announcing a card exchange on them reaches machines that are not in the room.
public struct InterfaceFilter: Sendable, Equatable {
    /// When not empty, only these interfaces.
    public var allow: [String]
    /// Never these (glob patterns with a trailing `*`).
    public var deny: [String]

    public static let defaultDeny = ["docker*", "br-*", "virbr*", "veth[0-9a-f]*", "vnet*", "tun*", "tap*", "wg*", "zt*", "tailscale*", "lxc*", "lxd*", "cni*", "flannel*", "podman*"]

    public init(allow: [String] = [], deny: [String] = InterfaceFilter.defaultDeny) {
        self.allow = allow
        self.deny = deny
    }

    public func permits(_ name: String) -> Bool {
        if !allow.isEmpty { return allow.contains(name) }
        return !deny.contains { Self.matches(pattern: $0, name) }
    }

    static func matches(pattern: String, _ name: String) -> Bool {
        if pattern == "veth[0-9a-f]*" {
            // Container veth ends are named veth + 6 or more hex digits (Docker uses 7); others are not.
            let rest = name.dropFirst(4)
            return name.hasPrefix("veth") && rest.count >= 6 && rest.allSatisfy(\.isHexDigit)
        }
        if pattern.hasSuffix("*") { return name.hasPrefix(pattern.dropLast()) }
        return name == pattern
    }
}
