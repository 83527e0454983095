import FuzzSupport

/// The session state machine as responder — message 1 through the dispatch, then resumed, as a listener
/// runs it — fed the input as frames; and the decoder of the messages a session carries once decrypted.
/// Whatever arrives ends in frames to send, a decision to ask for, or a typed failure.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Fuzz.bytes(data, size)
    // Odd first byte: the input is one decrypted session message.
    if input.first.map({ $0 & 1 == 1 }) == true {
        _ = try? ExchangeMessage(decoding: Array(input.dropFirst()))
        return 0
    }
    let frames = Fuzz.split(Array(input.dropFirst()))
    guard let first = frames.first, let (opened, actions) = Fuzz.responder(reading: first) else { return 0 }
    var machine = opened
    Fuzz.serve(&machine, actions, message: "hi")
    for frame in frames.dropFirst() {
        Fuzz.serve(&machine, machine.receive(frame, now: Fuzz.now), message: "hi")
    }
    return 0
}
