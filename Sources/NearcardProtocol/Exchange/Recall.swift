import NearcardCrypto
public import NearcardModel

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

    /// The size a sealed identity's plaintext is padded to (§6.2, revision 2.2): one size for every
    /// identity within the limits, so its length says nothing of the name, DID or keys inside (with
    /// revision 2.1's two sizes, 512 and 1,008, a name over about 216 bytes of UTF-8 took the larger).
    /// The longest identity — a 64-code-point name of 4-byte characters, 256 bytes — is about 560
    /// bytes of JCS. 1,008 bytes sealed are 1,024: the limit of `sealedIdentity`.
    public static let paddedSizes = [1008]

    /// JCS(identity) followed by zero bytes up to the first of `paddedSizes` it fits (a canonical JSON
    /// text never ends in a zero byte, so the padding is read off unambiguously).
    static func padded(_ text: [UInt8]) -> [UInt8] {
        guard let size = paddedSizes.first(where: { $0 >= text.count }) else { return text }
        return text + [UInt8](repeating: 0, count: size - text.count)
    }

    /// ChaCha20-Poly1305 (nonce: 12 zero bytes — the key is used once), over JCS(identity) padded.
    public static func seal(_ identity: ExchangeMessage.Identity, presenceKey: [UInt8], handshakeHash: [UInt8]) throws(ProtocolError) -> [UInt8] {
        do {
            return try ChaChaPoly.seal(
                padded(JCS.canonicalize(identity.json)), key: key(presenceKey: presenceKey, handshakeHash: handshakeHash),
                nonce: [UInt8](repeating: 0, count: ChaChaPoly.nonceByteCount))
        } catch {
            throw ProtocolError(.internalError, Phrase("sealing our identity failed: %1$@", error.phrase))
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
        // Padded (revision 2.1) or not (earlier): the identity is what precedes the trailing zero bytes.
        let end = (plain.lastIndex { $0 != 0 } ?? -1) + 1
        let value = try ExchangeMessage.parseCanonical(Array(plain[..<end]))
        return try ExchangeMessage.Identity(json: value, in: "sealedIdentity")
    }
}
