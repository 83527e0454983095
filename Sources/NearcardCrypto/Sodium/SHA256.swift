internal import CSodium

/// SHA-256 (libsodium `crypto_hash_sha256`; inputs of `libcryptoThreshold` bytes or more through
/// libcrypto, which uses the CPU's SHA instructions: the same digest, four times faster on a card).
public enum SHA256 {
    public static let byteCount = 32
    /// From this size on, libcrypto's SHA-256 is faster than libsodium's, its set-up included.
    static let libcryptoThreshold = 256

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        if data.count >= libcryptoThreshold, let digest = OpenSSL.sha256(data) { return digest }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_hash_sha256(&out, data, UInt64(data.count))
        return out
    }

    /// Incremental hashing, for inputs assembled from parts.
    public struct Hasher {
        private var state = crypto_hash_sha256_state()

        public init() {
            Sodium.ensureInitialized()
            crypto_hash_sha256_init(&state)
        }

        public mutating func update(_ data: [UInt8]) {
            _ = crypto_hash_sha256_update(&state, data, UInt64(data.count))
        }

        public mutating func finalize() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: SHA256.byteCount)
            crypto_hash_sha256_final(&state, &out)
            return out
        }
    }
}

/// HMAC-SHA-256 (libsodium `crypto_auth_hmacsha256_*`, which takes keys of any length).
public enum HMACSHA256 {
    public static let byteCount = 32

    public static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        var state = crypto_auth_hmacsha256_state()
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_auth_hmacsha256_init(&state, key, key.count)
        _ = crypto_auth_hmacsha256_update(&state, message, UInt64(message.count))
        crypto_auth_hmacsha256_final(&state, &out)
        sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
        return out
    }

    /// HMAC over secret key material, whose output is secret too (a Noise chaining key, HKDF outputs):
    /// key and output live only in `SecureBytes`, wiped when dropped.
    public static func authenticate(key: SecureBytes, message: SecureBytes) -> SecureBytes {
        Sodium.ensureInitialized()
        return SecureBytes(count: byteCount) { out in
            var state = crypto_auth_hmacsha256_state()
            key.withUnsafeBytes { k in
                if let base = k.bindMemory(to: UInt8.self).baseAddress {
                    _ = crypto_auth_hmacsha256_init(&state, base, k.count)
                } else {
                    _ = crypto_auth_hmacsha256_init(&state, [], 0)
                }
            }
            message.withUnsafeBytes { m in
                if let base = m.bindMemory(to: UInt8.self).baseAddress { _ = crypto_auth_hmacsha256_update(&state, base, UInt64(m.count)) }
            }
            // `out` is byteCount (32) bytes, so it has an address.
            if let base = out.bindMemory(to: UInt8.self).baseAddress { crypto_auth_hmacsha256_final(&state, base) }
            sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
        }
    }

    /// Checks a tag, possibly truncated to `tag.count` bytes (at least 10), in constant time.
    public static func isValid(tag: [UInt8], key: [UInt8], message: [UInt8]) -> Bool {
        guard tag.count >= 10, tag.count <= byteCount else { return false }
        let full = authenticate(key: key, message: message)
        return Sodium.constantTimeEquals(Array(full.prefix(tag.count)), tag)
    }
}

/// HKDF with SHA-256 (RFC 5869), built on `HMACSHA256`. libsodium 1.0.18 has no HKDF of its own.
public enum HKDFSHA256 {
    /// The largest output RFC 5869 allows: 255 blocks.
    public static let maximumOutputLength = 255 * HMACSHA256.byteCount

    public static func extract(salt: [UInt8], inputKeyMaterial: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(key: salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt, message: inputKeyMaterial)
    }

    public static func expand(pseudoRandomKey prk: [UInt8], info: [UInt8], outputLength: Int) throws(CryptoError) -> [UInt8] {
        guard outputLength >= 0, outputLength <= maximumOutputLength else {
            throw CryptoError(.invalidArgument, Phrase("HKDF output length %1$@ is outside 0…%2$@ bytes", String(outputLength), String(maximumOutputLength)))
        }
        var output: [UInt8] = []
        output.reserveCapacity(outputLength)
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < outputLength {
            block = HMACSHA256.authenticate(key: prk, message: block + info + [counter])
            output.append(contentsOf: block.prefix(outputLength - output.count))
            counter &+= 1
        }
        block.wipe()
        return output
    }

    public static func deriveKey(inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], outputLength: Int) throws(CryptoError) -> [UInt8] {
        var prk = extract(salt: salt, inputKeyMaterial: inputKeyMaterial)
        defer { prk.wipe() }
        return try expand(pseudoRandomKey: prk, info: info, outputLength: outputLength)
    }
}
