/// The public half of an identity: what others may learn.
public struct PublicIdentity: Sendable, Equatable {
    /// The P-256 key; its did:key (`did:key:zDn…`) is the user's DID.
    public let didKey: DIDKey
    /// X25519: encryption and the Noise static key (`pubKey`).
    public let pubKey: X25519.PublicKey
    /// Ed25519: routes and follow-up messages (`signPubKey`).
    public let signPubKey: Ed25519.PublicKey
    /// The display name the user chose, if any.
    public var name: String?

    public init(didKey: DIDKey, pubKey: X25519.PublicKey, signPubKey: Ed25519.PublicKey, name: String?) {
        self.didKey = didKey
        self.pubKey = pubKey
        self.signPubKey = signPubKey
        self.name = name
    }

    public var did: String { didKey.did }

    /// A short fingerprint of all three public keys: the first 8 bytes of
    /// SHA-256("nearcard-fingerprint-v1" ‖ 0x00 ‖ P-256 compressed ‖ X25519 ‖ Ed25519), 16 hex digits.
    /// It names a node in discovery; it is not an authentication (see docs/PROTOCOL.md).
    public var fingerprint: String {
        Self.fingerprint(didKey: didKey, pubKey: pubKey, signPubKey: signPubKey)
    }

    public static func fingerprint(didKey: DIDKey, pubKey: X25519.PublicKey, signPubKey: Ed25519.PublicKey) -> String {
        var h = SHA256.Hasher()
        h.update(Array("nearcard-fingerprint-v1".utf8) + [0])
        h.update(didKey.publicKeyBytes)
        h.update(pubKey.rawRepresentation)
        h.update(signPubKey.rawRepresentation)
        return Hex.encode(h.finalize().prefix(8))
    }

    /// `nearcard id --json`: did, publicKeyJwk, pubKey, signPubKey, fingerprint, name.
    public var json: JSONValue {
        var o = JSONObject()
        o["did"] = .string(did)
        o["publicKeyJwk"] = JWK(didKey).json
        o["pubKey"] = .string(Base64.encode(pubKey.rawRepresentation))
        o["signPubKey"] = .string(Base64.encode(signPubKey.rawRepresentation))
        o["fingerprint"] = .string(fingerprint)
        o["name"] = name.map { .string($0) } ?? .null
        return .object(o)
    }
}

/// The three secret keys of an identity, in memory.
public struct IdentityKeys: Sendable {
    public let p256: P256.PrivateKey
    public let x25519: X25519.PrivateKey
    public let ed25519: Ed25519.PrivateKey

    /// Fresh keys from the CSPRNGs.
    public static func generate() -> IdentityKeys {
        IdentityKeys(p256: P256.PrivateKey(), x25519: X25519.PrivateKey(), ed25519: Ed25519.PrivateKey())
    }

    public init(p256: P256.PrivateKey, x25519: X25519.PrivateKey, ed25519: Ed25519.PrivateKey) {
        self.p256 = p256
        self.x25519 = x25519
        self.ed25519 = ed25519
    }

    public func publicIdentity(name: String?) -> PublicIdentity {
        PublicIdentity(didKey: p256.didKey, pubKey: x25519.publicKey, signPubKey: ed25519.publicKey, name: name)
    }

    /// `kid` for JWS made with the DID key: `<did>#<multibase>`.
    public var keyID: String { p256.didKey.keyID }
}
