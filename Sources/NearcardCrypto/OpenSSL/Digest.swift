internal import COpenSSL

extension OpenSSL {
    /// SHA-256 as libcrypto computes it: with the CPU's SHA extensions where it has them, several times
    /// faster than libsodium's portable code on inputs of a few kilobytes (a card's payload, hashed for
    /// every exchange the store records). The digest is fetched from the provider once and shared:
    /// libcrypto's method objects are safe to use from any thread.
    nonisolated(unsafe) private static let sha256Method: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    /// nil only if libcrypto cannot give SHA-256 at all (the caller then hashes with libsodium).
    static func sha256(_ data: [UInt8]) -> [UInt8]? {
        guard let md = sha256Method else { return nil }
        var out = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        guard EVP_Digest(data, data.count, &out, &length, md, nil) == 1, length == UInt32(SHA256.byteCount) else {
            clearErrors()
            return nil
        }
        return out
    }
}
