public import NearcardCrypto
public import NearcardModel

/// The Noise XX handshake, `Noise_XX_25519_ChaChaPoly_SHA256` (noiseprotocol.org, revision 34):
///
///     XX:
///       -> e
///       <- e, ee, s, es
///       -> s, se
///
/// A pure state machine: it takes and returns bytes; the caller supplies the ephemeral key
/// (fresh randomness in use, fixed keys in the known-answer tests) and moves the bytes.
public struct NoiseXXHandshake: Sendable {
    public static let protocolName = "Noise_XX_25519_ChaChaPoly_SHA256"

    public enum Role: String, Sendable { case initiator, responder }

    /// Where the handshake is; each case names what has happened.
    enum State: Sendable {
        case initiatorReady
        case initiatorSentE
        case initiatorReceivedResponse
        case responderReady
        case responderReceivedE
        case responderSentResponse
        case complete
        case failed
    }

    public let role: Role
    private var state: State
    private var symmetric: NoiseSymmetricState
    /// A responder may choose it after reading message 1 (`useStaticKey`): XX uses it from message 2 on.
    private var localStatic: X25519.PrivateKey?
    private let localEphemeral: X25519.PrivateKey
    private var remoteEphemeral: X25519.PublicKey?
    public private(set) var remoteStatic: X25519.PublicKey?

    public init(role: Role, prologue: [UInt8], staticKey: X25519.PrivateKey?, ephemeralKey: X25519.PrivateKey) {
        self.role = role
        self.state = role == .initiator ? .initiatorReady : .responderReady
        self.symmetric = NoiseSymmetricState(protocolName: Self.protocolName)
        self.localStatic = staticKey
        self.localEphemeral = ephemeralKey
        symmetric.mixHash(prologue)
    }

    /// A responder that read message 1 (which says what the session is for) takes the static key that
    /// kind of session uses (Nearcard: a fresh one per exchange, the long-term one for mail).
    public mutating func useStaticKey(_ key: X25519.PrivateKey) {
        precondition(role == .responder && localStatic == nil, "the static key is chosen once, by a responder")
        localStatic = key
    }

    private func staticKey() throws(ProtocolError) -> X25519.PrivateKey {
        guard let localStatic else { throw ProtocolError(.internalError, Phrase("no Noise static key chosen for this session")) }
        return localStatic
    }

    public var isComplete: Bool { if case .complete = state { true } else { false } }

    /// A responder that has read message 1 and has message 2 to write.
    public var isResponderReadyToAnswer: Bool { if case .responderReceivedE = state { true } else { false } }

    /// h: the handshake hash. Final once `isComplete`; Nearcard's channel binding.
    public var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// Writes the next handshake message carrying `payload`.
    public mutating func writeMessage(payload: [UInt8] = []) throws(ProtocolError) -> [UInt8] {
        var out: [UInt8] = []
        switch (role, state) {
        case (.initiator, .initiatorReady):
            // -> e
            out += localEphemeral.publicKey.rawRepresentation
            symmetric.mixHash(localEphemeral.publicKey.rawRepresentation)
            out += try symmetric.encryptAndHash(payload)
            state = .initiatorSentE
        case (.responder, .responderReceivedE):
            // <- e, ee, s, es
            out += localEphemeral.publicKey.rawRepresentation
            symmetric.mixHash(localEphemeral.publicKey.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, remoteEphemeral))
            let s = try staticKey()
            out += try symmetric.encryptAndHash(s.publicKey.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(s, remoteEphemeral))
            out += try symmetric.encryptAndHash(payload)
            state = .responderSentResponse
        case (.initiator, .initiatorReceivedResponse):
            // -> s, se
            let s = try staticKey()
            out += try symmetric.encryptAndHash(s.publicKey.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(s, remoteEphemeral))
            out += try symmetric.encryptAndHash(payload)
            state = .complete
        default:
            throw ProtocolError(.internalError, Phrase("no Noise message to write in state %1$@ as the %2$@", "\(state)", "\(role)"))
        }
        guard out.count <= ProtocolLimits.maximumFrameLength else { throw ProtocolError(.tooLarge, Phrase("handshake message over %1$@ bytes", "65535")) }
        return out
    }

    /// Reads message 2 or 3, whose payload §5 requires to be empty: a payload is a protocol error
    /// (refused before transport keys exist, so the connection closes without an abort).
    public mutating func readEmptyMessage(_ message: [UInt8]) throws(ProtocolError) {
        let payload = try readMessage(message)
        guard payload.isEmpty else {
            state = .failed
            throw ProtocolError(
                .protocolError,
                Phrase("Noise message %1$@ carries a %2$@-byte payload; it must be empty", role == .initiator ? "2" : "3", String(payload.count)))
        }
    }

    /// Reads the peer's next handshake message; returns its payload. Any failure ends the handshake.
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
        switch (role, state) {
        case (.responder, .responderReady):
            // -> e
            let re = try reader.publicKey()
            remoteEphemeral = re
            symmetric.mixHash(re.rawRepresentation)
            let payload = try symmetric.decryptAndHash(reader.remaining)
            state = .responderReceivedE
            return payload
        case (.initiator, .initiatorSentE):
            // <- e, ee, s, es
            let re = try reader.publicKey()
            remoteEphemeral = re
            symmetric.mixHash(re.rawRepresentation)
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, re))
            let rs = try HandshakeMessageReader.publicKey(try symmetric.decryptAndHash(try reader.take(32 + ProtocolLimits.noiseTagLength)))
            remoteStatic = rs
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, rs))
            let payload = try symmetric.decryptAndHash(reader.remaining)
            state = .initiatorReceivedResponse
            return payload
        case (.responder, .responderSentResponse):
            // -> s, se
            let rs = try HandshakeMessageReader.publicKey(try symmetric.decryptAndHash(try reader.take(32 + ProtocolLimits.noiseTagLength)))
            remoteStatic = rs
            symmetric.mixKey(try NoiseDH.agree(localEphemeral, rs))
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

/// The two CipherStates of an established session.
public struct NoiseTransport: Sendable {
    var send: NoiseCipherState
    var receive: NoiseCipherState

    /// Encrypts one application message (at most `ProtocolLimits.maximumMessageLength` bytes).
    public mutating func encrypt(_ plaintext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        guard plaintext.count <= ProtocolLimits.maximumMessageLength else {
            throw ProtocolError(
                .tooLarge,
                Phrase(
                    "a message of %1$@ bytes is over the %2$@-byte limit; Nearcard refuses rather than splits it", String(plaintext.count),
                    String(ProtocolLimits.maximumMessageLength)))
        }
        return try send.encrypt(associatedData: [], plaintext: plaintext)
    }

    public mutating func decrypt(_ ciphertext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        try receive.decrypt(associatedData: [], ciphertext: ciphertext)
    }
}
