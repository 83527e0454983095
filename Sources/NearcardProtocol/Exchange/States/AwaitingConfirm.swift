import NearcardCrypto
import NearcardModel

extension ExchangeStateMachine {
    /// Initiator: stored unconfirmed, done sent: the responder's confirm.
    mutating func receiveInAwaitingConfirm(_ channel: EstablishedChannel, frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        var channel = channel
        let message = try decrypt(frame, on: &channel)
        state = .awaitingConfirm(channel)
        guard case .confirm = message else { return try unexpected(message) }
        state = .completed
        return [.confirmed]
    }
}
