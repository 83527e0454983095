import FuzzSupport

/// A received card: the JSON parser with the session's limits, then the payload decoder and the
/// full verification (signature over canonical bytes, bindings, the SD-JWT disclosures).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPayload(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Fuzz.bytes(data, size)
    guard let json = try? JSONParser(maximumDepth: ProtocolLimits.maximumJSONDepth, maximumLength: ProtocolLimits.maximumMessageLength).parse(input) else { return 0 }
    let context = PayloadVerificationContext(expectedSenderDID: Fuzz.peer.publicIdentity(name: nil).did,
                                             receiverDID: Fuzz.me.publicIdentity(name: nil).did,
                                             sessionBinding: [UInt8](repeating: 1, count: 32), peerStaticKey: nil,
                                             ephemeralMessage: "hi", now: Fuzz.now, maximumSkew: 300, requireDisclosureProof: true)
    _ = ProximityPayload.verify(json: json, context: context)
    _ = JCS.canonicalize(json)
    return 0
}
