import Foundation

/// The DNS-SD TXT record of a Nearcard node (docs/PROTOCOL.md §3, protocol version 2): `v=2`,
/// `vmax=3` (the highest exchange version it speaks; absent from a version-2 node's record),
/// `t=<32 hex>` (a presence tag only the node's contacts can resolve, fresh at every publication) and
/// `name=<display name>` (default mode only). Only what is safe to broadcast, and nothing that lasts
/// beyond one publication but the name a person chose to announce; none of it is trusted: identity is
/// proven in the session.
public struct TXTRecord: Sendable, Equatable {
    public static let serviceType = "_nearcard._tcp"
    /// The protocol version this node announces in `v`: 2, which every version-2 node reads as its own.
    public static let currentVersion = 2
    /// The highest exchange version this node speaks, announced in `vmax` (docs/PROTOCOL.md §3, §21):
    /// a version-3 dialler speaks 3 to a peer that announces it, 2 to one that does not.
    public static let currentHighestVersion = 3
    /// Each TXT string is at most 255 bytes (RFC 6763 §6.1); Nearcard reads at most 32 of them.
    public static let maximumEntryLength = 255
    public static let maximumEntries = 32
    /// A presence tag: 32 lower-case hex digits (8-byte nonce ‖ 8-byte SipHash-2-4).
    public static let tagLength = 32

    public var version: Int?
    /// The highest exchange version the node speaks (`vmax`); nil when absent (a version-2 node).
    public var highestVersion: Int?
    /// The presence tag (`t`), nil when absent or malformed.
    public var tag: String?
    public var name: String?

    public init(version: Int? = TXTRecord.currentVersion, highestVersion: Int? = TXTRecord.currentHighestVersion, tag: String?, name: String?) {
        self.version = version
        self.highestVersion = highestVersion
        self.tag = tag
        self.name = name
    }

    /// The strings to publish.
    public var entries: [[UInt8]] {
        var out: [[UInt8]] = []
        if let version { out.append(Array("v=\(version)".utf8)) }
        if let highestVersion { out.append(Array("vmax=\(highestVersion)".utf8)) }
        if let tag { out.append(Array("t=\(tag)".utf8)) }
        if let name { out.append(Array(("name=" + Self.clip(name)).utf8)) }
        return out
    }

    /// The longest DNS-SD instance name: one DNS label, 63 bytes of UTF-8 (RFC 6763 §4.1.1).
    public static let maximumInstanceNameLength = 63

    /// An instance name for a display name: cut at a character boundary to 63 bytes of UTF-8 (trailing
    /// spaces dropped), since a longer one cannot be published at all; the whole name travels in TXT.
    public static func instanceName(for name: String) -> String {
        var out = cut(name, bytes: maximumInstanceNameLength, scalars: Int.max)
        while out.last?.isWhitespace == true { out.removeLast() }
        return out
    }

    /// Whether `instance` is how a node announcing `name` is published: the instance name made from it
    /// (ignoring case, as mDNS compares names), or avahi's alternative for it after a collision
    /// (`Ada #2`).
    public static func instance(_ instance: String, announces name: String) -> Bool {
        var base = Substring(instance)
        if let hash = base.range(of: " #", options: .backwards), !base[hash.upperBound...].isEmpty,
            base[hash.upperBound...].allSatisfy({ $0.isASCII && $0.isNumber })
        {
            base = base[..<hash.lowerBound]
        }
        return String(base).caseInsensitiveCompare(instanceName(for: name)) == .orderedSame
    }

    /// The longest prefix of whole characters within `bytes` of UTF-8, stopping once it holds `scalars`
    /// code points.
    static func cut(_ name: String, bytes: Int, scalars: Int) -> String {
        var out = ""
        for c in name {
            if out.unicodeScalars.count >= scalars || out.utf8.count + String(c).utf8.count > bytes { break }
            out.append(c)
        }
        return out
    }

    /// A display name cut to fit one TXT string (and the protocol's name limit), on a character boundary.
    static func clip(_ name: String) -> String {
        cut(name, bytes: maximumEntryLength - 5, scalars: 64)
    }

    /// Whether `value` is a well-formed tag: exactly 32 lower-case hex digits.
    public static func isWellFormedTag(_ value: String) -> Bool {
        value.utf8.count == tagLength && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Parses TXT strings from the network. Unknown keys (the version-1 `fp` among them) are ignored
    /// (RFC 6763 §6.4); malformed known values are dropped rather than trusted: a bad `t` becomes nil,
    /// a name with control characters nil.
    public init(parsing strings: [[UInt8]]) {
        version = nil
        highestVersion = nil
        tag = nil
        name = nil
        var seen: Set<String> = []
        for raw in strings.prefix(Self.maximumEntries) where !raw.isEmpty && raw.count <= Self.maximumEntryLength {
            guard let eq = raw.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: raw[..<eq], as: UTF8.self).lowercased()
            // First occurrence wins (RFC 6763 §6.4), even when its value is malformed.
            guard seen.insert(key).inserted else { continue }
            let valueBytes = Array(raw[(eq + 1)...])
            // Invalid UTF-8 values are dropped.
            guard let value = String(validating: valueBytes, as: UTF8.self) else { continue }
            switch key {
            case "v":
                version = Int(value).flatMap { (0...999).contains($0) ? $0 : nil }
            case "vmax":
                highestVersion = Int(value).flatMap { (2...999).contains($0) ? $0 : nil }
            case "t":
                if Self.isWellFormedTag(value) { tag = value }
            case "name":
                // No control characters, and no bidirectional controls (U+202A–U+202E, U+2066–U+2069),
                // which would reorder whatever a face prints after the name.
                if !value.isEmpty, value.unicodeScalars.count <= 64,
                    !value.unicodeScalars.contains(where: {
                        $0.properties.generalCategory == .control || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
                    })
                {
                    name = value
                }
            default:
                continue
            }
        }
    }
}
