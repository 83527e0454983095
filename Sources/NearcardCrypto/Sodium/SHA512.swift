internal import CSodium

/// SHA-512 (libsodium `crypto_hash_sha512`): the 64 uniform bytes ristretto255's hash-to-group takes.
public enum SHA512 {
    public static let byteCount = 64

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_hash_sha512(&out, data, UInt64(data.count))
        return out
    }
}
