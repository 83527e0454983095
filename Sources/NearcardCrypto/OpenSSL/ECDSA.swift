internal import COpenSSL

/// The NIST curves did:key can name. Nearcard signs with P-256 only; P-384 and P-521 public keys
/// are decoded so that `nearcard did resolve` can show their documents.
public enum ECCurve: String, Sendable, CaseIterable {
    case p256 = "P-256"
    case p384 = "P-384"
    case p521 = "P-521"

    /// Bytes of one coordinate (and of a private scalar).
    public var coordinateByteCount: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }

    var nid: Int32 {
        switch self {
        case .p256: NID_X9_62_prime256v1
        case .p384: NID_secp384r1
        case .p521: NID_secp521r1
        }
    }

    var groupName: String {
        switch self {
        case .p256: "prime256v1"
        case .p384: "secp384r1"
        case .p521: "secp521r1"
        }
    }
}

/// An EC_GROUP for one curve, shared (EC_GROUP is read-only once built).
final class ECGroupHandle: @unchecked Sendable {
    let group: OpaquePointer

    private init(curve: ECCurve) {
        guard let g = EC_GROUP_new_by_curve_name(curve.nid) else { preconditionFailure("OpenSSL has no group for \(curve.rawValue)") }
        group = g
    }

    deinit { EC_GROUP_free(group) }

    static let p256 = ECGroupHandle(curve: .p256)
    static let p384 = ECGroupHandle(curve: .p384)
    static let p521 = ECGroupHandle(curve: .p521)

    static func of(_ curve: ECCurve) -> ECGroupHandle {
        switch curve {
        case .p256: p256
        case .p384: p384
        case .p521: p521
        }
    }
}

/// Owns an EVP_PKEY and frees it in `deinit`.
final class EVPKey: @unchecked Sendable {
    let pkey: OpaquePointer
    init(_ pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }
}

/// A public key on a NIST curve, validated on the curve when built.
public struct ECPublicKey: Sendable, Hashable, CustomStringConvertible {
    public let curve: ECCurve
    /// The uncompressed SEC1 point (0x04 ‖ x ‖ y).
    public let x963Representation: [UInt8]
    let key: EVPKey

    /// Decodes a SEC1 point, compressed (0x02/0x03 ‖ x) or uncompressed (0x04 ‖ x ‖ y); refuses points off the curve.
    public init(curve: ECCurve, sec1: [UInt8]) throws(CryptoError) {
        let n = curve.coordinateByteCount
        guard sec1.count == 1 + n || sec1.count == 1 + 2 * n else {
            throw CryptoError(
                .invalidKey,
                Phrase(
                    "a %1$@ public key is %2$@ bytes compressed or %3$@ uncompressed, not %4$@", curve.rawValue, String(1 + n), String(1 + 2 * n),
                    String(sec1.count)))
        }
        let group = ECGroupHandle.of(curve).group
        guard let point = EC_POINT_new(group) else { throw OpenSSL.error(.library, "EC_POINT_new failed") }
        defer { EC_POINT_free(point) }
        guard EC_POINT_oct2point(group, point, sec1, sec1.count, nil) == 1, EC_POINT_is_at_infinity(group, point) == 0 else {
            OpenSSL.clearErrors()
            throw CryptoError(.invalidKey, Phrase("the bytes are not a point on %1$@", curve.rawValue))
        }
        var uncompressed = [UInt8](repeating: 0, count: 1 + 2 * n)
        guard EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &uncompressed, uncompressed.count, nil) == uncompressed.count else {
            throw OpenSSL.error(.library, "EC_POINT_point2oct failed")
        }
        self.curve = curve
        self.x963Representation = uncompressed
        self.key = try Self.makeKey(curve: curve, uncompressed: uncompressed)
    }

    /// From JWK coordinates.
    public init(curve: ECCurve, x: [UInt8], y: [UInt8]) throws(CryptoError) {
        let n = curve.coordinateByteCount
        guard x.count == n, y.count == n else {
            throw CryptoError(
                .invalidKey, Phrase("%1$@ JWK coordinates are %2$@ bytes each, not %3$@ and %4$@", curve.rawValue, String(n), String(x.count), String(y.count)))
        }
        try self.init(curve: curve, sec1: [0x04] + x + y)
    }

    private static func makeKey(curve: ECCurve, uncompressed: [UInt8]) throws(CryptoError) -> EVPKey {
        try OpenSSL.keyFromData(curve: curve, uncompressedPublicKey: uncompressed, privateScalar: nil)
    }

    /// The SEC1 compressed point (0x02/0x03 ‖ x): what did:key carries.
    public var compressedRepresentation: [UInt8] {
        let n = curve.coordinateByteCount
        let yIsOdd = x963Representation[2 * n] & 1 == 1
        return [yIsOdd ? 0x03 : 0x02] + x963Representation[1...n]
    }

    public var x: [UInt8] { Array(x963Representation[1...curve.coordinateByteCount]) }
    public var y: [UInt8] { Array(x963Representation[(1 + curve.coordinateByteCount)...]) }

    public static func == (a: ECPublicKey, b: ECPublicKey) -> Bool {
        a.curve == b.curve && a.x963Representation == b.x963Representation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(curve)
        hasher.combine(x963Representation)
    }

    public var description: String { "ECPublicKey(\(curve.rawValue), \(Base64.encode(compressedRepresentation)))" }
}

/// ECDSA over P-256 with SHA-256 (OpenSSL libcrypto). Signatures are raw r ‖ s (64 bytes);
/// verifiers also take DER.
public enum P256 {
    public static let signatureByteCount = 64
    public static let privateKeyByteCount = 32

    public typealias PublicKey = ECPublicKey

    public final class PrivateKey: @unchecked Sendable, CustomStringConvertible {
        let key: EVPKey
        public let publicKey: ECPublicKey
        /// The public key as a did:key, encoded once (every card and proof names it).
        public let didKey: DIDKey

        /// A fresh key from OpenSSL's CSPRNG.
        public convenience init() {
            guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { preconditionFailure("EVP_PKEY_CTX_new_from_name(EC) failed") }
            defer { EVP_PKEY_CTX_free(ctx) }
            var pkey: OpaquePointer?
            guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1,
                EVP_PKEY_generate(ctx, &pkey) == 1, let pkey
            else { preconditionFailure("P-256 key generation failed") }
            let k = EVPKey(pkey)
            try! self.init(key: k)
        }

        /// From the 32-byte big-endian private scalar, which must lie in 1…n−1.
        public convenience init(rawRepresentation scalar: SecureBytes) throws(CryptoError) {
            guard scalar.count == P256.privateKeyByteCount else {
                throw CryptoError(.invalidKey, Phrase("a P-256 private key is 32 bytes, not %1$@", String(scalar.count)))
            }
            let group = ECGroupHandle.p256.group
            guard let d = scalar.withUnsafeBytes({ BN_bin2bn($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, BN_secure_new()) }) else {
                throw OpenSSL.error(.library, "BN_bin2bn failed")
            }
            defer { BN_clear_free(d) }
            guard BN_is_zero(d) == 0, BN_cmp(d, EC_GROUP_get0_order(group)) < 0 else {
                throw CryptoError(.invalidKey, Phrase("the P-256 private scalar is zero or not below the group order"))
            }
            guard let point = EC_POINT_new(group) else { throw OpenSSL.error(.library, "EC_POINT_new failed") }
            defer { EC_POINT_free(point) }
            var pub = [UInt8](repeating: 0, count: 65)
            guard EC_POINT_mul(group, point, d, nil, nil, nil) == 1,
                EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &pub, 65, nil) == 65
            else {
                throw OpenSSL.error(.library, "computing the P-256 public key failed")
            }
            let key = try OpenSSL.keyFromData(curve: .p256, uncompressedPublicKey: pub, privateScalar: d)
            try self.init(key: key)
        }

        private init(key: EVPKey) throws(CryptoError) {
            self.key = key
            var pub = [UInt8](repeating: 0, count: 65)
            var len = 0
            guard EVP_PKEY_get_octet_string_param(key.pkey, OSSL_PKEY_PARAM_PUB_KEY, &pub, 65, &len) == 1, len == 65 else {
                throw OpenSSL.error(.library, "reading the P-256 public key failed")
            }
            self.publicKey = try ECPublicKey(curve: .p256, sec1: pub)
            self.didKey = DIDKey(publicKey)
        }

        /// The 32-byte private scalar (for key files only).
        public var rawRepresentation: SecureBytes {
            var bn: OpaquePointer?
            guard EVP_PKEY_get_bn_param(key.pkey, OSSL_PKEY_PARAM_PRIV_KEY, &bn) == 1, let bn else {
                preconditionFailure("a P-256 private key without a scalar")
            }
            defer { BN_clear_free(bn) }
            return SecureBytes(count: 32) { out in
                _ = BN_bn2binpad(bn, out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
            }
        }

        /// Signs SHA-256(message); returns raw r ‖ s (64 bytes). ECDSA is randomised.
        public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
            guard let md = EVP_MD_CTX_new() else { throw OpenSSL.error(.library, "EVP_MD_CTX_new failed") }
            defer { EVP_MD_CTX_free(md) }
            var der = [UInt8](repeating: 0, count: 80)
            var derLength = der.count
            guard EVP_DigestSignInit(md, nil, EVP_sha256(), nil, key.pkey) == 1,
                EVP_DigestSign(md, &der, &derLength, message, message.count) == 1
            else {
                throw OpenSSL.error(.library, "ECDSA signing failed")
            }
            guard let raw = ECDSASignature.raw(fromDER: der[0..<derLength], coordinateByteCount: 32) else {
                throw CryptoError(.library, Phrase("OpenSSL produced a signature Nearcard cannot parse"))
            }
            return raw
        }

        public var description: String { "P256.PrivateKey(public: \(Base64.encode(publicKey.compressedRepresentation)))" }
    }
}

extension ECPublicKey {
    /// Verifies an ECDSA/SHA-256 signature, raw r ‖ s (exactly 2×coordinate bytes) or DER.
    /// OpenSSL checks DER strictly (no BER), and r, s in 1…n−1.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        // A 64-byte string is raw r ‖ s, unless it fails as such and is shaped like DER
        // (a DER signature with short r and s can also be 64 bytes long).
        if signature.count == 2 * curve.coordinateByteCount {
            if verifyDER(ECDSASignature.der(fromRaw: signature), message: message) { return true }
            return ECDSASignature.looksLikeDER(signature) && verifyDER(signature, message: message)
        }
        return verifyDER(signature, message: message)
    }

    /// Verifies a raw r ‖ s signature only (the IEEE P1363 form JWS uses).
    public func isValidRawSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 2 * curve.coordinateByteCount else { return false }
        return verifyDER(ECDSASignature.der(fromRaw: signature), message: message)
    }

    /// Verifies a DER signature only.
    public func isValidDERSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        verifyDER(signature, message: message)
    }

    private func verifyDER(_ der: [UInt8], message: [UInt8]) -> Bool {
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        let digest: OpaquePointer? =
            switch curve {
            case .p256: EVP_sha256()
            case .p384: EVP_sha384()
            case .p521: EVP_sha512()
            }
        guard EVP_DigestVerifyInit(md, nil, digest, nil, key.pkey) == 1 else {
            OpenSSL.clearErrors()
            return false
        }
        let rc = EVP_DigestVerify(md, der, der.count, message, message.count)
        if rc != 1 { OpenSSL.clearErrors() }
        return rc == 1
    }
}

/// Conversions between the DER and raw (IEEE P1363) forms of an ECDSA signature.
public enum ECDSASignature {
    /// DER `SEQUENCE { INTEGER r, INTEGER s }` from raw r ‖ s (minimal INTEGER encodings).
    public static func der(fromRaw raw: [UInt8]) -> [UInt8] {
        let half = raw.count / 2
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var v = Array(bytes.drop { $0 == 0 })
            if v.isEmpty { v = [0] }
            if v[0] & 0x80 != 0 { v.insert(0, at: 0) }
            return [0x02] + length(v.count) + v
        }
        func length(_ n: Int) -> [UInt8] { n < 0x80 ? [UInt8(n)] : [0x81, UInt8(n)] }
        let body = integer(raw[0..<half]) + integer(raw[half...])
        return [0x30] + length(body.count) + body
    }

    /// Raw r ‖ s from a DER signature; nil when it is not strict DER or a value is too long.
    public static func raw<C: Collection>(fromDER der: C, coordinateByteCount n: Int) -> [UInt8]? where C.Element == UInt8 {
        let d = Array(der)
        var i = 0
        func readLength() -> Int? {
            guard i < d.count else { return nil }
            let first = d[i]
            i += 1
            if first < 0x80 { return Int(first) }
            guard first == 0x81, i < d.count, d[i] >= 0x80 else { return nil }
            defer { i += 1 }
            return Int(d[i])
        }
        func readInteger() -> [UInt8]? {
            guard i < d.count, d[i] == 0x02 else { return nil }
            i += 1
            guard let len = readLength(), len > 0, i + len <= d.count else { return nil }
            var v = Array(d[i..<(i + len)])
            i += len
            if v.count > 1, v[0] == 0 {
                guard v[1] & 0x80 != 0 else { return nil }
                v.removeFirst()
            } else if v[0] & 0x80 != 0 {
                return nil
            }
            guard v.count <= n else { return nil }
            return [UInt8](repeating: 0, count: n - v.count) + v
        }
        guard d.first == 0x30 else { return nil }
        i = 1
        guard let total = readLength(), i + total == d.count,
            let r = readInteger(), let s = readInteger(), i == d.count
        else { return nil }
        return r + s
    }

    static func looksLikeDER(_ sig: [UInt8]) -> Bool {
        sig.count >= 8 && sig[0] == 0x30 && Int(sig[1]) == sig.count - 2
    }
}
