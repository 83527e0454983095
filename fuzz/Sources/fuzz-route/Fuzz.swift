import FuzzSupport

/// The sealed-route opener. Random bytes rarely open a sealed box, so the input is usually sealed
/// to our key first (the attacker can do that too: the key is public) and the opener parses and
/// checks what is inside; with an odd first byte the input is the sealed text itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoute(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Fuzz.bytes(data, size)
    let body = Array(input.dropFirst())
    let sealed = input.first.map({ $0 & 1 == 1 }) == true
        ? String(decoding: body, as: UTF8.self)
        : Base64.encode(SealedBox.seal(body, to: Fuzz.me.x25519.publicKey))
    _ = SealedRoute.open(sealed, with: Fuzz.me.x25519, expectedIssuer: Fuzz.peer.publicIdentity(name: nil).did,
                         expectedRecipient: Fuzz.me.publicIdentity(name: nil).did, expectedSignKey: Fuzz.peer.ed25519.publicKey, now: Fuzz.now)
    return 0
}
