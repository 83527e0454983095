internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// Turns OpenSSL's thread-local error queue into a `CryptoError` carrying OpenSSL's own words,
/// and empties the queue so a stale error never attaches to a later call.
enum OpenSSL {
    static func error(_ kind: CryptoError.Kind, _ what: String) -> CryptoError {
        let detail = drainErrors()
        return CryptoError(kind, detail.isEmpty ? what : "\(what) (\(detail))")
    }

    /// OpenSSL's own words for the queued errors ("" when there are none), emptying the queue.
    static func drainErrors() -> String {
        var detail: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            detail.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return detail.joined(separator: "; ")
    }

    static func clearErrors() { ERR_clear_error() }

    /// OSSL_PARAM keeps its key names by reference, so they live in permanent C strings
    /// (written once, never mutated: safe to share).
    nonisolated(unsafe) private static let groupNameKey = UnsafePointer(strdup(OSSL_PKEY_PARAM_GROUP_NAME)!)
    nonisolated(unsafe) private static let publicKeyKey = UnsafePointer(strdup(OSSL_PKEY_PARAM_PUB_KEY)!)
    nonisolated(unsafe) private static let privateKeyKey = UnsafePointer(strdup(OSSL_PKEY_PARAM_PRIV_KEY)!)

    /// Builds an EC EVP_PKEY from an uncompressed public point and, for a key pair, the private scalar.
    /// OSSL_PARAM_BLD holds its inputs by reference until `to_param`, so all of it happens inside
    /// the scopes that keep those buffers alive.
    static func keyFromData(curve: ECCurve, uncompressedPublicKey: [UInt8], privateScalar: OpaquePointer?) throws(CryptoError) -> EVPKey {
        let result: Result<EVPKey, CryptoError> = curve.groupName.withCString { groupName in
            uncompressedPublicKey.withUnsafeBufferPointer { pub in
                guard let bld = OSSL_PARAM_BLD_new() else { return .failure(error(.library, "OSSL_PARAM_BLD_new failed")) }
                defer { OSSL_PARAM_BLD_free(bld) }
                guard OSSL_PARAM_BLD_push_utf8_string(bld, groupNameKey, groupName, 0) == 1,
                    OSSL_PARAM_BLD_push_octet_string(bld, publicKeyKey, pub.baseAddress, pub.count) == 1
                else {
                    return .failure(error(.library, "building key parameters failed"))
                }
                if let privateScalar, OSSL_PARAM_BLD_push_BN(bld, privateKeyKey, privateScalar) != 1 {
                    return .failure(error(.library, "building key parameters failed"))
                }
                guard let params = OSSL_PARAM_BLD_to_param(bld) else { return .failure(error(.library, "OSSL_PARAM_BLD_to_param failed")) }
                defer { OSSL_PARAM_free(params) }
                guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return .failure(error(.library, "EVP_PKEY_CTX_new_from_name failed")) }
                defer { EVP_PKEY_CTX_free(ctx) }
                let selection = privateScalar == nil ? nearcard_evp_pkey_public_key_selection() : nearcard_evp_pkey_keypair_selection()
                var pkey: OpaquePointer?
                guard EVP_PKEY_fromdata_init(ctx) == 1, EVP_PKEY_fromdata(ctx, &pkey, selection, params) == 1, let pkey else {
                    let detail = drainErrors()
                    return .failure(
                        CryptoError(
                            .invalidKey,
                            detail.isEmpty
                                ? Phrase("OpenSSL refused the %1$@ key", curve.rawValue)
                                : Phrase("OpenSSL refused the %1$@ key (%2$@)", curve.rawValue, detail)))
                }
                return .success(EVPKey(pkey))
            }
        }
        return try result.get()
    }
}
