import FuzzSupport

/// The session state machine as responder — message 1 through the dispatch, then resumed, as a listener
/// runs it — fed the input as frames; and the decoder of the messages a session carries once decrypted.
/// Whatever arrives ends in frames to send, a decision to ask for, or a typed failure.
///
/// The first byte says what the input is. Odd: one decrypted session message. Even: frames (`Fuzz.split`)
/// for a responder whose card turns the common-contacts step (§22) on when bit 1 is set, off when not
/// (off, the responder makes its card ahead of the initiator's acceptance: `prepareCard`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Fuzz.bytes(data, size)
    guard let mode = input.first else { return 0 }
    if mode & 1 == 1 {
        _ = try? ExchangeMessage(decoding: Array(input.dropFirst()))
        return 0
    }
    let card = mode & 2 == 2 ? responderCardWithCommonContacts : responderCard
    let frames = Fuzz.split(Array(input.dropFirst()))
    guard let first = frames.first, let (opened, actions) = Fuzz.responder(reading: first) else { return 0 }
    var machine = opened
    Fuzz.serve(&machine, actions, card: card, message: "hi")
    for frame in frames.dropFirst() {
        Fuzz.serve(&machine, machine.receive(frame, now: Fuzz.now), card: card, message: "hi")
    }
    return 0
}

let responderCard = Fuzz.localCard(presenceKey: Fuzz.mePresenceKey)
let responderCardWithCommonContacts = Fuzz.localCard(presenceKey: Fuzz.mePresenceKey, commonContacts: Fuzz.commonContacts)
