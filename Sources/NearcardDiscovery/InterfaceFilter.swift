import Foundation

/// Which network interfaces to use. VPN tunnels and container bridges are left out by default:
/// announcing a card exchange on them reaches machines that are not in the room.
public struct InterfaceFilter: Sendable, Equatable {
    /// When not empty, only these interfaces.
    public var allow: [String]
    /// Never these (glob patterns with a trailing `*`).
    public var deny: [String]

    public static let defaultDeny = [
        "docker*", "br-*", "virbr*", "veth[0-9a-f]*", "vnet*", "tun*", "tap*", "wg*", "zt*", "tailscale*", "lxc*", "lxd*", "cni*", "flannel*", "podman*",
    ]

    public init(allow: [String] = [], deny: [String] = InterfaceFilter.defaultDeny) {
        self.allow = allow
        self.deny = deny
    }

    /// The names in `allow` that this machine has no interface of, now (one may appear later).
    public var unknownAllowed: [String] { allow.filter { if_nametoindex($0) == 0 } }

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
