public import NearcardCrypto
public import NearcardModel

/// The responder's first step: read message 1 and learn which kind of session the initiator wants
/// (docs/PROTOCOL.md §5, §15). Every responder starts here; the exchange and mail state machines resume
/// from the handshake it returns.
public enum SessionDispatch {
    /// Message 1, read: an exchange's XX handshake (with this session's fresh static key chosen), or a
    /// mail session's IK handshake (made for this node's long-term key).
    public enum FirstMessage: Sendable {
        case exchange(NoiseXXHandshake)
        case mail(NoiseIKHandshake)

        public var kind: SessionKind {
            switch self {
            case .exchange: .exchange
            case .mail: .mail
            }
        }
    }

    /// - Parameters:
    ///   - sessionKey: a fresh static key, for an exchange (§5: nothing in it outlives the session);
    ///     asked for only when the session is one.
    ///   - longTermKey: the node's X25519 key, which a mail session's message 1 is made for (§15).
    public static func readFirstMessage(
        _ frame: [UInt8], ephemeralKey: X25519.PrivateKey, sessionKey: @autoclosure () -> X25519.PrivateKey,
        longTermKey: X25519.PrivateKey
    ) throws(ProtocolError) -> FirstMessage {
        // An exchange's message 1 is an ephemeral key and a tag in the clear.
        var xx = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: nil, ephemeralKey: ephemeralKey)
        let clear = try? xx.readMessage(frame)
        if clear == SessionKind.exchange.tag {
            xx.useStaticKey(sessionKey())
            return .exchange(xx)
        }
        // A mail session's is sealed to our long-term key: it opens only if made for it.
        var ik = NoiseIKHandshake(responderWith: longTermKey, prologue: SessionKind.prologue, ephemeralKey: ephemeralKey)
        if let sealed = try? ik.readMessage(frame) {
            if sealed == SessionKind.mail.tag { return .mail(ik) }
            if let version = otherVersion(sealed) { throw version }
        }
        if let clear, let version = otherVersion(clear) { throw version }
        throw ProtocolError(.protocolError, Phrase("the first message is not a Nearcard session's (%1$@ bytes)", String(frame.count)))
    }

    /// "nearcard/1", "nearcard-mail/9": a Nearcard peer of another version, worth telling a person about.
    /// Anything else is not Nearcard at all (a scanner, noise).
    private static func otherVersion(_ payload: [UInt8]) -> ProtocolError? {
        guard payload.starts(with: Array("nearcard".utf8)), payload.count <= 32, payload.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return ProtocolError(
            .unsupportedVersion,
            Phrase(
                "the peer speaks %1$@, a Nearcard protocol this node does not know (it speaks %2$@)", String(decoding: payload, as: UTF8.self),
                SessionKind.allCases.map { String(decoding: $0.tag, as: UTF8.self) }.joined(separator: " and ")))
    }
}
