import Foundation
public import NearcardCrypto
public import NearcardModel

/// A QR invitation to an exchange (docs/PROTOCOL.md §19): where the inviter's node listens, the key it
/// will prove, and a one-time secret the invitee proves it holds, bound to the session's handshake.
/// Text: `nearcard-invite:` ‖ base64url(JCS of the object below).
public struct Invitation: Sendable, Equatable {
    public static let prefix = "nearcard-invite:"
    public static let version = 1
    public static let idByteCount = 8
    public static let secretByteCount = 16
    /// Addresses an invitation may list.
    public static let maximumAddresses = 8
    /// Longest invitation text read.
    public static let maximumLength = 2048
    public static let proofDomain = "nearcard/invite/v1"

    /// The inviter's fingerprint (§2): the responder must prove exactly this identity.
    public var fingerprint: String
    /// The inviter's display name, if it chose to show it.
    public var name: String?
    /// `HOST:PORT` or `[IPv6]:PORT`, in the order to try.
    public var addresses: [String]
    public var id: [UInt8]
    public var secret: [UInt8]
    /// Unix seconds after which the inviter refuses it.
    public var expires: Int64

    public init(fingerprint: String, name: String?, addresses: [String], id: [UInt8], secret: [UInt8], expires: Int64) {
        self.fingerprint = fingerprint
        self.name = name
        self.addresses = addresses
        self.id = id
        self.secret = secret
        self.expires = expires
    }

    /// `{"v":1,"fp","name"?,"addrs":[…],"id","secret","exp"}`
    public var json: JSONValue {
        var o: JSONObject = [
            "v": .number(Double(Self.version)), "fp": .string(fingerprint), "addrs": .array(addresses.map { .string($0) }),
            "id": .string(Base64.urlEncode(id)), "secret": .string(Base64.urlEncode(secret)), "exp": .number(Double(expires)),
        ]
        if let name { o["name"] = .string(name) }
        return .object(o)
    }

    public var text: String { Self.prefix + Base64.urlEncode(JCS.canonicalize(json)) }

    /// Reads an invitation's text; every problem says which part is wrong.
    public init(text raw: String) throws(ProtocolError) {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count <= Self.maximumLength else {
            throw ProtocolError(.tooLarge, Phrase("the invitation is longer than %1$@ bytes", String(Self.maximumLength)))
        }
        guard text.hasPrefix(Self.prefix) else { throw ProtocolError(.protocolError, Phrase("not a Nearcard invitation (it starts %1$@…)", Self.prefix)) }
        guard let bytes = try? Base64.urlDecode(String(text.dropFirst(Self.prefix.count))),
            let value = try? JSONParser(maximumDepth: 4, maximumLength: Self.maximumLength).parse(bytes), let o = value.objectValue
        else {
            throw ProtocolError(.protocolError, Phrase("the invitation is damaged (not base64url JSON after %1$@)", Self.prefix))
        }
        for k in o.keys where !["v", "fp", "name", "addrs", "id", "secret", "exp"].contains(k) {
            throw ProtocolError(.protocolError, Phrase("the invitation has an unknown member \"%1$@\"", k.prefix(32)))
        }
        guard o["v"]?.integerValue == Int64(Self.version) else {
            guard let v = o["v"] else {
                throw ProtocolError(.unsupportedVersion, Phrase("the invitation is version none; this Nearcard reads version %1$@", String(Self.version)))
            }
            throw ProtocolError(
                .unsupportedVersion, Phrase("the invitation is version %1$@; this Nearcard reads version %2$@", v.compactText, String(Self.version)))
        }
        guard let fp = o["fp"]?.stringValue, fp.count == 16, fp.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            throw ProtocolError(.protocolError, Phrase("the invitation's fingerprint is not 16 lower-case hex digits"))
        }
        guard let list = o["addrs"]?.arrayValue, !list.isEmpty, list.count <= Self.maximumAddresses else {
            throw ProtocolError(.protocolError, Phrase("the invitation lists no address, or more than %1$@", String(Self.maximumAddresses)))
        }
        var addresses: [String] = []
        for a in list {
            guard let s = a.stringValue, !s.isEmpty, s.utf8.count <= 64 else {
                throw ProtocolError(.protocolError, Phrase("an address in the invitation is not HOST:PORT"))
            }
            addresses.append(s)
        }
        func field(_ key: String, _ count: Int) throws(ProtocolError) -> [UInt8] {
            guard let s = o[key]?.stringValue, let b = try? Base64.urlDecode(s), b.count == count else {
                throw ProtocolError(.protocolError, Phrase("the invitation's %1$@ is not %2$@ bytes of base64url", key, String(count)))
            }
            return b
        }
        guard let exp = o["exp"]?.integerValue else { throw ProtocolError(.protocolError, Phrase("the invitation has no expiry (exp)")) }
        var name: String?
        if let n = o["name"] {
            guard let s = n.stringValue, s.unicodeScalars.count <= ProtocolLimits.maximumNameLength else {
                throw ProtocolError(
                    .protocolError, Phrase("the invitation's name is not a string of at most %1$@ characters", String(ProtocolLimits.maximumNameLength)))
            }
            guard !s.unicodeScalars.contains(where: { $0.isControl || $0.isBidiControl }) else {
                throw ProtocolError(
                    .badIdentity, Phrase("the invitation's name contains a control character or a bidirectional control (U+202A–U+202E, U+2066–U+2069)"))
            }
            name = s
        }
        self.init(
            fingerprint: fp, name: name, addresses: addresses, id: try field("id", Self.idByteCount),
            secret: try field("secret", Self.secretByteCount), expires: exp)
    }

    /// What the invitee puts in its hello: HMAC-SHA-256(secret, "nearcard/invite/v1" ‖ 0x00 ‖ h).
    public static func proof(secret: [UInt8], handshakeHash: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(key: secret, message: Array(proofDomain.utf8) + [0] + handshakeHash)
    }

    /// What an invitee sends and an inviter checks.
    public struct Claim: Sendable, Equatable {
        public let id: [UInt8]
        public let secret: [UInt8]
        public init(id: [UInt8], secret: [UInt8]) {
            self.id = id
            self.secret = secret
        }
    }

    /// The `invite` member of the initiator's hello, as received, with the handshake hash it must cover.
    public struct Presented: Sendable, Equatable {
        public let id: [UInt8]
        public let proof: [UInt8]
        public let handshakeHash: [UInt8]

        /// Whether `secret` is the one the proof was made with, for this session.
        public func isMade(with secret: [UInt8]) -> Bool {
            Sodium.constantTimeEquals(Invitation.proof(secret: secret, handshakeHash: handshakeHash), proof)
        }
    }
}
