import NearcardCrypto

/// The responder's first step: read message 1 and learn which kind of session the initiator wants.
/// Every responder starts here; the exchange and mail state machines resume from the handshake it
/// returns, which carries the static key `staticKey` chose for that kind of session (§5: an exchange's
/// is fresh, so nothing in it identifies the node before its person decides).
public enum SessionDispatch {
    public static func readFirstMessage(_ frame: [UInt8], ephemeralKey: X25519.PrivateKey,
                                        staticKey: (SessionKind) -> X25519.PrivateKey) throws(ProtocolError) -> (SessionKind, NoiseXXHandshake) {
        var noise = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: nil, ephemeralKey: ephemeralKey)
        let payload = try noise.readMessage(frame)
        guard let kind = SessionKind.allCases.first(where: { $0.tag == payload }) else {
            // "nearcard/2", "nearcard-mail/9": a Nearcard peer of another version, worth telling a
            // person about. Anything else is not Nearcard at all (a scanner, noise).
            if payload.starts(with: Array("nearcard".utf8)), payload.count <= 32, payload.allSatisfy({ (0x21...0x7E).contains($0) }) {
                throw ProtocolError(.unsupportedVersion, "the peer speaks \(String(decoding: payload, as: UTF8.self)), a Nearcard protocol this node does not know (it speaks \(SessionKind.allCases.map { String(decoding: $0.tag, as: UTF8.self) }.joined(separator: " and ")))")
            }
            throw ProtocolError(.protocolError, "the first message is not a Nearcard session's (\(payload.count)-byte payload)")
        }
        noise.useStaticKey(staticKey(kind))
        return (kind, noise)
    }
}
