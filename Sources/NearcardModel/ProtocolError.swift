@_exported public import NearcardErrors

/// The one error type of NearcardProtocol. `code` is the wire abort code (docs/PROTOCOL.md
/// "Abort codes"); `message` says what happened for people. Misbehaviour by a peer is thrown;
/// a bug of ours is a `preconditionFailure`. It lives here, beside the card, because the faces read it
/// (a failed exchange's code and words) and they never import the protocol (docs/ARCHITECTURE.md).
public typealias ProtocolError = ModuleError<ProtocolErrorCode>

/// What a `ProtocolError` is about: the abort code the wire carries.
public enum ProtocolErrorCode: String, Sendable, Equatable, CaseIterable {
    /// Bytes or a message that do not fit the protocol at this point.
    case protocolError = "protocol_error"
    /// A frame or message over its limit.
    case tooLarge = "too_large"
    /// Noise decryption or authentication failed.
    case decryptFailed = "decrypt_failed"
    /// The peer's DID proof over the handshake hash does not verify, or its DID is unusable.
    case badIdentity = "bad_identity"
    /// The peer proved a fingerprint or DID other than the one it advertised or we expected.
    case identityMismatch = "identity_mismatch"
    /// The SAS commitment did not match the revealed nonce.
    case badCommitment = "bad_commitment"
    /// A person (or a bot's policy) declined.
    case declined = "declined"
    /// Nobody decided in time.
    case consentTimeout = "consent_timeout"
    /// A step took too long.
    case timeout = "timeout"
    /// The peer's card failed verification (the message has the reason).
    case badCard = "bad_card"
    /// The node is at its session limit or the address is rate-limited.
    case busy = "busy"
    /// The other side went away.
    case connectionLost = "connection_lost"
    /// Something failed on our side (storage, …).
    case internalError = "internal_error"
    /// Protocol version not supported.
    case unsupportedVersion = "unsupported_version"
    /// The QR invitation the initiator presented is unknown, expired, used up, or its proof is wrong.
    case inviteRefused = "invite_refused"
}

extension ModuleError where K == ProtocolErrorCode {
    /// The wire abort code (the error's kind).
    public var code: ProtocolErrorCode { kind }
}
