internal import CSodium

/// ChaCha20-Poly1305 as in RFC 8439 (libsodium's `_ietf` variant: 12-byte nonce). Noise's cipher.
public enum ChaChaPoly {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// Returns ciphertext ‖ tag.
    public static func seal(_ plaintext: [UInt8], key: SecureBytes, nonce: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try check(key: key, nonce: nonce)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var outLength: UInt64 = 0
        key.withUnsafeBytes { k in
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                &out, &outLength, plaintext, UInt64(plaintext.count), aad, UInt64(aad.count), nil, nonce,
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return out
    }

    /// Opens ciphertext ‖ tag; throws `.authenticationFailed` when anything was altered.
    public static func open(_ sealed: [UInt8], key: SecureBytes, nonce: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try check(key: key, nonce: nonce)
        guard sealed.count >= tagByteCount else {
            throw CryptoError(.authenticationFailed, Phrase("ciphertext is shorter than its 16-byte tag"))
        }
        var out = [UInt8](repeating: 0, count: sealed.count - tagByteCount)
        var outLength: UInt64 = 0
        let rc = key.withUnsafeBytes { k in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                &out, &outLength, nil, sealed, UInt64(sealed.count), aad, UInt64(aad.count), nonce,
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard rc == 0 else {
            throw CryptoError(.authenticationFailed, Phrase("decryption failed: the ciphertext or its associated data was altered, or the key is wrong"))
        }
        return out
    }

    private static func check(key: SecureBytes, nonce: [UInt8]) throws(CryptoError) {
        Sodium.ensureInitialized()
        guard key.count == keyByteCount else { throw CryptoError(.invalidArgument, Phrase("ChaCha20-Poly1305 keys are 32 bytes, not %1$@", String(key.count))) }
        guard nonce.count == nonceByteCount else {
            throw CryptoError(.invalidArgument, Phrase("ChaCha20-Poly1305 nonces are 12 bytes, not %1$@", String(nonce.count)))
        }
    }
}

/// XChaCha20-Poly1305 (24-byte random nonces): what sealed key files use.
public enum XChaChaPoly {
    public static let keyByteCount = 32
    public static let nonceByteCount = 24
    public static let tagByteCount = 16

    public static func seal(_ plaintext: [UInt8], key: SecureBytes, nonce: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try check(key: key, nonce: nonce)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var outLength: UInt64 = 0
        key.withUnsafeBytes { k in
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                &out, &outLength, plaintext, UInt64(plaintext.count), aad, UInt64(aad.count), nil, nonce,
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return out
    }

    public static func open(_ sealed: [UInt8], key: SecureBytes, nonce: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> SecureBytes {
        try check(key: key, nonce: nonce)
        guard sealed.count >= tagByteCount else { throw CryptoError(.authenticationFailed, Phrase("ciphertext is shorter than its 16-byte tag")) }
        var failed = false
        let plain = SecureBytes(count: sealed.count - tagByteCount) { out in
            var outLength: UInt64 = 0
            let rc = key.withUnsafeBytes { k in
                crypto_aead_xchacha20poly1305_ietf_decrypt(
                    out.baseAddress?.assumingMemoryBound(to: UInt8.self), &outLength, nil, sealed, UInt64(sealed.count), aad, UInt64(aad.count), nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            failed = rc != 0
        }
        guard !failed else {
            throw CryptoError(.authenticationFailed, Phrase("decryption failed: the ciphertext or its associated data was altered, or the key is wrong"))
        }
        return plain
    }

    private static func check(key: SecureBytes, nonce: [UInt8]) throws(CryptoError) {
        Sodium.ensureInitialized()
        guard key.count == keyByteCount else {
            throw CryptoError(.invalidArgument, Phrase("XChaCha20-Poly1305 keys are 32 bytes, not %1$@", String(key.count)))
        }
        guard nonce.count == nonceByteCount else {
            throw CryptoError(.invalidArgument, Phrase("XChaCha20-Poly1305 nonces are 24 bytes, not %1$@", String(nonce.count)))
        }
    }
}
