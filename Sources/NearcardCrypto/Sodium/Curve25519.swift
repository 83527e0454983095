internal import CSodium

/// X25519 key agreement (libsodium `crypto_scalarmult`). The X25519 key is a user's `pubKey`
/// and their Noise static key.
public enum X25519 {
    public static let keyByteCount = 32

    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        public let rawRepresentation: [UInt8]

        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == X25519.keyByteCount else {
                throw CryptoError(.invalidKey, Phrase("an X25519 public key is 32 bytes, not %1$@", String(rawRepresentation.count)))
            }
            self.rawRepresentation = rawRepresentation
        }

        public var description: String { "X25519.PublicKey(\(Base64.encode(rawRepresentation)))" }
    }

    public struct PrivateKey: Sendable, CustomStringConvertible {
        public let secret: SecureBytes
        public let publicKey: PublicKey

        /// A fresh random key.
        public init() {
            try! self.init(secret: SecureBytes.random(count: X25519.keyByteCount))
        }

        public init(secret: SecureBytes) throws(CryptoError) {
            Sodium.ensureInitialized()
            guard secret.count == X25519.keyByteCount else {
                throw CryptoError(.invalidKey, Phrase("an X25519 private key is 32 bytes, not %1$@", String(secret.count)))
            }
            var pub = [UInt8](repeating: 0, count: X25519.keyByteCount)
            secret.withUnsafeBytes { s in
                _ = crypto_scalarmult_base(&pub, s.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            self.secret = secret
            self.publicKey = try PublicKey(rawRepresentation: pub)
        }

        /// The shared secret with `peer`. Throws when the result is all zeros (a low-order peer key):
        /// such a "secret" is known to everyone, so accepting it would fail open.
        public func sharedSecret(with peer: PublicKey) throws(CryptoError) -> SecureBytes {
            var rc: Int32 = 0
            let shared = SecureBytes(count: X25519.keyByteCount) { out in
                rc = secret.withUnsafeBytes { s in
                    crypto_scalarmult(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self), peer.rawRepresentation)
                }
            }
            guard rc == 0 else { throw CryptoError(.invalidKey, Phrase("the peer's X25519 key has low order (the shared secret would be zero)")) }
            return shared
        }

        public var description: String { "X25519.PrivateKey(public: \(Base64.encode(publicKey.rawRepresentation)))" }
    }
}

/// Ed25519 signatures (libsodium `crypto_sign_*`). The Ed25519 key is a user's `signPubKey`.
public enum Ed25519 {
    public static let publicKeyByteCount = 32
    public static let seedByteCount = 32
    public static let signatureByteCount = 64

    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        public let rawRepresentation: [UInt8]

        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == Ed25519.publicKeyByteCount else {
                throw CryptoError(.invalidKey, Phrase("an Ed25519 public key is 32 bytes, not %1$@", String(rawRepresentation.count)))
            }
            self.rawRepresentation = rawRepresentation
        }

        /// Verifies a 64-byte signature (libsodium rejects non-canonical and small-order encodings).
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            Sodium.ensureInitialized()
            guard signature.count == Ed25519.signatureByteCount else { return false }
            return crypto_sign_verify_detached(signature, message, UInt64(message.count), rawRepresentation) == 0
        }

        /// The birationally equivalent X25519 key (the did:key spec's derived key-agreement key).
        public func x25519() throws(CryptoError) -> X25519.PublicKey {
            Sodium.ensureInitialized()
            var out = [UInt8](repeating: 0, count: X25519.keyByteCount)
            guard crypto_sign_ed25519_pk_to_curve25519(&out, rawRepresentation) == 0 else {
                throw CryptoError(.invalidKey, Phrase("this Ed25519 public key is not a valid curve point, so it has no X25519 form"))
            }
            return try X25519.PublicKey(rawRepresentation: out)
        }

        public var description: String { "Ed25519.PublicKey(\(Base64.encode(rawRepresentation)))" }
    }

    public struct PrivateKey: Sendable, CustomStringConvertible {
        /// The 32-byte seed (what key files store).
        public let seed: SecureBytes
        /// libsodium's 64-byte secret key (seed ‖ public key).
        private let expanded: SecureBytes
        public let publicKey: PublicKey

        public init() {
            try! self.init(seed: SecureBytes.random(count: Ed25519.seedByteCount))
        }

        public init(seed: SecureBytes) throws(CryptoError) {
            Sodium.ensureInitialized()
            guard seed.count == Ed25519.seedByteCount else {
                throw CryptoError(.invalidKey, Phrase("an Ed25519 seed is 32 bytes, not %1$@", String(seed.count)))
            }
            var pub = [UInt8](repeating: 0, count: Ed25519.publicKeyByteCount)
            // The expanded key lives in locked memory when the seed does.
            expanded = SecureBytes(count: 64, locked: seed.isLocked) { sk in
                seed.withUnsafeBytes { s in
                    _ = crypto_sign_seed_keypair(
                        &pub, sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            self.seed = seed
            self.publicKey = try PublicKey(rawRepresentation: pub)
        }

        /// A deterministic 64-byte signature (RFC 8032).
        public func signature(for message: [UInt8]) -> [UInt8] {
            var sig = [UInt8](repeating: 0, count: Ed25519.signatureByteCount)
            expanded.withUnsafeBytes { sk in
                _ = crypto_sign_detached(&sig, nil, message, UInt64(message.count), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            return sig
        }

        /// The X25519 private key birationally equivalent to this one (`crypto_sign_ed25519_sk_to_curve25519`).
        public func x25519() throws(CryptoError) -> X25519.PrivateKey {
            let secret = SecureBytes(count: X25519.keyByteCount) { out in
                expanded.withUnsafeBytes { sk in
                    _ = crypto_sign_ed25519_sk_to_curve25519(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            return try X25519.PrivateKey(secret: secret)
        }

        public var description: String { "Ed25519.PrivateKey(public: \(Base64.encode(publicKey.rawRepresentation)))" }
    }
}

/// Anonymous public-key encryption to an X25519 key (libsodium `crypto_box_seal`):
/// only the holder of the recipient's private key can open it; the sender stays anonymous.
public enum SealedBox {
    public static let overhead = Int(crypto_box_sealbytes())

    public static func seal(_ message: [UInt8], to recipient: X25519.PublicKey) -> [UInt8] {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: message.count + overhead)
        _ = crypto_box_seal(&out, message, UInt64(message.count), recipient.rawRepresentation)
        return out
    }

    /// The same box with an ephemeral key pair the caller made (ahead of time, off the critical path of
    /// a session): byte for byte what `crypto_box_seal` builds with that key pair, so any
    /// `crypto_box_seal_open` opens it —
    /// `epk ‖ crypto_box_easy(message, nonce = BLAKE2b-192(epk ‖ recipient), recipient, esk)`.
    /// The ephemeral key must be fresh and used for this one box; the caller drops it afterwards.
    public static func seal(_ message: [UInt8], to recipient: X25519.PublicKey, ephemeral: X25519.PrivateKey) -> [UInt8] {
        Sodium.ensureInitialized()
        let epk = ephemeral.publicKey.rawRepresentation
        var nonce = [UInt8](repeating: 0, count: Int(crypto_box_NONCEBYTES))
        _ = crypto_generichash(&nonce, nonce.count, epk + recipient.rawRepresentation, UInt64(2 * X25519.keyByteCount), nil, 0)
        var out = epk + [UInt8](repeating: 0, count: message.count + Int(crypto_box_MACBYTES))
        _ = out.withUnsafeMutableBufferPointer { o in
            ephemeral.secret.withUnsafeBytes { sk in
                crypto_box_easy(
                    o.baseAddress! + X25519.keyByteCount, message, UInt64(message.count), nonce, recipient.rawRepresentation,
                    sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    public static func open(_ sealed: [UInt8], with recipient: X25519.PrivateKey) throws(CryptoError) -> [UInt8] {
        Sodium.ensureInitialized()
        guard sealed.count >= overhead else {
            throw CryptoError(.authenticationFailed, Phrase("a sealed box is at least %1$@ bytes; this one has %2$@", String(overhead), String(sealed.count)))
        }
        var out = [UInt8](repeating: 0, count: sealed.count - overhead)
        let rc = recipient.secret.withUnsafeBytes { sk in
            crypto_box_seal_open(
                &out, sealed, UInt64(sealed.count), recipient.publicKey.rawRepresentation,
                sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard rc == 0 else {
            throw CryptoError(.authenticationFailed, Phrase("the sealed box does not open with this key (sealed for someone else, or altered)"))
        }
        return out
    }
}

/// Argon2id (libsodium `crypto_pwhash`, algorithm ARGON2ID13): turns a passphrase into a key.
public enum Argon2id {
    public static let saltByteCount = Int(crypto_pwhash_SALTBYTES)
    /// Nearcard's defaults for sealing key files: libsodium's "interactive" limits
    /// (2 passes, 64 MiB), about a tenth of a second on a laptop.
    public static let defaultOpsLimit = UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE)
    public static let defaultMemLimit = Int(crypto_pwhash_MEMLIMIT_INTERACTIVE)
    /// Limits a key file may ask for; a file asking for more is refused rather than run (it could stall the machine).
    public static let maximumOpsLimit: UInt64 = 16
    public static let maximumMemLimit = 1 << 30

    public static func deriveKey(passphrase: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimit: Int, length: Int = 32) throws(CryptoError) -> SecureBytes {
        Sodium.ensureInitialized()
        guard salt.count == saltByteCount else {
            throw CryptoError(.invalidArgument, Phrase("Argon2id salts are %1$@ bytes, not %2$@", String(saltByteCount), String(salt.count)))
        }
        guard opsLimit >= UInt64(crypto_pwhash_OPSLIMIT_MIN), opsLimit <= maximumOpsLimit,
            memLimit >= Int(crypto_pwhash_MEMLIMIT_MIN), memLimit <= maximumMemLimit
        else {
            throw CryptoError(
                .invalidArgument,
                Phrase(
                    "Argon2id limits (ops %1$@, memory %2$@ bytes) are outside what Nearcard accepts (ops ≤ %3$@, memory ≤ %4$@ bytes)",
                    String(opsLimit), String(memLimit), String(maximumOpsLimit), String(maximumMemLimit))
            )
        }
        var rc: Int32 = 0
        let key = SecureBytes(count: length) { out in
            rc = passphrase.withUnsafeBytes { p in
                crypto_pwhash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(length),
                    p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(passphrase.count),
                    salt, opsLimit, memLimit, crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard rc == 0 else { throw CryptoError(.library, Phrase("Argon2id failed (out of memory for %1$@ bytes?)", String(memLimit))) }
        return key
    }
}
