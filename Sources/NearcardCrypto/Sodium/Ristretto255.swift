internal import CSodium

/// The ristretto255 prime-order group (RFC 9496), through libsodium's `crypto_core_ristretto255_*` and
/// `crypto_scalarmult_ristretto255`. Private common contacts (docs/PROTOCOL.md §22) hash DIDs into it
/// and blind them with secret scalars.
///
/// Every `Point` value is a valid, canonical encoding of an element other than the identity: bytes
/// from a peer become a `Point` only through `init(rawRepresentation:)`, which checks them, so code
/// that holds a `Point` never has to ask again.
public enum Ristretto255 {
    /// An element's encoding (`crypto_core_ristretto255_BYTES`).
    public static let pointByteCount = Int(crypto_core_ristretto255_BYTES)
    /// A scalar's encoding, little-endian (`crypto_core_ristretto255_SCALARBYTES`).
    public static let scalarByteCount = Int(crypto_core_ristretto255_SCALARBYTES)
    /// The input of hash-to-group: 64 uniformly random bytes (`crypto_core_ristretto255_HASHBYTES`).
    public static let hashByteCount = Int(crypto_core_ristretto255_HASHBYTES)

    /// A group element other than the identity, in its canonical 32-byte encoding (RFC 9496 §4.3.2).
    /// Equal elements have equal encodings, so `==` and hashing on the bytes are group equality.
    public struct Point: Sendable, Hashable, CustomStringConvertible {
        public let rawRepresentation: [UInt8]

        /// Checks `rawRepresentation`: 32 bytes that decode (canonical, RFC 9496 §4.3.1), and not the
        /// identity (all zeros: no honest party ever sends it, and any multiple of it is itself).
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            Sodium.ensureInitialized()
            guard rawRepresentation.count == Ristretto255.pointByteCount else {
                throw CryptoError(
                    .invalidKey, Phrase("a ristretto255 element is %1$@ bytes, not %2$@", String(Ristretto255.pointByteCount), String(rawRepresentation.count)))
            }
            guard crypto_core_ristretto255_is_valid_point(rawRepresentation) == 1 else {
                throw CryptoError(.invalidKey, Phrase("%1$@ is not the canonical encoding of a ristretto255 element", Base64.urlEncode(rawRepresentation)))
            }
            guard sodium_is_zero(rawRepresentation, rawRepresentation.count) == 0 else {
                throw CryptoError(.invalidKey, Phrase("the ristretto255 identity element is refused (it blinds nothing)"))
            }
            self.rawRepresentation = rawRepresentation
        }

        /// Bytes libsodium produced and vouched for.
        private init(trusted: [UInt8]) { rawRepresentation = trusted }

        /// Hash-to-group (RFC 9496 §4.3.4, `crypto_core_ristretto255_from_hash`): the element derived
        /// from 64 uniformly distributed bytes, e.g. a SHA-512 digest. Nobody knows its discrete log.
        public init(fromHash hash: [UInt8]) throws(CryptoError) {
            Sodium.ensureInitialized()
            guard hash.count == Ristretto255.hashByteCount else {
                throw CryptoError(
                    .invalidArgument, Phrase("ristretto255 hash-to-group takes %1$@ bytes, not %2$@", String(Ristretto255.hashByteCount), String(hash.count)))
            }
            var out = [UInt8](repeating: 0, count: Ristretto255.pointByteCount)
            _ = crypto_core_ristretto255_from_hash(&out, hash)
            // The map reaches the identity only from inputs nobody can find (it would break SHA-512).
            guard sodium_is_zero(out, out.count) == 0 else {
                throw CryptoError(.invalidArgument, Phrase("this hash maps to the ristretto255 identity"))
            }
            self.init(trusted: out)
        }

        /// A uniformly random element (`crypto_core_ristretto255_random`), whose discrete log nobody
        /// knows: indistinguishable from a blinded element, so it pads a blinded set.
        public static func random() -> Point {
            Sodium.ensureInitialized()
            while true {
                var out = [UInt8](repeating: 0, count: Ristretto255.pointByteCount)
                crypto_core_ristretto255_random(&out)
                if sodium_is_zero(out, out.count) == 0 { return Point(trusted: out) }
            }
        }

        fileprivate static func multiplied(_ out: [UInt8]) -> Point { Point(trusted: out) }

        public var description: String { "Ristretto255.Point(\(Base64.urlEncode(rawRepresentation)))" }
    }

    /// A secret scalar, non-zero and canonical (less than the group order ℓ), kept in `SecureBytes`
    /// and so wiped when the last reference goes. `description` never shows it.
    public struct Scalar: Sendable, CustomStringConvertible {
        let secret: SecureBytes

        /// A fresh random non-zero scalar (`crypto_core_ristretto255_scalar_random`).
        public static func random() -> Scalar {
            Sodium.ensureInitialized()
            return Scalar(
                checked: SecureBytes(count: Ristretto255.scalarByteCount) { out in
                    crypto_core_ristretto255_scalar_random(out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                })
        }

        /// A given scalar (tests and vectors): 32 bytes little-endian, less than ℓ, not zero. A
        /// non-canonical scalar would be reduced silently by some implementations and not by others.
        public init(secret: SecureBytes) throws(CryptoError) {
            Sodium.ensureInitialized()
            guard secret.count == Ristretto255.scalarByteCount else {
                throw CryptoError(
                    .invalidKey, Phrase("a ristretto255 scalar is %1$@ bytes, not %2$@", String(Ristretto255.scalarByteCount), String(secret.count)))
            }
            let isZero = secret.withUnsafeBytes { sodium_is_zero($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) == 1 }
            guard !isZero else { throw CryptoError(.invalidKey, Phrase("a ristretto255 scalar of zero is refused")) }
            // Canonical when reducing it modulo ℓ changes nothing.
            let wide = SecureBytes(count: 64) { out in secret.withUnsafeBytes { out.copyMemory(from: $0) } }
            let reduced = SecureBytes(count: Ristretto255.scalarByteCount) { out in
                wide.withUnsafeBytes { w in
                    crypto_core_ristretto255_scalar_reduce(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        w.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            guard reduced.constantTimeEquals(secret) else {
                throw CryptoError(.invalidKey, Phrase("a ristretto255 scalar must be less than the group order (canonical, little-endian)"))
            }
            self.secret = secret
        }

        private init(checked: SecureBytes) { secret = checked }

        /// `point` multiplied by this scalar (`crypto_scalarmult_ristretto255`). libsodium refuses a
        /// product that is the identity; with a non-zero scalar below ℓ and a `Point` (never the
        /// identity) in a group of prime order ℓ that cannot happen, so a refusal is reported, not trusted.
        public func multiply(_ point: Point) throws(CryptoError) -> Point {
            var out = [UInt8](repeating: 0, count: Ristretto255.pointByteCount)
            let rc = secret.withUnsafeBytes { s in
                crypto_scalarmult_ristretto255(&out, s.baseAddress!.assumingMemoryBound(to: UInt8.self), point.rawRepresentation)
            }
            guard rc == 0 else {
                throw CryptoError(.library, Phrase("ristretto255 scalar multiplication refused %1$@ (the product is the identity)", "\(point)"))
            }
            return Point.multiplied(out)
        }

        public var description: String { "Ristretto255.Scalar(redacted)" }
    }
}
