import NearcardCrypto

/// Noise CipherState (Noise spec §5.1) with ChaChaPoly: a key and a 64-bit counter nonce,
/// encoded as 4 zero bytes ‖ 8-byte little-endian counter.
public struct NoiseCipherState: Sendable {
    private var key: SecureBytes?
    private var nonce: UInt64 = 0

    public init(key: SecureBytes? = nil) { self.key = key }

    public var hasKey: Bool { key != nil }

    static func nonceBytes(_ n: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 { out[4 + i] = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i))) }
        return out
    }

    public mutating func encrypt(associatedData ad: [UInt8], plaintext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce < UInt64.max else { throw ProtocolError(.protocolError, "Noise nonce exhausted") }
        let out: [UInt8]
        do { out = try ChaChaPoly.seal(plaintext, key: key, nonce: Self.nonceBytes(nonce), authenticating: ad) } catch {
            throw ProtocolError(.internalError, "encryption failed: \(error.message)")
        }
        nonce += 1
        return out
    }

    public mutating func decrypt(associatedData ad: [UInt8], ciphertext: [UInt8]) throws(ProtocolError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard nonce < UInt64.max else { throw ProtocolError(.protocolError, "Noise nonce exhausted") }
        let out: [UInt8]
        do { out = try ChaChaPoly.open(ciphertext, key: key, nonce: Self.nonceBytes(nonce), authenticating: ad) } catch {
            throw ProtocolError(.decryptFailed, "a Noise message failed authentication (altered, replayed, or from another session)")
        }
        nonce += 1
        return out
    }
}

/// Noise SymmetricState (§5.2) for SHA-256: chaining key, handshake hash, and a CipherState.
struct NoiseSymmetricState: Sendable {
    private(set) var chainingKey: [UInt8]
    private(set) var handshakeHash: [UInt8]
    private var cipher = NoiseCipherState()

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        if name.count <= 32 {
            handshakeHash = name + [UInt8](repeating: 0, count: 32 - name.count)
        } else {
            handshakeHash = SHA256.hash(name)
        }
        chainingKey = handshakeHash
    }

    /// HKDF as the Noise spec defines it (§4.3), returning two or three 32-byte outputs.
    static func hkdf(_ chainingKey: [UInt8], _ input: [UInt8], outputs: Int) -> [[UInt8]] {
        let temp = HMACSHA256.authenticate(key: chainingKey, message: input)
        var out: [[UInt8]] = []
        var previous: [UInt8] = []
        for i in 1...outputs {
            previous = HMACSHA256.authenticate(key: temp, message: previous + [UInt8(i)])
            out.append(previous)
        }
        return out
    }

    mutating func mixKey(_ input: SecureBytes) {
        let o = input.withUnsafeBytes { Self.hkdf(chainingKey, Array($0), outputs: 2) }
        chainingKey = o[0]
        cipher = NoiseCipherState(key: SecureBytes(o[1]))
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

    var hasKey: Bool { cipher.hasKey }

    /// The two transport CipherStates: (initiator → responder, responder → initiator).
    func split() -> (NoiseCipherState, NoiseCipherState) {
        let o = Self.hkdf(chainingKey, [], outputs: 2)
        return (NoiseCipherState(key: SecureBytes(o[0])), NoiseCipherState(key: SecureBytes(o[1])))
    }
}
