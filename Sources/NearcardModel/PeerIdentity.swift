public import NearcardCrypto

/// The peer as proven in the session: its DID signed this session's handshake hash, and its Noise
/// static key is the one the handshake authenticated.
public struct PeerIdentity: Sendable, Equatable {
    public let did: String
    public let didKey: DIDKey
    public let name: String?
    /// Its Noise static key (= its X25519 `pubKey`).
    public let pubKey: X25519.PublicKey
    public let signPubKey: Ed25519.PublicKey
    public let fingerprint: String

    public init(did: String, didKey: DIDKey, name: String?, pubKey: X25519.PublicKey, signPubKey: Ed25519.PublicKey, fingerprint: String) {
        self.did = did
        self.didKey = didKey
        self.name = name
        self.pubKey = pubKey
        self.signPubKey = signPubKey
        self.fingerprint = fingerprint
    }
}
