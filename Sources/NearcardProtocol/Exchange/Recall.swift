import NearcardCrypto

/// A responder's identity sealed for its contacts (docs/PROTOCOL.md §6.2): an initiator that
/// recognised the responder's presence tag asks it to prove itself first; the responder seals its
/// `identity` under a key only holders of its presence key can derive, bound to this session's h.
/// A stranger who asks learns nothing; a contact learns who answers before saying who it is.
public enum Recall {
    public static let domain = "nearcard/recall/v2"

    /// key = HMAC-SHA-256(presence key, "nearcard/recall/v2" ‖ 0x00 ‖ h)
    static func key(presenceKey: [UInt8], handshakeHash: [UInt8]) -> SecureBytes {
        SecureBytes(HMACSHA256.authenticate(key: presenceKey, message: Array(domain.utf8) + [0] + handshakeHash))
    }

    /// ChaCha20-Poly1305 (nonce: 12 zero bytes — the key is used once), over JCS(identity).
    public static func seal(_ identity: ExchangeMessage.Identity, presenceKey: [UInt8], handshakeHash: [UInt8]) throws(ProtocolError) -> [UInt8] {
        do {
            return try ChaChaPoly.seal(
                JCS.canonicalize(identity.json), key: key(presenceKey: presenceKey, handshakeHash: handshakeHash),
                nonce: [UInt8](repeating: 0, count: ChaChaPoly.nonceByteCount))
        } catch {
            throw ProtocolError(.internalError, "sealing our identity failed: \(error.message)")
        }
    }

    /// Opens a sealed identity with the presence key of the contact we expect; nil if it does not open
    /// (whoever answers does not hold that key: not our contact).
    public static func open(_ sealed: [UInt8], presenceKey: [UInt8], handshakeHash: [UInt8]) throws(ProtocolError) -> ExchangeMessage.Identity? {
        guard
            let plain = try? ChaChaPoly.open(
                sealed, key: key(presenceKey: presenceKey, handshakeHash: handshakeHash),
                nonce: [UInt8](repeating: 0, count: ChaChaPoly.nonceByteCount))
        else { return nil }
        let value = try ExchangeMessage.parseCanonical(plain)
        return try ExchangeMessage.Identity(json: value, in: "sealedIdentity")
    }
}
