import NearcardCrypto

/// What a session is for, named by the payload of Noise message 1 (docs/PROTOCOL.md §5).
public enum SessionKind: String, Sendable, CaseIterable {
    /// A card exchange between two people.
    case exchange = "nearcard/1"
    /// Delivery of a follow-up message to a contact.
    case mail = "nearcard-mail/1"

    public var tag: [UInt8] { Array(rawValue.utf8) }
}

/// The responder's first step: read message 1 and learn which kind of session the initiator wants.
public enum SessionDispatch {
    public static func readFirstMessage(_ frame: [UInt8], staticKey: X25519.PrivateKey, ephemeralKey: X25519.PrivateKey) throws(ProtocolError) -> (SessionKind, NoiseXXHandshake) {
        var noise = NoiseXXHandshake(role: .responder, prologue: ExchangeStateMachine.prologue, staticKey: staticKey, ephemeralKey: ephemeralKey)
        let payload = try noise.readMessage(frame)
        guard let kind = SessionKind.allCases.first(where: { $0.tag == payload }) else {
            throw ProtocolError(.unsupportedVersion, "the peer does not speak a Nearcard protocol this node knows (it sent \(String(decoding: payload.prefix(32), as: UTF8.self).debugDescription))")
        }
        return (kind, noise)
    }
}
