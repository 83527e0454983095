import FuzzSupport

/// The session state machine as responder, fed the input as frames; and the decoder of the messages
/// a session carries once decrypted. Whatever arrives ends in frames to send, a decision to ask
/// for, or a typed failure.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Fuzz.bytes(data, size)
    // Odd first byte: the input is one decrypted session message.
    if input.first.map({ $0 & 1 == 1 }) == true {
        _ = try? ExchangeMessage(decoding: Array(input.dropFirst()))
        return 0
    }
    var machine = ExchangeStateMachine(role: .responder, local: Fuzz.party(Fuzz.me), ephemeralKey: Fuzz.me.x25519,
                                       sasNonce: [UInt8](repeating: 3, count: SAS.nonceByteCount),
                                       mailboxToken: [UInt8](repeating: 4, count: RouteRecord.mailboxTokenByteCount))
    _ = machine.start()
    for frame in Fuzz.split(Array(input.dropFirst())) {
        for action in machine.receive(frame, now: Fuzz.now) {
            if case .identified = action { _ = machine.decide(accept: true, message: "hi", now: Fuzz.now) }
        }
    }
    return 0
}
