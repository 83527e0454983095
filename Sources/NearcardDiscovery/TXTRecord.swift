/// The DNS-SD TXT record of a Nearcard node (docs/PROTOCOL.md "Discovery"):
/// `v=1` (protocol version), `fp=<16 hex>` (key fingerprint), `name=<display name>` (absent in
/// private mode). Only what is safe to broadcast; none of it is trusted: identity is proven in the session.
public struct TXTRecord: Sendable, Equatable {
    public static let serviceType = "_nearcard._tcp"
    /// Each TXT string is at most 255 bytes (RFC 6763 §6.1); Nearcard reads at most 32 of them.
    public static let maximumEntryLength = 255
    public static let maximumEntries = 32

    public var version: Int?
    public var fingerprint: String?
    public var name: String?

    public init(version: Int? = 1, fingerprint: String?, name: String?) {
        self.version = version
        self.fingerprint = fingerprint
        self.name = name
    }

    /// The strings to publish.
    public var entries: [[UInt8]] {
        var out: [[UInt8]] = []
        if let version { out.append(Array("v=\(version)".utf8)) }
        if let fingerprint { out.append(Array("fp=\(fingerprint)".utf8)) }
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

    /// Parses TXT strings from the network. Unknown keys are ignored (RFC 6763 §6.4); malformed known
    /// values are dropped rather than trusted: a bad `fp` becomes nil, a name with control characters nil.
    public init(parsing strings: [[UInt8]]) {
        version = nil
        fingerprint = nil
        name = nil
        for raw in strings.prefix(Self.maximumEntries) where !raw.isEmpty && raw.count <= Self.maximumEntryLength {
            guard let eq = raw.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: raw[..<eq], as: UTF8.self).lowercased()
            let valueBytes = Array(raw[(eq + 1)...])
            // First occurrence wins (RFC 6763 §6.4); invalid UTF-8 values are dropped.
            guard let value = String(validating: valueBytes, as: UTF8.self) else { continue }
            switch key {
            case "v" where version == nil:
                version = Int(value).flatMap { (0...999).contains($0) ? $0 : nil }
            case "fp" where fingerprint == nil:
                if value.count == 16, value.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) { fingerprint = value }
            case "name" where name == nil:
                if !value.isEmpty, value.unicodeScalars.count <= 64,
                   !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    name = value
                }
            default:
                continue
            }
        }
    }
}
