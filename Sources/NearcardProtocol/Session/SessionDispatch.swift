import NearcardCrypto

/// The responder's first step: read message 1 and learn which kind of session the initiator wants.
/// Every responder starts here; the exchange and mail state machines resume from the handshake it returns.
public enum SessionDispatch {
    public static func readFirstMessage(_ frame: [UInt8], staticKey: X25519.PrivateKey, ephemeralKey: X25519.PrivateKey) throws(ProtocolError) -> (SessionKind, NoiseXXHandshake) {
        var noise = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: staticKey, ephemeralKey: ephemeralKey)
        let payload = try noise.readMessage(frame)
        guard let kind = SessionKind.allCases.first(where: { $0.tag == payload }) else {
            throw ProtocolError(.unsupportedVersion, "the peer does not speak a Nearcard protocol this node knows (it sent \(String(decoding: payload.prefix(32), as: UTF8.self).debugDescription))")
        }
        return (kind, noise)
    }
}
