import FuzzSupport

/// Compact JWS/JWT parsing and verification (ES256 and EdDSA, keys from did:key kid/iss), and the
/// credential reader the QR router uses for a scanned VC JWT.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWT(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let token = String(decoding: Fuzz.bytes(data, size), as: UTF8.self)
    _ = try? CompactJWS(parsing: token)
    _ = try? JWTVerifier(now: Double(Fuzz.now)).verify(token)
    _ = try? JWTVerifier(now: Double(Fuzz.now)).verify(token, key: DIDKey(Fuzz.peer.p256.publicKey))
    return 0
}
