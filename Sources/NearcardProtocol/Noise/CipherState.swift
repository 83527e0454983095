public import NearcardCrypto
public import NearcardModel

/// Noise CipherState (Noise spec §5.1) with ChaChaPoly: a key and a 64-bit counter nonce,
/// encoded as 4 zero bytes ‖ 8-byte little-endian counter.
public struct NoiseCipherState: Sendable {
    private var key: SecureBytes?
    private var nonce: UInt64 = 0

    public init(key: SecureBytes? = nil) { self.key = key }

    static func nonceBytes(_ n: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 { out[4 + i] = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i))) }
        return out
    }

    public mutating func encrypt(associatedData ad: [UInt8], plaintext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce < UInt64.max else { throw ProtocolError(.protocolError, Phrase("Noise nonce exhausted")) }
        let out: [UInt8]
        do { out = try ChaChaPoly.seal(plaintext, key: key, nonce: Self.nonceBytes(nonce), authenticating: ad) } catch {
            throw ProtocolError(.internalError, Phrase("encryption failed: %1$@", error.phrase))
        }
        nonce += 1
        return out
    }

    public mutating func decrypt(associatedData ad: [UInt8], ciphertext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard nonce < UInt64.max else { throw ProtocolError(.protocolError, Phrase("Noise nonce exhausted")) }
        let out: [UInt8]
        do { out = try ChaChaPoly.open(ciphertext, key: key, nonce: Self.nonceBytes(nonce), authenticating: ad) } catch {
            throw ProtocolError(.decryptFailed, Phrase("a Noise message failed authentication (altered, replayed, or from another session)"))
        }
        nonce += 1
        return out
    }
}

/// Noise SymmetricState (§5.2) for SHA-256: chaining key, handshake hash, and a CipherState. The
/// chaining key and every HKDF output are secrets: they live only in `SecureBytes` (wiped when replaced),
/// never in arrays.
struct NoiseSymmetricState: Sendable {
    private var chainingKey: SecureBytes
    private(set) var handshakeHash: [UInt8]
    private var cipher = NoiseCipherState()

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        if name.count <= 32 {
            handshakeHash = name + [UInt8](repeating: 0, count: 32 - name.count)
        } else {
            handshakeHash = SHA256.hash(name)
        }
        chainingKey = SecureBytes(handshakeHash)
    }

    /// HKDF as the Noise spec defines it (§4.3): two 32-byte outputs.
    static func hkdf(_ chainingKey: SecureBytes, _ input: SecureBytes) -> (SecureBytes, SecureBytes) {
        let temp = HMACSHA256.authenticate(key: chainingKey, message: input)
        let first = HMACSHA256.authenticate(key: temp, message: SecureBytes([1]))
        let second = HMACSHA256.authenticate(key: temp, message: first.bytesFollowed(by: 2))
        return (first, second)
    }

    mutating func mixKey(_ input: SecureBytes) {
        let (ck, k) = Self.hkdf(chainingKey, input)
        chainingKey = ck
        cipher = NoiseCipherState(key: k)
    }

    mutating func mixHash(_ data: [UInt8]) {
        handshakeHash = SHA256.hash(handshakeHash + data)
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        let c = try cipher.encrypt(associatedData: handshakeHash, plaintext: plaintext)
        mixHash(c)
        return c
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        let p = try cipher.decrypt(associatedData: handshakeHash, ciphertext: ciphertext)
        mixHash(ciphertext)
        return p
    }

    /// The two transport CipherStates: (initiator → responder, responder → initiator).
    func split() -> (NoiseCipherState, NoiseCipherState) {
        let (k1, k2) = Self.hkdf(chainingKey, SecureBytes(count: 0) { _ in })
        return (NoiseCipherState(key: k1), NoiseCipherState(key: k2))
    }
}

extension SecureBytes {
    /// These bytes and one more, in a new secret buffer (HKDF's `T(i-1) || i`).
    fileprivate func bytesFollowed(by byte: UInt8) -> SecureBytes {
        withUnsafeBytes { mine in
            SecureBytes(count: mine.count + 1) { out in
                out.copyMemory(from: mine)
                out[mine.count] = byte
            }
        }
    }
}
