internal import COpenSSL

/// Where a serving node keeps its long-term secret keys: in memory locked in RAM (never written to
/// swap) and fenced by guard pages — libsodium's `sodium_malloc` for the X25519 and Ed25519 keys,
/// OpenSSL's secure heap for the P-256 scalar (its private BIGNUMs come from there once it exists).
public enum SecureMemory {
    /// The secure heap's size: three keys need a few hundred bytes; OpenSSL rounds to pages.
    static let heapBytes = 64 * 1024

    /// Creates OpenSSL's secure heap (once); true when it exists. Call before loading the keys.
    @discardableResult
    public static func enable() -> Bool {
        if CRYPTO_secure_malloc_initialized() == 1 { return true }
        return CRYPTO_secure_malloc_init(heapBytes, 32) != 0
    }

    /// Whether `enable()` succeeded in this process.
    public static var isEnabled: Bool { CRYPTO_secure_malloc_initialized() == 1 }
}

extension IdentityKeys {
    /// The same keys, moved into locked memory (`SecureMemory`); the copies this replaces are wiped
    /// when their last reference goes.
    public func locked() throws(CryptoError) -> IdentityKeys {
        IdentityKeys(
            p256: try P256.PrivateKey(rawRepresentation: p256.rawRepresentation.lockedCopy()),
            x25519: try X25519.PrivateKey(secret: x25519.secret.lockedCopy()),
            ed25519: try Ed25519.PrivateKey(seed: ed25519.seed.lockedCopy()))
    }

    /// Whether the Curve25519 keys live in locked memory.
    public var areLocked: Bool { x25519.secret.isLocked && ed25519.seed.isLocked }
}
