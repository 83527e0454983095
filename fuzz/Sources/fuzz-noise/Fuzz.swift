import FuzzSupport

/// The Noise XX responder: message 1 and message 3 from the input (message 2 is ours), with the
/// payloads decrypted; a bad message is a typed error, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNoise(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let messages = Fuzz.split(Fuzz.bytes(data, size), limit: 2)
    var responder = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: Fuzz.me.x25519,
                                     ephemeralKey: responderEphemeral)
    guard let first = messages.first, (try? responder.readMessage(first)) != nil else { return 0 }
    guard (try? responder.writeMessage(payload: [])) != nil, messages.count > 1 else { return 0 }
    if (try? responder.readMessage(messages[1])) != nil {
        precondition(responder.isComplete && responder.remoteStatic != nil)
    }
    return 0
}

nonisolated(unsafe) let responderEphemeral = try! X25519.PrivateKey(secret: SecureBytes([UInt8](repeating: 9, count: 32)))
