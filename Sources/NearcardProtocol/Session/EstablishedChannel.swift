import NearcardCrypto
import NearcardModel

/// A session's encrypted channel once its Noise handshake is complete: the transport ciphers, the
/// handshake hash h (the channel binding every signature covers) and the peer's proven static key.
struct EstablishedChannel: Sendable {
    var transport: NoiseTransport
    let handshakeHash: [UInt8]
    let remoteStatic: X25519.PublicKey

    init(completed noise: NoiseXXHandshake) throws(ProtocolError) {
        guard let remoteStatic = noise.remoteStatic else {
            throw ProtocolError(.internalError, Phrase("the handshake completed without the peer's static key"))
        }
        transport = try noise.split()
        handshakeHash = noise.handshakeHash
        self.remoteStatic = remoteStatic
    }

    init(completed noise: NoiseIKHandshake) throws(ProtocolError) {
        guard let remoteStatic = noise.remoteStatic else {
            throw ProtocolError(.internalError, Phrase("the handshake completed without the peer's static key"))
        }
        transport = try noise.split()
        handshakeHash = noise.handshakeHash
        self.remoteStatic = remoteStatic
    }

    mutating func encrypt(_ plaintext: [UInt8]) throws(ProtocolError) -> [UInt8] { try transport.encrypt(plaintext) }

    mutating func decrypt(_ ciphertext: [UInt8]) throws(ProtocolError) -> [UInt8] { try transport.decrypt(ciphertext) }
}
