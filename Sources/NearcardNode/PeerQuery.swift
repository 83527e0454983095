import Foundation
package import NearcardDiscovery
public import NearcardText

#if canImport(Glibc)
    import Glibc
#endif

/// What a user names a peer by: `host:port` (no multicast needed), an instance name, an announced
/// name, a recognised contact's name or DID, or a peer id prefix (4+ hex digits of its presence tag).
public enum PeerQuery: Sendable, Equatable, CustomStringConvertible {
    case address(host: String, port: Int)
    case name(String)
    /// Text shaped like HOST:PORT that is not one (`1.2.3.4:99999`, `host:`): never looked up as a name.
    case malformed(String, reason: Phrase)

    public init(parsing text: String) {
        let t = text.trimmingCharacters(in: .whitespaces)
        func port(_ digits: Substring) -> Int? {
            guard let p = Int(digits), (1...65535).contains(p) else { return nil }
            return p
        }
        if t.hasPrefix("["), let close = t.firstIndex(of: "]") {
            let rest = t[t.index(after: close)...]
            guard rest.hasPrefix(":") else {
                self = .malformed(t, reason: Phrase("\"%1$@\" is not an address: an IPv6 address is written [ADDRESS]:PORT", t))
                return
            }
            guard let p = port(rest.dropFirst()) else {
                self = .malformed(t, reason: Phrase("\"%1$@\": the port must be a number from 1 to 65535 (HOST:PORT, or [IPv6]:PORT)", t))
                return
            }
            self = .address(host: String(t[t.index(after: t.startIndex)..<close]), port: p)
            return
        }
        // One colon, no spaces, and only digits (or nothing) after it: meant as HOST:PORT.
        if let colon = t.lastIndex(of: ":"), t.firstIndex(of: ":") == colon, !t.contains(" ") {
            let after = t[t.index(after: colon)...]
            if after.allSatisfy(\.isASCII) && after.allSatisfy(\.isNumber) {
                let host = String(t[..<colon])
                guard !host.isEmpty else {
                    self = .malformed(t, reason: Phrase("\"%1$@\" has no host before the colon (HOST:PORT)", t))
                    return
                }
                guard let p = port(after) else {
                    self = .malformed(t, reason: Phrase("\"%1$@\": the port must be a number from 1 to 65535 (HOST:PORT, or [IPv6]:PORT)", t))
                    return
                }
                self = .address(host: host, port: p)
                return
            }
        }
        self = .name(t)
    }

    public var description: String {
        switch self {
        case .address(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .name(let n): n
        case .malformed(let t, _): t
        }
    }

    /// Whether a discovered peer answers to this name: its instance name or announced name, the name
    /// or DID of the contact its tag resolved to (case-insensitive), or a peer id starting with it.
    package func matches(_ peer: DiscoveredPeer) -> Bool {
        guard case .name(let n) = self, !n.isEmpty else { return false }
        if peer.instanceName.caseInsensitiveCompare(n) == .orderedSame { return true }
        if let name = peer.announcedName, name.caseInsensitiveCompare(n) == .orderedSame { return true }
        if let contact = peer.contact, contact.did == n || contact.name.caseInsensitiveCompare(n) == .orderedSame { return true }
        if n.count >= 4, n.count <= 8, n.allSatisfy(\.isHexDigit), let id = peer.id, id.hasPrefix(n.lowercased()) { return true }
        return false
    }

    /// The one peer among `peers` this query names, nil when none does, or why it is ambiguous.
    /// Names are not identities (anyone can publish "Bob"): an exact instance name is taken only when
    /// no other match shows that name too; otherwise the answer lists every match with its peer id,
    /// so the user can tell them apart.
    package func select(from peers: [DiscoveredPeer]) -> Result<DiscoveredPeer?, AmbiguousPeer> {
        let matches = peers.filter(matches)
        guard matches.count > 1 else { return .success(matches.first) }
        let q = description
        if let exact = matches.first(where: { $0.instanceName.caseInsensitiveCompare(q) == .orderedSame }) {
            let lookalikes = matches.filter { $0 != exact && ($0.announcedName?.caseInsensitiveCompare(q) == .orderedSame) }
            if lookalikes.isEmpty { return .success(exact) }
        }
        return .failure(AmbiguousPeer(query: q, matches: matches))
    }

    /// Resolves `host` (a literal address or a name) to addresses to dial.
    package static func resolve(host: String, port: Int) throws(NodeError) -> [PeerAddress] {
        var (name, scope) = (host, "")
        if let pct = host.firstIndex(of: "%") {
            name = String(host[..<pct])
            scope = String(host[host.index(after: pct)...])
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(name, String(port), &hints, &list)
        guard rc == 0, let first = list else { throw NodeError(.notFound, Phrase("cannot resolve %1$@: %2$@", host, String(cString: gai_strerror(rc)))) }
        defer { freeaddrinfo(list) }
        var out: [PeerAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let n = node {
            var buf = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(n.pointee.ai_addr, n.pointee.ai_addrlen, &buf, socklen_t(buf.count), nil, 0, NI_NUMERICHOST) == 0 {
                var ip = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                if let pct = ip.firstIndex(of: "%") { ip = String(ip[..<pct]) }
                let index = scope.isEmpty ? 0 : Int32(if_nametoindex(scope))
                let a = PeerAddress(ip: ip, port: port, interfaceName: scope, interfaceIndex: index)
                if !out.contains(a) { out.append(a) }
            }
            node = n.pointee.ai_next
        }
        return out
    }
}

/// A name that several discovered peers answer to.
package struct AmbiguousPeer: Error, Sendable, CustomStringConvertible {
    package let query: String
    package let matches: [DiscoveredPeer]

    package var description: String {
        let list = matches.map { "\($0.displayName) (peer id \($0.id ?? "none"))" }.sorted()
        return "\"\(query)\" matches \(matches.count) peers: \(list.joined(separator: ", ")); names are not proof of identity: "
            + "use the peer id (`nearcard peers`), or compare the check code with the person"
    }
}
