import NearcardCrypto
import NearcardModel

/// What the XX and IK handshakes share: a DH step that names its failures, and a reader over one
/// handshake message.
enum NoiseDH {
    static func agree(_ local: X25519.PrivateKey, _ remote: X25519.PublicKey?) throws(ProtocolError) -> SecureBytes {
        guard let remote else { throw ProtocolError(.internalError, Phrase("a Noise DH before the peer's key is known")) }
        do { return try local.sharedSecret(with: remote) } catch {
            throw ProtocolError(.decryptFailed, Phrase("the peer's key has low order"))
        }
    }
}

/// Reads one handshake message front to back; a message too short for what it must hold is a protocol error.
struct HandshakeMessageReader {
    private var rest: ArraySlice<UInt8>

    init(_ message: [UInt8]) { rest = message[...] }

    mutating func take(_ n: Int) throws(ProtocolError) -> [UInt8] {
        guard rest.count >= n else { throw ProtocolError(.protocolError, Phrase("a handshake message is too short")) }
        defer { rest = rest.dropFirst(n) }
        return Array(rest.prefix(n))
    }

    /// A key sent in the clear (an ephemeral `e`).
    mutating func publicKey() throws(ProtocolError) -> X25519.PublicKey { try Self.publicKey(try take(32)) }

    /// What is left: the (encrypted) payload.
    var remaining: [UInt8] { Array(rest) }

    static func publicKey(_ bytes: [UInt8]) throws(ProtocolError) -> X25519.PublicKey {
        do { return try X25519.PublicKey(rawRepresentation: bytes) } catch { throw ProtocolError(.protocolError, Phrase("bad key length")) }
    }
}
