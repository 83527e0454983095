public import NearcardCrypto
public import NearcardModel

/// The Noise IK handshake, `Noise_IK_25519_ChaChaPoly_SHA256` (noiseprotocol.org, revision 34), which
/// mail sessions use (docs/PROTOCOL.md §15): the sender already knows the recipient's long-term key
/// from the route, so the recipient never sends it.
///
///     IK:
///       <- s
///       ...
///       -> e, es, s, ss
///       <- e, ee, se
///
/// A pure state machine like `NoiseXXHandshake`: bytes in, bytes out; the caller supplies the keys.
public struct NoiseIKHandshake: Sendable {
    public static let protocolName = "Noise_IK_25519_ChaChaPoly_SHA256"

    enum State: Sendable {
        case initiatorReady, initiatorSent, responderReady, responderRead, complete, failed
    }

    public let role: NoiseXXHandshake.Role
    private var state: State
    private var symmetric: NoiseSymmetricState
    private let localStatic: X25519.PrivateKey
    private let localEphemeral: X25519.PrivateKey
    private var remoteEphemeral: X25519.PublicKey?
    /// The peer's static key: known in advance by the initiator; learnt from message 1 by the responder.
    public private(set) var remoteStatic: X25519.PublicKey?

    /// An initiator that knows the responder's static key.
    public init(initiatorTo responderStatic: X25519.PublicKey, prologue: [UInt8], staticKey: X25519.PrivateKey, ephemeralKey: X25519.PrivateKey) {
        role = .initiator
        state = .initiatorReady
        symmetric = NoiseSymmetricState(protocolName: Self.protocolName)
        localStatic = staticKey
        localEphemeral = ephemeralKey
        remoteStatic = responderStatic
        symmetric.mixHash(prologue)
        symmetric.mixHash(responderStatic.rawRepresentation)
    }

    /// A responder, with its own static key (the one the initiator must know).
    public init(responderWith staticKey: X25519.PrivateKey, prologue: [UInt8], ephemeralKey: X25519.PrivateKey) {
        role = .responder
        state = .responderReady
        symmetric = NoiseSymmetricState(protocolName: Self.protocolName)
        localStatic = staticKey
        localEphemeral = ephemeralKey
        symmetric.mixHash(prologue)
        symmetric.mixHash(staticKey.publicKey.rawRepresentation)
    }

    public var isComplete: Bool { if case .complete = state { true } else { false } }

    /// A responder that has read message 1 and has message 2 to write.
    public var isResponderReadyToAnswer: Bool { if case .responderRead = state { true } else { false } }

    public var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// Message 1 (initiator) or message 2 (responder), carrying `payload`.
    public mutating func writeMessage(payload: [UInt8] = []) throws(ProtocolError) -> [UInt8] {
        var out: [UInt8] = []
        switch state {
        case .initiatorReady:
            // -> e, es, s, ss
            out += localEphemeral.publicKey.rawRepresentation
            symmetric.mixHash(localEphemeral.publicKey.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, remoteStatic))
            out += try symmetric.encryptAndHash(localStatic.publicKey.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(localStatic, remoteStatic))
            out += try symmetric.encryptAndHash(payload)
            state = .initiatorSent
        case .responderRead:
            // <- e, ee, se
            out += localEphemeral.publicKey.rawRepresentation
            symmetric.mixHash(localEphemeral.publicKey.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, remoteEphemeral))
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, remoteStatic))
            out += try symmetric.encryptAndHash(payload)
            state = .complete
        default:
            throw ProtocolError(.internalError, Phrase("no Noise IK message to write in state %1$@ as the %2$@", "\(state)", "\(role)"))
        }
        guard out.count <= ProtocolLimits.maximumFrameLength else { throw ProtocolError(.tooLarge, Phrase("handshake message over %1$@ bytes", "65535")) }
        return out
    }

    /// Reads the peer's message (1 for a responder, 2 for an initiator); returns its payload. Any failure
    /// ends the handshake: for a responder, a message 1 made for another static key does not decrypt.
    public mutating func readMessage(_ message: [UInt8]) throws(ProtocolError) -> [UInt8] {
        do {
            return try read(message)
        } catch {
            state = .failed
            throw error
        }
    }

    private mutating func read(_ message: [UInt8]) throws(ProtocolError) -> [UInt8] {
        var reader = HandshakeMessageReader(message)
        switch state {
        case .responderReady:
            // -> e, es, s, ss
            let re = try reader.publicKey()
            remoteEphemeral = re
            symmetric.mixHash(re.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(localStatic, re))
            let rs = try HandshakeMessageReader.publicKey(try symmetric.decryptAndHash(try reader.take(32 + ProtocolLimits.noiseTagLength)))
            remoteStatic = rs
            symmetric.mixKey(try NoiseDH.agree(localStatic, rs))
            let payload = try symmetric.decryptAndHash(reader.remaining)
            state = .responderRead
            return payload
        case .initiatorSent:
            // <- e, ee, se
            let re = try reader.publicKey()
            remoteEphemeral = re
            symmetric.mixHash(re.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, re))
            symmetric.mixKey(try NoiseDH.agree(localStatic, re))
            let payload = try symmetric.decryptAndHash(reader.remaining)
            state = .complete
            return payload
        default:
            throw ProtocolError(.protocolError, Phrase("a handshake message arrived out of turn"))
        }
    }

    /// The transport ciphers once complete: (send, receive) from this side's point of view.
    public func split() throws(ProtocolError) -> NoiseTransport {
        guard isComplete else { throw ProtocolError(.internalError, Phrase("the Noise handshake is not complete")) }
        let (c1, c2) = symmetric.split()
        return role == .initiator ? NoiseTransport(send: c1, receive: c2) : NoiseTransport(send: c2, receive: c1)
    }
}
