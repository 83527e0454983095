import FuzzSupport

/// The Noise handshakes a responder runs, with the payloads decrypted; a bad message is a typed error,
/// never a crash. XX (an exchange): message 1 and message 3 from the input (message 2 is ours), the
/// static key chosen after message 1 as the dispatch chooses it. IK (a mail session): message 1 from the
/// input, read with our long-term key, then our answer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNoise(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let messages = Fuzz.split(Fuzz.bytes(data, size), limit: 2)
    guard let first = messages.first else { return 0 }
    var ik = NoiseIKHandshake(responderWith: Fuzz.me.x25519, prologue: SessionKind.prologue, ephemeralKey: Fuzz.responderEphemeral)
    if (try? ik.readMessage(first)) != nil {
        precondition(ik.isResponderReadyToAnswer)
        if (try? ik.writeMessage(payload: [])) != nil {
            precondition(ik.isComplete && (try? ik.split()) != nil)
        }
    }
    var responder = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: nil, ephemeralKey: Fuzz.responderEphemeral)
    guard (try? responder.readMessage(first)) != nil else { return 0 }
    responder.useStaticKey(Fuzz.responderSessionKey)
    guard (try? responder.writeMessage(payload: [])) != nil, messages.count > 1 else { return 0 }
    if (try? responder.readMessage(messages[1])) != nil {
        precondition(responder.isComplete && responder.remoteStatic != nil && (try? responder.split()) != nil)
    }
    return 0
}
