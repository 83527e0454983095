import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Responder: Noise message 3 completes the handshake.
    mutating func receiveInAwaitingMessage3(_ noise: NoiseXXHandshake, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var noise = noise
        try noise.readEmptyMessage(frame)
        state = .awaitingHello(try EstablishedChannel(completed: noise))
        return []
    }
}
